/// What the emulator received and how it answered, for tests (`GET /stats`,
/// `ProviderEmulator.stats()`). Device tokens appear; credentials never do.
public struct EmulatorStats: Sendable, Codable, Equatable {
    /// TLS connections accepted since start or reset, and open now.
    public var connectionsOpened = 0
    public var connectionsOpen = 0
    /// HTTP/2 streams clients opened (requests, including ones refused or dropped).
    public var streams = 0
    /// GOAWAY frames sent by the `goawayAfterStreams` fault.
    public var goawaysSent = 0
    /// Requests answered or falsified, by what happened: `"200"`, `"410"`, …,
    /// `"refused_stream"`, `"dropped_connection"`.
    public var statuses: [String: Int] = [:]
    public var apns = ProviderStats()
    public var fcm = ProviderStats()
    /// Web Push requests (`POST /push/<id>`), per subscription id.
    public var webpush = ProviderStats()
    /// ADM requests (`POST /messaging/registrations/<id>/messages`), per registration id.
    public var adm = ProviderStats()
    /// Webhook requests (`POST /webhooks/<channel>`), per channel.
    public var webhooks = WebhookStats()
    /// Google's token endpoint (`/token`).
    public var oauth = OAuthStats()
    /// Amazon's token endpoint (`/auth/O2/token`).
    public var admOAuth = OAuthStats()

    public init() {}

    public struct ProviderStats: Sendable, Codable, Equatable {
        /// Requests whose path named this provider.
        public var requests = 0
        /// Notifications accepted for delivery (200 without validate_only; Web Push 201; ADM 200,
        /// a replaced registration id included).
        public var delivered = 0
        /// FCM `validate_only: true` requests accepted (nothing delivered).
        public var validated = 0
        /// Answers by label: `"200"`, `"410 Unregistered"`, `"404 UNREGISTERED"`, `"refused_stream"`, …
        public var answers: [String: Int] = [:]
        /// Per device token (FCM topics as `topic:<name>`, conditions as `condition`, Web Push
        /// subscriptions by their id).
        public var tokens: [String: TokenStats] = [:]

        public init() {}
    }

    public struct TokenStats: Sendable, Codable, Equatable {
        public var requests = 0
        public var delivered = 0
        public var validated = 0
        /// The labels of the answers, in the order they were given (the first
        /// `TokenStats.maxHistory`; `requests` keeps counting).
        public var answers: [String] = []

        public static let maxHistory = 64

        public init() {}
    }

    public struct OAuthStats: Sendable, Codable, Equatable {
        public var issued = 0
        public var rejected = 0

        public init() {}
    }
}
