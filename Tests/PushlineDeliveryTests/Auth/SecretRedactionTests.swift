import Crypto
import _CryptoExtras
import Foundation
import PushlineDelivery
import Testing

/// No error, description or debug description of the auth types holds key material, a JWT,
/// an assertion or an access token.
@Suite("Secrets stay out of text")
struct SecretRedactionTests {
    @Test("every credential type and every error, printed every way")
    func nothingLeaks() async throws {
        let ecKey = P256.Signing.PrivateKey()
        let apnsKey = try APNsSigningKey(pem: Array(ecKey.pemRepresentation.utf8), path: "AuthKey.p8", keyID: "KEY1234567", teamID: "ABCDE12345")
        var state = APNsProviderTokenState(key: apnsKey)
        let apnsToken = try state.token(now: .seconds(1), unixTime: 1_700_000_000)
        let expired = try state.providerTokenExpired(apnsToken, now: .seconds(2), unixTime: 1_700_000_001)
        guard case .resend(let forced) = expired else { Issue.record("expected resend"); return }
        let stop = try state.providerTokenExpired(forced, now: .seconds(3), unixTime: 1_700_000_002)

        let account = try FCMServiceAccount(json: Array(ServiceAccountFixture.json().utf8), path: "sa.json")
        let request = try FCMAssertion.tokenRequest(account: account, issuedAt: 1_700_000_000)
        let assertion = String(decoding: request.body, as: UTF8.self).components(separatedBy: "assertion=")[1]
        let accessToken = "ya29.c.b0AXv0zTOhQ9mYSECRETACCESSTOKENVALUE0123456789abcdefghijklmnop"
        let grant = OAuthHTTPResponse(status: 200, body: Array(#"{"access_token":"\#(accessToken)","expires_in":3599,"token_type":"Bearer"}"#.utf8))
        let response = try OAuthTokenResponse.parse(grant)

        // A token endpoint that echoes our assertion and a token back in its errors.
        let echo = #"{"error":"invalid_grant","error_description":"assertion \#(assertion) token \#(accessToken)"}"#
        let endpoint = FakeTokenEndpoint(answers: [grant, grant, OAuthHTTPResponse(status: 400, body: Array(echo.utf8))])
        let provider = OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: endpoint.exchange)
        let fcmToken = try await provider.accessToken()
        _ = await provider.unauthorized(fcmToken)
        let second = try await provider.accessToken()
        let stopped = await provider.unauthorized(second)

        var texts: [String] = []
        func add(_ value: Any) {
            texts.append("\(value)")
            texts.append(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
            texts.append(Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", "))
        }
        for value: Any in [apnsKey, apnsToken, forced, expired, stop, account, request, response, fcmToken, second, stopped] { add(value) }
        for failing in [
            { _ = try OAuthTokenResponse.parse(OAuthHTTPResponse(status: 400, body: Array(echo.utf8))) },
            { _ = try OAuthTokenResponse.parse(OAuthHTTPResponse(status: 503, body: Array(echo.utf8))) },
            { _ = try FCMServiceAccount(json: Array(ServiceAccountFixture.json(["token_uri": "http://x/\(ServiceAccountFixture.key.pkcs8PEMRepresentation)"]).utf8), path: "sa.json") },
            { _ = try FCMServiceAccount(json: Array(ServiceAccountFixture.json(["private_key": String(ServiceAccountFixture.key.pkcs8PEMRepresentation.dropLast(200))]).utf8), path: "sa.json") },
            { _ = try FCMServiceAccount(json: Array(ServiceAccountFixture.json(["type": ServiceAccountFixture.key.pkcs8PEMRepresentation]).utf8), path: "sa.json") },
            { _ = try APNsSigningKey(pem: Array(String(ecKey.pemRepresentation.dropLast(40)).utf8), path: "k.p8", keyID: "K", teamID: "T") },
            { _ = try APNsSigningKey(privateKey: ecKey, keyID: ecKey.pemRepresentation, teamID: "T") },
        ] as [() throws -> Void] {
            do { try failing(); Issue.record("expected an error") } catch { add(error) }
        }
        // The classifiers quote server text: a body echoing the JWT.
        add(APNsResponseClassifier.classify(status: 403, body: Array(#"{"reason":"\#(apnsToken.jwt)"}"#.utf8)))
        add(FCMResponseClassifier.classify(status: 400, body: Array(#"{"error":{"message":"\#(accessToken)","status":"\#(assertion)"}}"#.utf8)))

        var secrets: [String] = [String(apnsToken.jwt), String(forced.jwt), assertion, accessToken]
        secrets += String(apnsToken.jwt).split(separator: ".").map { String($0) }
        secrets += assertion.split(separator: ".").map { String($0) }
        let ecLines: [String] = ecKey.pemRepresentation.split(separator: "\n").map { String($0) }
        secrets += ecLines.filter { !$0.hasPrefix("-----") }
        secrets += ServiceAccountFixture.keyLines.map { String($0) }
        for text in texts {
            for secret in secrets where text.contains(secret) {
                Issue.record("'\(text.prefix(80))…' holds a secret")
            }
        }
        #expect(texts.count > 30)
    }
}
