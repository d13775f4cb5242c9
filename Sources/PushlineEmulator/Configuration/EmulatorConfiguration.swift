/// Everything a `ProviderEmulator` needs, as values: accounts, faults, limits, TLS identity.
public struct EmulatorConfiguration: Sendable {
    /// The address to listen on. Only loopback makes sense for a test server.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port; `ProviderEmulator.port` reports the bound one.
    public var port: Int = 0
    /// APNs is served when set (`POST /3/device/:token`).
    public var apns: APNsAccount?
    /// FCM v1 and its OAuth token endpoint are served when set.
    public var fcm: FCMAccount?
    /// Web Push is served when set (`POST /push/<id>` for each subscription).
    public var webPush: WebPushAccount?
    /// Appends `{"subscription":"<id>","plaintext":<JSON>}` for every delivered Web Push
    /// message to this file (created 0600 when missing).
    public var recordWebPush: String?
    /// ADM (`POST /messaging/registrations/<id>/messages`) and its token endpoint
    /// (`POST /auth/O2/token`) are served when set.
    public var adm: ADMAccount?
    /// Appends `{"registration_id":"<id>","body":<JSON>}` for every ADM message answered 200.
    public var recordADM: String?
    /// The Standard Webhooks receiver (`POST /webhooks/<channel>`) is served when set.
    public var webhooks: WebhookAccount?
    /// Appends `{"id":"<webhook-id>","path":"<channel>","body":<JSON>}` for every first delivery
    /// of a webhook (not for duplicates).
    public var recordWebhooks: String?
    /// How far a `webhook-timestamp` may be from the emulator's clock (Standard Webhooks: 5 minutes).
    public var webhookToleranceSeconds: Int = 300
    /// Webhook ids remembered to tell a retry from a first delivery (and to number its
    /// attempts); past this the oldest are forgotten. About 70 MB for the default million.
    public var maxRememberedWebhookIDs: Int = 1 << 20
    /// Webhook bodies above this are not buffered (413): an email's HTML and text bodies may each
    /// be 100 KB before JSON escaping, far above the push providers' bodies.
    public var maxWebhookBodyBytes: Int = 1 << 20
    public var faults: FaultPlan = FaultPlan()
    public var streams: StreamLimits = StreamLimits()
    /// The server certificate and key; `TLSIdentity.generate()` makes a fresh self-signed one.
    public var tls: TLSIdentity
    /// Lifetime of the access tokens the OAuth endpoint issues (Google's is 3599 s).
    public var accessTokenLifetimeSeconds: Int = 3599
    /// Provider tokens older than this are `ExpiredProviderToken` (APNs: one hour).
    public var providerTokenMaxAgeSeconds: Int = 3600
    /// How far in the future an `iat` may be (clock skew between sender and server).
    public var clockSkewSeconds: Int = 60
    public var clock: EmulatorClock = .system
    /// Event-loop threads; 0 means one per core.
    public var threads: Int = 0
    /// Request bodies above this are not buffered (the answer is 413 PayloadTooLarge / 400).
    public var maxRequestBodyBytes: Int = 65_536
    /// How long `stop()` lets open streams finish after GOAWAY before closing connections.
    public var shutdownGraceMilliseconds: Int = 2_000

    public init(tls: TLSIdentity) {
        self.tls = tls
    }

    public static let portRange = 0...65_535
    public static let threadRange = 0...64

    /// Refuses values the server cannot honour; called by `ProviderEmulator.start`.
    public func validate() throws(EmulatorError) {
        if !Self.portRange.contains(port) { throw .invalidConfiguration("port must be between 0 and 65535; got \(port)") }
        if !Self.threadRange.contains(threads) { throw .invalidConfiguration("threads must be between 0 and 64; got \(threads)") }
        if !(1...(1 << 24)).contains(maxRequestBodyBytes) { throw .invalidConfiguration("maxRequestBodyBytes must be between 1 and 16777216; got \(maxRequestBodyBytes)") }
        if !(1...86_400 * 7).contains(accessTokenLifetimeSeconds) { throw .invalidConfiguration("accessTokenLifetimeSeconds must be between 1 and 604800; got \(accessTokenLifetimeSeconds)") }
        if !(1...86_400).contains(providerTokenMaxAgeSeconds) { throw .invalidConfiguration("providerTokenMaxAgeSeconds must be between 1 and 86400; got \(providerTokenMaxAgeSeconds)") }
        if !(0...3_600).contains(clockSkewSeconds) { throw .invalidConfiguration("clockSkewSeconds must be between 0 and 3600; got \(clockSkewSeconds)") }
        if !(0...600_000).contains(shutdownGraceMilliseconds) { throw .invalidConfiguration("shutdownGraceMilliseconds must be between 0 and 600000; got \(shutdownGraceMilliseconds)") }
        try streams.validate()
        try faults.validate()
        if let apns {
            if apns.teamID.isEmpty || apns.keyID.isEmpty || apns.topic.isEmpty { throw .invalidConfiguration("APNs team id, key id and topic must not be empty") }
        }
        if let fcm {
            if fcm.projectID.isEmpty || fcm.clientEmail.isEmpty { throw .invalidConfiguration("FCM project id and client email must not be empty") }
        }
        if let problem = webPush?.problem { throw .invalidConfiguration(problem) }
        if recordWebPush?.isEmpty == true { throw .invalidConfiguration("the Web Push record file must not be empty") }
        if recordADM?.isEmpty == true { throw .invalidConfiguration("the ADM record file must not be empty") }
        if recordWebhooks?.isEmpty == true { throw .invalidConfiguration("the webhook record file must not be empty") }
        if let adm, adm.clientID.isEmpty || adm.clientSecret.isEmpty { throw .invalidConfiguration("ADM client id and secret must not be empty") }
        if let webhooks, !WebhookSecret.keyLengths.contains(webhooks.key.count) {
            throw .invalidConfiguration("the webhook key must be \(WebhookSecret.keyLengths.lowerBound) to \(WebhookSecret.keyLengths.upperBound) bytes; got \(webhooks.key.count)")
        }
        if !(0...86_400).contains(webhookToleranceSeconds) { throw .invalidConfiguration("webhookToleranceSeconds must be between 0 and 86400; got \(webhookToleranceSeconds)") }
        if !(1...(1 << 24)).contains(maxRememberedWebhookIDs) { throw .invalidConfiguration("maxRememberedWebhookIDs must be between 1 and 16777216; got \(maxRememberedWebhookIDs)") }
        if !(1...(1 << 24)).contains(maxWebhookBodyBytes) { throw .invalidConfiguration("maxWebhookBodyBytes must be between 1 and 16777216; got \(maxWebhookBodyBytes)") }
    }
}

/// SETTINGS_MAX_CONCURRENT_STREAMS as APNs applies it: a fresh connection allows
/// `beforeAuthentication` streams until a request's credentials are accepted, then `max`.
public struct StreamLimits: Sendable, Equatable {
    public var beforeAuthentication: Int = 1
    public var max: Int = 1000

    public init(beforeAuthentication: Int = 1, max: Int = 1000) {
        self.beforeAuthentication = beforeAuthentication
        self.max = max
    }

    public static let range = 1...100_000

    func validate() throws(EmulatorError) {
        if !Self.range.contains(beforeAuthentication) { throw .invalidConfiguration("streams before authentication must be between 1 and 100000; got \(beforeAuthentication)") }
        if !Self.range.contains(max) { throw .invalidConfiguration("max concurrent streams must be between 1 and 100000; got \(max)") }
        if beforeAuthentication > max { throw .invalidConfiguration("streams before authentication (\(beforeAuthentication)) must not exceed max concurrent streams (\(max))") }
    }
}
