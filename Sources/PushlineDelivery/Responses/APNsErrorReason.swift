/// The `reason` of an APNs error response, typed. Every reason of PROVIDERS.md and Apple's
/// table; anything else is `unknown`, holding the wire string bounded (64 bytes) and
/// printable, so it can go into a results file or a log line as it stands.
public enum APNsErrorReason: Sendable, Hashable, CustomStringConvertible {
    // 400
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken
    case missingTopic, payloadEmpty, topicDisallowed
    // 403
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden
    case invalidProviderToken, missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyInToken
    // 404, 405, 410, 413, 429
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests
    // 500, 503
    case internalServerError, serviceUnavailable, shutdown
    case unknown(String)

    /// Every known reason, in the order of Apple's table.
    public static let known: [APNsErrorReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
        .missingTopic, .payloadEmpty, .topicDisallowed,
        .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
        .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyInToken,
        .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests,
        .internalServerError, .serviceUnavailable, .shutdown,
    ]

    private static let byWireName: [String: APNsErrorReason] = Dictionary(
        uniqueKeysWithValues: known.map { ($0.wireName, $0) })

    /// The reason for a wire string (case-sensitive, as APNs sends them).
    public init(wireName: String) {
        if let known = Self.byWireName[wireName] {
            self = known
        } else {
            self = .unknown(PrintableText.bounded(wireName, limit: 64))
        }
    }

    public var wireName: String {
        switch self {
        case .badCollapseId: "BadCollapseId"
        case .badDeviceToken: "BadDeviceToken"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageId: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .idleTimeout: "IdleTimeout"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .forbidden: "Forbidden"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .unrelatedKeyIdInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyInToken: "BadEnvironmentKeyInToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .expiredToken: "ExpiredToken"
        case .unregistered: "Unregistered"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        case .unknown(let name): name
        }
    }

    public var description: String { wireName }

    /// The class PROVIDERS.md gives the reason; nil for `unknown` (the status decides).
    var outcome: ResponseOutcome? {
        switch self {
        case .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .badTopic, .duplicateHeaders,
             .invalidPushType, .missingDeviceToken, .missingTopic, .payloadEmpty,
             .badPath, .methodNotAllowed, .payloadTooLarge:
            .permanent
        case .badDeviceToken, .deviceTokenNotForTopic, .topicDisallowed:
            // "Check the environment": a sandbox token sent to production reads as a bad
            // token; it is reported, not retried.
            .invalidToken(timestamp: nil)
        case .idleTimeout, .shutdown:
            .retryable(newConnection: true)
        case .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken,
             .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyInToken:
            .configurationError
        case .expiredProviderToken:
            .refreshCredentials
        case .expiredToken, .unregistered:
            .invalidToken(timestamp: nil)
        case .tooManyProviderTokenUpdates:
            // Keep the current JWT (never sign another sooner) and back off this request.
            .retryable(newConnection: false)
        case .tooManyRequests:
            .throttled(.device)
        case .internalServerError, .serviceUnavailable:
            .retryable(newConnection: false)
        case .unknown:
            nil
        }
    }
}
