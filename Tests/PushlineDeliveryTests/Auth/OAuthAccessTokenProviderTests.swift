import _CryptoExtras
import Foundation
import PushlineCore
import PushlineDelivery
import Synchronization
import Testing

/// A token endpoint in memory: verifies each assertion with the account's public key, counts
/// the exchanges, and answers what the test scripted.
final class FakeTokenEndpoint: Sendable {
    private struct State { var exchanges = 0; var answers: [OAuthHTTPResponse] = []; var badAssertions = 0 }
    private let state = Mutex(State())
    let delay: Duration

    init(answers: [OAuthHTTPResponse], delay: Duration = .zero) {
        state.withLock { $0.answers = answers }
        self.delay = delay
    }

    var exchanges: Int { state.withLock { $0.exchanges } }
    var badAssertions: Int { state.withLock { $0.badAssertions } }

    static func grant(_ token: String, lifetime: Int = 3599) -> OAuthHTTPResponse {
        OAuthHTTPResponse(status: 200, body: Array(#"{"access_token":"\#(token)","expires_in":\#(lifetime),"token_type":"Bearer"}"#.utf8))
    }

    func exchange(_ request: OAuthTokenRequest) async -> OAuthHTTPResponse {
        if delay > .zero { try? await Task.sleep(for: delay) }
        let valid = Self.verify(request)
        return state.withLock { state in
            state.exchanges += 1
            if !valid { state.badAssertions += 1 }
            return state.answers.isEmpty ? OAuthHTTPResponse(status: 500, body: []) : state.answers.removeFirst()
        }
    }

    static func verify(_ request: OAuthTokenRequest) -> Bool {
        let body = String(decoding: request.body, as: UTF8.self)
        let prefix = "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion="
        guard body.hasPrefix(prefix), let jwt = try? JWTParts(body.dropFirst(prefix.count)) else { return false }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        return ServiceAccountFixture.key.publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .insecurePKCS1v1_5)
    }
}

@Suite("FCM access token provider")
struct OAuthAccessTokenProviderTests {
    let account: FCMServiceAccount

    init() throws {
        account = try FCMServiceAccount(json: Array(ServiceAccountFixture.json().utf8), path: "sa.json")
    }

    @Test("many callers at once: one exchange, every caller gets its token")
    func oneFetchAtATime() async throws {
        let endpoint = FakeTokenEndpoint(answers: [FakeTokenEndpoint.grant("first")], delay: .milliseconds(50))
        let provider = OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: endpoint.exchange)
        let tokens = try await withThrowingTaskGroup(of: OAuthAccessToken.self) { group in
            for _ in 0..<20 { group.addTask { try await provider.accessToken() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tokens.count == 20)
        #expect(Set(tokens.map(\.authorizationHeaderValue)) == ["Bearer first"])
        #expect(endpoint.exchanges == 1)
        #expect(endpoint.badAssertions == 0)
    }

    @Test("refreshed 5 minutes before expiry under the injected clock")
    func refreshTiming() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(answers: [FakeTokenEndpoint.grant("a", lifetime: 3600), FakeTokenEndpoint.grant("b")])
        let provider = OAuthAccessTokenProvider(grant: account, clock: clock, exchange: endpoint.exchange)
        #expect(try await provider.accessToken().authorizationHeaderValue == "Bearer a")
        clock.advance(seconds: 3299)
        #expect(try await provider.accessToken().authorizationHeaderValue == "Bearer a")
        clock.advance(seconds: 1)
        #expect(try await provider.accessToken().authorizationHeaderValue == "Bearer b")
        #expect(endpoint.exchanges == 2)
    }

    @Test("401 refreshes once; a 401 to the fresh token is a configuration error that stops the provider")
    func unauthorizedTwice() async throws {
        let endpoint = FakeTokenEndpoint(answers: [FakeTokenEndpoint.grant("a"), FakeTokenEndpoint.grant("b"), FakeTokenEndpoint.grant("c")])
        let provider = OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: endpoint.exchange)
        let first = try await provider.accessToken()
        #expect(try await provider.unauthorized(first).get() == ())
        let second = try await provider.accessToken()
        #expect(second.authorizationHeaderValue == "Bearer b")
        guard case .failure(let error) = await provider.unauthorized(second) else {
            Issue.record("a second 401 must stop the provider")
            return
        }
        #expect(!error.isRetryable)
        #expect(error.description.contains("sender@pushline-demo.iam.gserviceaccount.com"))
        await #expect(throws: OAuthError.self) { try await provider.accessToken() }
        #expect(endpoint.exchanges == 2)
    }

    @Test("a busy token endpoint is retryable and fetched again; a refusal stops the provider")
    func endpointFailures() async throws {
        let endpoint = FakeTokenEndpoint(answers: [
            OAuthHTTPResponse(status: 503, body: []),
            OAuthHTTPResponse(status: 0, body: []),
            FakeTokenEndpoint.grant("ok"),
        ])
        let provider = OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: endpoint.exchange)
        for _ in 0..<2 {
            await #expect { try await provider.accessToken() } throws: { ($0 as? OAuthError)?.isRetryable == true }
        }
        #expect(try await provider.accessToken().authorizationHeaderValue == "Bearer ok")

        let refusing = FakeTokenEndpoint(answers: [OAuthHTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))])
        let stopped = OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: refusing.exchange)
        for _ in 0..<3 {
            await #expect { try await stopped.accessToken() } throws: { ($0 as? OAuthError)?.isRetryable == false }
        }
        #expect(refusing.exchanges == 1)
    }
}
