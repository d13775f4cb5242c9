/// An OAuth access token in use (FCM, ADM). Redacts itself.
public struct OAuthAccessToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// 1 for the first token, +1 per new token: tells a 401 for an old token from one for the
    /// current token.
    public let generation: UInt64
    public let obtainedAt: DeliveryInstant
    /// From here on it is not handed out: a new one is fetched first.
    public let refreshAt: DeliveryInstant
    /// The endpoint's `expires_in` after `obtainedAt`.
    public let expiresAt: DeliveryInstant
    /// Whether it replaced a token the provider answered 401 to.
    public let isForcedRefresh: Bool
    /// The `authorization` header value, `Bearer <token>`.
    public let authorizationHeaderValue: String

    public var description: String {
        "OAuthAccessToken(generation: \(generation)\(isForcedRefresh ? ", forced" : ""), token: redacted)"
    }
    public var debugDescription: String { description }
}
