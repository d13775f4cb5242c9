public import PushlineCore

/// What is particular to one provider, in one type: how its answers read, what its sent lines
/// call its id for a request, what a stop message tells the operator to check, and the settings
/// a pipeline may leave out. `Provider.profile` is the one switch that picks a profile, and it
/// is exhaustive: a new provider does not compile until it has one (nothing falls back to FCM).
public protocol ProviderProfile: Sendable {
    static var provider: Provider { get }
    /// The provider's name in messages ("APNs").
    static var displayName: String { get }
    /// The key under which a sent line gives the provider's id for the request.
    static var sentIDKey: StaticString { get }
    /// What to check when the provider refuses our credentials (said in the stop message).
    static var credentialHint: String { get }
    /// `connections`, `streams` and `rate` where a pipeline leaves them out (docs/pipeline.md;
    /// the reasons are PROVIDERS.md's).
    static var defaultConnections: Int { get }
    static var defaultStreams: Int { get }
    static var defaultRate: String { get }
    /// Reads one answer: its outcome, the reason on the wire (unknown reasons kept, bounded) and
    /// any retry hint.
    static func classify(_ answer: ProviderAnswer) -> ResponseClassification
}

/// An answer as a lane read it, for a profile to classify: a view valid during the call (its
/// `sentTarget` points into the request's bytes). `status` 0: no HTTP answer.
public struct ProviderAnswer {
    public var status: Int
    public var body: [UInt8]
    /// The transport cut the body at this many bytes (the answer is then read by its status).
    public var bodyTruncatedAt: Int?
    /// The id the provider's header gave the message (`apns-id`, `x-amzn-RequestId`).
    public var messageID: [UInt8]?
    public var retryAfter: [UInt8]?
    /// The request's target as it was sent (ADM names a replacement registration id beside it).
    public var sentTarget: UnsafeRawBufferPointer

    public init(
        status: Int, body: [UInt8] = [], bodyTruncatedAt: Int? = nil, messageID: [UInt8]? = nil, retryAfter: [UInt8]? = nil,
        sentTarget: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) {
        self.status = status
        self.body = body
        self.bodyTruncatedAt = bodyTruncatedAt
        self.messageID = messageID
        self.retryAfter = retryAfter
        self.sentTarget = sentTarget
    }
}

extension Provider {
    /// This provider's profile.
    public var profile: any ProviderProfile.Type {
        switch self {
        case .apns: APNsProfile.self
        case .fcm: FCMProfile.self
        case .webpush: WebPushProfile.self
        case .adm: ADMProfile.self
        case .webhook: WebhookProfile.self
        }
    }
}
