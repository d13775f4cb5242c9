/// The `errorCode` of an FCM v1 error's `google.firebase.fcm.v1.FcmError` detail, typed;
/// anything else is `unknown`, bounded (64 bytes) and printable.
public enum FCMErrorCode: Sendable, Hashable, CustomStringConvertible {
    case unspecifiedError, invalidArgument, unregistered, senderIdMismatch, quotaExceeded
    case unavailable, `internal`, thirdPartyAuthError
    case unknown(String)

    public static let known: [FCMErrorCode] = [
        .unspecifiedError, .invalidArgument, .unregistered, .senderIdMismatch, .quotaExceeded,
        .unavailable, .internal, .thirdPartyAuthError,
    ]

    public init(wireName: String) {
        self = Self.known.first { $0.wireName == wireName } ?? .unknown(PrintableText.bounded(wireName, limit: 64))
    }

    public var wireName: String {
        switch self {
        case .unspecifiedError: "UNSPECIFIED_ERROR"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .unregistered: "UNREGISTERED"
        case .senderIdMismatch: "SENDER_ID_MISMATCH"
        case .quotaExceeded: "QUOTA_EXCEEDED"
        case .unavailable: "UNAVAILABLE"
        case .internal: "INTERNAL"
        case .thirdPartyAuthError: "THIRD_PARTY_AUTH_ERROR"
        case .unknown(let name): name
        }
    }

    public var description: String { wireName }
}
