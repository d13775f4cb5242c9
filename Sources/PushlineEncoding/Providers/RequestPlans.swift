
/// Where APNs requests go.
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production, sandbox

    public var host: String {
        switch self {
        case .production: "api.push.apple.com"
        case .sandbox: "api.sandbox.push.apple.com"
        }
    }
}

/// Everything needed to encode an APNs request for one device, fixed per campaign.
public struct APNsPlan: Sendable {
    public var payload: PayloadNode
    /// `apns-push-type`: alert or background in this version.
    public var pushType: String
    public var priority: Int
    public var topic: String
    /// Absolute UNIX seconds for `apns-expiration`, when the pipeline sets an expiry.
    public var expiration: Int?
    /// `apns-collapse-id`, at most 64 bytes once rendered.
    public var collapseID: TemplatedValue?
    public var environment: APNsEnvironment
    public var payloadLimit: Int

    /// `https://api.push.apple.com/3/device/` — the token follows.
    var urlPrefix: [UInt8] { Array("\"https://\(environment.host)/3/device/".utf8) }
}

/// Everything needed to encode an FCM v1 request for one device, fixed per campaign.
public struct FCMPlan: Sendable {
    /// Members of `message` other than the target (`token`).
    public var message: [PayloadMember]
    public var projectID: String
    public var payloadLimit: Int

    var url: String { "https://fcm.googleapis.com/v1/projects/\(projectID)/messages:send" }
}
