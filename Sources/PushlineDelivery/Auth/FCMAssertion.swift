import PushlineCore
import _CryptoExtras
import Foundation

/// The OAuth 2.0 JWT-bearer grant (RFC 7523) of a service account: an RS256 JWT asserting the
/// account, exchanged at its `token_uri` for an access token.
public enum FCMAssertion {
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google accepts assertions of at most an hour.
    public static let lifetimeSeconds: Int64 = 3600

    /// `base64url(header) . base64url(claims) . base64url(RSASSA-PKCS1-v1_5 SHA-256 signature)`
    /// with header `{"alg":"RS256","typ":"JWT","kid":private_key_id}` and claims iss, scope,
    /// aud = token_uri, iat, exp = iat + 3600.
    static func make(account: FCMServiceAccount, issuedAt: Int64) throws(OAuthError) -> String {
        // Every interpolated field was checked free of quotes, backslashes and control bytes.
        let header = #"{"alg":"RS256","typ":"JWT","kid":"\#(account.privateKeyID)"}"#
        let (expiry, overflow) = issuedAt.addingReportingOverflow(lifetimeSeconds)
        let exp = overflow ? Int64.max : expiry
        let claims = #"{"iss":"\#(account.clientEmail)","scope":"\#(scope)","aud":"\#(account.tokenEndpoint.uri)","iat":\#(issuedAt),"exp":\#(exp)}"#
        var signingInput = Base64URL.encode(Array(header.utf8))
        signingInput.append(UInt8(ascii: "."))
        Base64URL.encode(Array(claims.utf8), into: &signingInput)
        let signature: _RSA.Signing.RSASignature
        do {
            signature = try account.privateKey.signature(for: signingInput, padding: .insecurePKCS1v1_5)
        } catch {
            throw .signingFailed
        }
        signingInput.append(UInt8(ascii: "."))
        Base64URL.encode(signature.rawRepresentation, into: &signingInput)
        return String(decoding: signingInput, as: UTF8.self)
    }

    /// The token request for an assertion signed at `issuedAt` (wall-clock UNIX seconds).
    public static func tokenRequest(account: FCMServiceAccount, issuedAt: Int64) throws(OAuthError) -> OAuthTokenRequest {
        let assertion = try make(account: account, issuedAt: issuedAt)
        // The grant type is written as RFC 7523 and PROVIDERS.md show it: ':' is allowed unescaped
        // in a form value and Google's endpoint takes it; the assertion is base64url and '.', all
        // unreserved.
        let body = "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=" + assertion
        return OAuthTokenRequest(url: account.tokenEndpoint.uri, body: Array(body.utf8))
    }
}

/// A POST to the token endpoint, for the integrator's transport. Redacts its body.
public struct OAuthTokenRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let method = "POST"
    public let url: String
    public let headers: [(name: String, value: String)] = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("accept", "application/json"),
    ]
    /// `grant_type=…&assertion=<JWT>`: a secret for an hour.
    public let body: [UInt8]

    public static func == (a: Self, b: Self) -> Bool { a.url == b.url && a.body == b.body }

    public var description: String { "OAuthTokenRequest(POST \(url), body: redacted)" }
    public var debugDescription: String { description }
}

/// What the token endpoint answered: the HTTP status (0 when no response arrived) and the
/// body (bounded by the transport; any bytes).
public struct OAuthHTTPResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// Set when the transport cut the body at this many bytes (`TransportResponse.bodyTruncated`
    /// with its `maxResponseBodyBytes`): `body` is only the first bytes and is not parsed.
    public var bodyTruncatedAt: Int?

    public init(status: Int, body: [UInt8], bodyTruncatedAt: Int? = nil) {
        self.status = status
        self.body = body
        self.bodyTruncatedAt = bodyTruncatedAt
    }
}
