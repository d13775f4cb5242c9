/// How a sender obtains access tokens at an OAuth token endpoint: FCM's service account signs a
/// JWT-bearer assertion (RFC 7523); ADM's security profile sends its client credentials
/// (RFC 6749 §4.4). `OAuthAccessTokenProvider` runs either the same way.
public protocol OAuthGrant: Sendable {
    var service: OAuthService { get }
    /// Who asks (a client email, a client id), for messages; never a secret.
    var clientName: String { get }
    /// The token request, made at `issuedAt` (wall-clock UNIX seconds).
    func tokenRequest(issuedAt: Int64) throws(OAuthError) -> OAuthTokenRequest
}

extension FCMServiceAccount: OAuthGrant {
    public var service: OAuthService { .fcm }
    public var clientName: String { clientEmail }

    public func tokenRequest(issuedAt: Int64) throws(OAuthError) -> OAuthTokenRequest {
        try FCMAssertion.tokenRequest(account: self, issuedAt: issuedAt)
    }
}
