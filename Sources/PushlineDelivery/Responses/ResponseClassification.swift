/// What a provider's answer to one request means for the sender: the outcome class, the
/// status, the provider's reason (the wire string, for results files) and any Retry-After.
public struct ResponseClassification: Sendable, Equatable, CustomStringConvertible {
    public let outcome: ResponseOutcome
    /// The HTTP status; 0 when no response arrived.
    public let status: Int
    /// The provider's reason as it is on the wire (`BadDeviceToken`, `UNREGISTERED`), printable
    /// and bounded; or `http_<status>` when the body names none, `no_response` for status 0.
    public let reason: String
    /// FCM's error message (bounded, token-like runs redacted), for `failed.ndjson`.
    public let message: String?
    /// The response's Retry-After, when it had one that parses.
    public let retryAfter: RetryAfter?
    /// The provider's reason, typed, when the body named one.
    public let providerReason: ProviderErrorReason?

    public init(
        outcome: ResponseOutcome, status: Int, reason: String, message: String? = nil, retryAfter: RetryAfter? = nil,
        providerReason: ProviderErrorReason? = nil
    ) {
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
        self.providerReason = providerReason
    }

    public var description: String {
        "\(outcome) (HTTP \(status), \(reason)\(message.map { ": " + $0 } ?? ""))"
    }
}

/// A provider's typed error reason.
public enum ProviderErrorReason: Sendable, Hashable {
    case apns(APNsErrorReason)
    case fcm(FCMErrorCode)
}

/// The outcome classes of PROVIDERS.md.
public enum ResponseOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Accepted: `providerID` is the apns-id or the FCM message name (nil if the response had
    /// none).
    case sent(providerID: String?)
    /// The device token is gone or wrong: report it for pruning, do not retry. `timestamp` is
    /// APNs' 410 timestamp (ms since 1970) when it gave one.
    case invalidToken(timestamp: Int64?)
    /// Try again with backoff; `newConnection`: not on the connection that answered (APNs
    /// Shutdown and IdleTimeout, and every request without a response).
    case retryable(newConnection: Bool)
    /// Our request is wrong: retrying cannot help; fail the device.
    case permanent
    /// The provider's credentials or configuration are wrong: stop this provider instead of
    /// burning the audience.
    case configurationError
    /// The credential expired: make a new one (APNs JWT, FCM access token) and resend.
    case refreshCredentials
    /// The provider is pushing back: slow the provider down (`ProviderRateLimiter.observe`)
    /// and retry with backoff.
    case throttled(ThrottleScope)

    public var description: String {
        switch self {
        case .sent: "sent"
        case .invalidToken: "invalid token"
        case .retryable(let newConnection): newConnection ? "retryable on a new connection" : "retryable"
        case .permanent: "permanent failure"
        case .configurationError: "configuration error"
        case .refreshCredentials: "refresh credentials and resend"
        case .throttled(let scope): "throttled (\(scope))"
        }
    }
}

public enum ThrottleScope: Sendable, Equatable, CustomStringConvertible {
    /// A plain 429 (FCM): halve the provider's rate; Retry-After pauses it.
    case provider
    /// APNs 429 TooManyRequests: "too many requests were made consecutively to the same device
    /// token". Only that request waits (backoff, its Retry-After); the lane goes on.
    case device
    /// FCM QUOTA_EXCEEDED: the project's quota is spent: pause the whole project at least a
    /// minute (Google's guidance), and halve.
    case project

    public var description: String {
        switch self {
        case .provider: "provider"
        case .device: "device token"
        case .project: "project quota"
        }
    }
}
