/// One signed APNs provider token (an ES256 JWT). Redacts itself: only its generation and
/// issue time print.
public struct APNsProviderToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// 1 for the first token of a key, +1 per new token: tells a report about an old token
    /// from one about the current one.
    public let generation: UInt64
    /// The `iat` claim (wall-clock UNIX seconds).
    public let issuedAtUnixTime: Int64
    /// When it was made, on the monotonic clock (ages are measured from here).
    public let issuedAt: DeliveryInstant
    /// Whether it replaced a token APNs called expired (rather than the 50-minute refresh).
    public let isForcedRefresh: Bool
    /// The `authorization` header value, `bearer <JWT>`, made once per token.
    public let authorizationHeaderValue: String

    /// The JWT alone.
    public var jwt: Substring { authorizationHeaderValue.dropFirst("bearer ".count) }

    public var description: String {
        "APNsProviderToken(generation: \(generation), iat: \(issuedAtUnixTime)\(isForcedRefresh ? ", forced" : ""), jwt: redacted)"
    }
    public var debugDescription: String { description }
}
