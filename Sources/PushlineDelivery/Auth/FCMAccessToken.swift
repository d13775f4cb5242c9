/// An OAuth access token in use for FCM. Redacts itself.
public struct FCMAccessToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// 1 for the first token, +1 per new token: tells a 401 for an old token from one for the
    /// current token.
    public let generation: UInt64
    public let obtainedAt: DeliveryInstant
    /// From here on it is not handed out: a new one is fetched first.
    public let refreshAt: DeliveryInstant
    /// The endpoint's `expires_in` after `obtainedAt`.
    public let expiresAt: DeliveryInstant
    /// Whether it replaced a token FCM answered 401 to.
    public let isForcedRefresh: Bool
    /// The `authorization` header value, `Bearer <token>`.
    public let authorizationHeaderValue: String

    public var description: String {
        "FCMAccessToken(generation: \(generation)\(isForcedRefresh ? ", forced" : ""), token: redacted)"
    }
    public var debugDescription: String { description }
}
