/// What a provider's answer to one request means for the sender: the outcome class, the
/// status, the provider's reason (the wire string, for results files) and any Retry-After.
public struct ResponseClassification: Sendable, Equatable, CustomStringConvertible {
    public let outcome: ResponseOutcome
    /// The HTTP status; 0 when no response arrived.
    public let status: Int
    /// The provider's reason as it is on the wire (`BadDeviceToken`, `UNREGISTERED`), printable
    /// and bounded; or `http_<status>` when the body names none (or was cut by the transport),
    /// `no_response` for status 0, `unexpected_status` for a status that is neither 200 nor
    /// 4xx/5xx.
    public let reason: String
    /// FCM's error message (bounded, token-like runs redacted), or what Pushline says about the
    /// answer (an unexpected status, a body over the transport's limit), for logs.
    public let message: String?
    /// The response's Retry-After, when it had one that parses.
    public let retryAfter: RetryAfter?
    /// The provider's reason, typed, when the body named one.
    public let providerReason: ProviderErrorReason?
    /// A sent request's device has a new token, which the provider named (ADM's 200 with another
    /// `registrationID`): the CRM should replace the old one.
    public let replacementToken: String?

    public init(
        outcome: ResponseOutcome, status: Int, reason: String, message: String? = nil, retryAfter: RetryAfter? = nil,
        providerReason: ProviderErrorReason? = nil, replacementToken: String? = nil
    ) {
        self.replacementToken = replacementToken
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

    /// The reason of an answer whose status is neither 200 nor 4xx/5xx (1xx, 2xx other than 200,
    /// 3xx, 600 and above): a permanent failure carrying that status (docs/delivery.md).
    public static let unexpectedStatusReason = "unexpected_status"
}

/// A provider's typed error reason.
public enum ProviderErrorReason: Sendable, Hashable {
    case apns(APNsErrorReason)
    case fcm(FCMErrorCode)
}

/// The outcome classes of PROVIDERS.md.
public enum ResponseOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Accepted (HTTP 200 only): `providerID` is the apns-id or the FCM message name (nil if the
    /// response had none).
    case sent(providerID: String?)
    /// The device token is gone or wrong: report it for pruning, do not retry. `timestamp` is
    /// APNs' 410 timestamp (ms since 1970) when it gave one.
    case invalidToken(timestamp: Int64?)
    /// Try again with backoff; `newConnection`: not on the connection that answered (APNs
    /// Shutdown and IdleTimeout, and every request without a response).
    case retryable(newConnection: Bool)
    /// Our request is wrong, or the answer cannot be read as delivered (`unexpected_status`):
    /// retrying cannot help; fail the device.
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
