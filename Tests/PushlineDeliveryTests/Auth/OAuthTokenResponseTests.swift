import PushlineDelivery
import Testing

@Suite("OAuth token response")
struct OAuthTokenResponseTests {
    func parse(_ status: Int, _ body: String) -> Result<OAuthTokenResponse, OAuthError> {
        Result { () throws(OAuthError) in try OAuthTokenResponse.parse(OAuthHTTPResponse(status: status, body: Array(body.utf8))) }
    }

    @Test("Google's answer: the lifetime is expires_in")
    func valid() throws {
        let response = try parse(200, #"{"access_token":"ya29.c.b0Aaek","expires_in":3599,"token_type":"Bearer"}"#).get()
        #expect(response.expiresIn == .seconds(3599))
        #expect(!response.description.contains("ya29"))
        // token_type is case-insensitive; a fractional expires_in is taken.
        let other = try parse(200, #"{"token_type":"bearer","expires_in":90.5,"access_token":"t"}"#).get()
        #expect(other.expiresIn == .milliseconds(90_500))
    }

    @Test("a huge expires_in is cut to a day")
    func hugeLifetime() throws {
        for value in ["86401", "9223372036854775807", "1e300", "99999999999999999999999"] {
            let response = try parse(200, #"{"access_token":"t","expires_in":\#(value),"token_type":"Bearer"}"#).get()
            #expect(response.expiresIn == .seconds(86_400), "\(value)")
        }
    }

    @Test("hostile 200 bodies are errors, never crashes", arguments: [
        #"{"expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":42,"expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"a b","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"a\r\nx-injected: 1","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"t","token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":0,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":-5,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":0.5,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":"3599","token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":-1e400,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":3599}"#,
        #"{"access_token":"t","expires_in":3599,"token_type":"MAC"}"#,
        "[]", "", "null", "{", "\u{0}\u{FF}",
    ])
    func hostile(body: String) {
        guard case .failure(let error) = parse(200, body) else {
            Issue.record("accepted \(body)")
            return
        }
        #expect(!error.isRetryable)
        #expect(error.description.hasPrefix("FCM OAuth token endpoint answered 200"))
    }

    @Test("an access token longer than 8 KiB is refused as too long")
    func longToken() {
        let token = String(repeating: "a", count: 8 * 1024 + 1)
        guard case .failure(let error) = parse(200, #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#) else {
            Issue.record("accepted a token of \(token.utf8.count) bytes")
            return
        }
        #expect(error.description == "FCM OAuth token endpoint answered 200 with an unusable token response: access_token is longer than 8192 bytes")
        #expect(!error.isRetryable)
    }

    /// What the exchange's transport hands over when the server sent more than it keeps: the
    /// first bytes, which are not JSON, and the limit.
    static func cutAnswer(status: Int, tokenBytes: Int) -> OAuthHTTPResponse {
        let whole = Array(#"{"access_token":"\#(String(repeating: "a", count: tokenBytes))","expires_in":3599,"token_type":"Bearer"}"#.utf8)
        return OAuthHTTPResponse(status: status, body: Array(whole.prefix(OAuthTokenResponse.bodyLimit)), bodyTruncatedAt: OAuthTokenResponse.bodyLimit)
    }

    @Test("a 200 body the transport cut is reported as over the limit, not as 'not JSON'", arguments: [16_384, 100_000, 10_000_000])
    func cutBody(tokenBytes: Int) {
        let result = Result { () throws(OAuthError) in try OAuthTokenResponse.parse(Self.cutAnswer(status: 200, tokenBytes: tokenBytes)) }
        guard case .failure(let error) = result else {
            Issue.record("accepted")
            return
        }
        #expect(error.description == "FCM OAuth token endpoint answered 200 with an unusable token response: response body over 16384 bytes (an access token is at most 8192 bytes)")
        #expect(!error.isRetryable)
    }

    @Test("a body longer than is read, from an exchange that did not cut it, is said to be that")
    func longUncutBody() {
        let body = Array(#"{"access_token":"\#(String(repeating: "a", count: 20_000))","expires_in":3599,"token_type":"Bearer"}"#.utf8)
        guard case .failure(let error) = Result(catching: { () throws(OAuthError) in try OAuthTokenResponse.parse(OAuthHTTPResponse(status: 200, body: body)) }) else {
            Issue.record("accepted")
            return
        }
        #expect(error.description.hasSuffix("response body over 16384 bytes (an access token is at most 8192 bytes)"))
    }

    @Test("an error answer whose body was cut names the status and the cut", arguments: [(400, false), (503, true)])
    func cutErrorBody(status: Int, retryable: Bool) {
        let result = Result { () throws(OAuthError) in try OAuthTokenResponse.parse(Self.cutAnswer(status: status, tokenBytes: 100_000)) }
        guard case .failure(let error) = result else {
            Issue.record("accepted")
            return
        }
        #expect(error.isRetryable == retryable)
        #expect(error.description.contains("HTTP \(status): response body over 16384 bytes"), "\(error.description)")
    }

    @Test("error answers: 400/401/403 refuse the account (configuration), 429/5xx/no answer are retryable", arguments: [
        (400, false), (401, false), (403, false), (404, false), (302, false),
        (0, true), (408, true), (429, true), (500, true), (503, true),
    ])
    func errorStatuses(status: Int, retryable: Bool) {
        guard case .failure(let error) = parse(status, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#) else {
            Issue.record("status \(status) accepted")
            return
        }
        #expect(error.isRetryable == retryable)
        if status != 0 { #expect(error.description.contains("HTTP \(status)")) }
        #expect(error.description.contains("invalid_grant: Invalid JWT Signature."))
    }

    @Test("a server echoing a credential in its error gets it redacted")
    func echoedSecretRedacted() {
        let secret = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4QHkuY29tIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl"
        guard case .failure(let error) = parse(400, #"{"error":"invalid_grant","error_description":"bad assertion \#(secret) here"}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(!error.description.contains(secret))
        #expect(!error.description.contains("c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl"))
        #expect(error.description.contains("bad assertion [redacted] here"))
    }
}
