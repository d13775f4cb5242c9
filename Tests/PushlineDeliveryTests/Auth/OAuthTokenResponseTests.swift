import PushlineDelivery
import Testing

@Suite("OAuth token response")
struct OAuthTokenResponseTests {
    func parse(_ status: Int, _ body: String) -> Result<OAuthTokenResponse, FCMAuthError> {
        Result { () throws(FCMAuthError) in try OAuthTokenResponse.parse(OAuthHTTPResponse(status: status, body: Array(body.utf8))) }
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

    @Test("an access token longer than 8 KiB is refused")
    func longToken() {
        let token = String(repeating: "a", count: 8 * 1024 + 1)
        #expect(throws: FCMAuthError.self) {
            try parse(200, #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#).get()
        }
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
