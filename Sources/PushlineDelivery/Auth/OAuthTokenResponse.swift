import PushlineCore

/// An access token as the token endpoint granted it, checked.
public struct OAuthTokenResponse: Sendable, Equatable, CustomStringConvertible {
    let accessToken: String
    /// The granted lifetime, clamped to 1 s … `maximumLifetime`.
    public let expiresIn: Duration

    /// Google grants 3599 s, Amazon 3600 s; a longer grant (an emulator, a hostile server) is cut to a day so
    /// that the token is asked for again at least daily and no arithmetic overflows.
    public static let maximumLifetime: Duration = .seconds(86_400)
    static let accessTokenLimit = 8 * 1024
    /// The largest token response read: twice the longest access token leaves room for the
    /// rest (Google's answers are far smaller). The exchange's transport keeps this much of a body.
    public static let bodyLimit = 16 * 1024

    init(accessToken: String, expiresIn: Duration) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
    }

    public var description: String { "OAuthTokenResponse(expires_in: \(expiresIn), access_token: redacted)" }

    /// Reads the endpoint's answer: 200 with `{access_token, expires_in, token_type: Bearer}`,
    /// or an error of the kind `OAuthError.isRetryable` tells (429, 5xx and no response are
    /// retryable; any other status means the account or `token_uri` is wrong).
    public static func parse(_ response: OAuthHTTPResponse, service: OAuthService = .fcm) throws(OAuthError) -> Self {
        // A body cut by the transport, or longer than is read, is said to be that: a prefix of
        // JSON would otherwise be reported as "not JSON".
        let overLimit = response.bodyTruncatedAt ?? (response.body.count > bodyLimit ? bodyLimit : nil)
        guard response.status == 200 else {
            let detail = overLimit.map(ResponseBody.overLimit) ?? errorDetail(response.body)
            switch response.status {
            case 0, 408, 429, 500...599:
                throw .tokenEndpointUnavailable(service, status: response.status, detail: detail)
            default:
                throw .tokenEndpointRejected(service, status: response.status, detail: detail)
            }
        }
        if let overLimit {
            throw .tokenResponseInvalid(service, "\(ResponseBody.overLimit(overLimit)) (an access token is at most \(accessTokenLimit) bytes)")
        }
        let root: JSONValue
        do {
            root = try JSONDocument(bytes: response.body, maxDepth: 16).root
        } catch {
            throw .tokenResponseInvalid(service, "not JSON (\(error.description))")
        }
        guard root.kind == .object else { throw .tokenResponseInvalid(service, "not a JSON object") }

        guard let tokenValue = root["access_token"] else { throw .tokenResponseInvalid(service, "no access_token") }
        guard let token = tokenValue.stringValue, !token.isEmpty else {
            throw .tokenResponseInvalid(service, "access_token is not a non-empty string")
        }
        guard token.utf8.count <= accessTokenLimit else {
            throw .tokenResponseInvalid(service, "access_token is longer than \(accessTokenLimit) bytes")
        }
        // It goes into an HTTP header: visible ASCII only (RFC 6750's b64token is a subset).
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .tokenResponseInvalid(service, "access_token holds bytes that cannot go into an HTTP header")
        }

        guard let type = root["token_type"]?.stringValue else { throw .tokenResponseInvalid(service, "no token_type") }
        guard type.lowercased() == "bearer" else {
            throw .tokenResponseInvalid(service, "token_type is '\(PrintableText.bounded(type, limit: 32))', expected Bearer")
        }

        guard let expiresValue = root["expires_in"] else { throw .tokenResponseInvalid(service, "no expires_in") }
        // An integer, or a number with a fraction; anything else, zero or negative is refused.
        guard let seconds = expiresValue.doubleValue, seconds.isFinite else {
            throw .tokenResponseInvalid(service, "expires_in is not a number")
        }
        guard seconds >= 1 else { throw .tokenResponseInvalid(service, "expires_in is \(seconds <= 0 ? "not positive" : "under a second")") }
        let maximum = DurationMath.seconds(maximumLifetime)
        let lifetime = seconds >= maximum ? maximumLifetime : (DurationMath.duration(seconds: seconds) ?? maximumLifetime)
        return Self(accessToken: token, expiresIn: lifetime)
    }

    /// `error` and `error_description` of an OAuth error body (RFC 6749 §5.2), bounded and redacted.
    private static func errorDetail(_ body: [UInt8]) -> String {
        guard !body.isEmpty,
              let root = try? JSONDocument(bytes: body, maxDepth: 16).root, root.kind == .object
        else { return "" }
        var parts: [String] = []
        if let error = root["error"]?.stringValue { parts.append(PrintableText.bounded(error, limit: 64)) }
        if let description = root["error_description"]?.stringValue { parts.append(PrintableText.bounded(description, limit: 200)) }
        return parts.joined(separator: ": ")
    }
}
