import Foundation
@testable import PushlineDelivery
import Testing

/// The token endpoint's answer through the real exchange (libcurl over HTTP/2 and TLS to
/// nghttpd): an oversized access token is reported as too long, never as "not JSON" about the
/// prefix the transport kept.
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(2)))
struct OAuthExchangeBodyLimitTests {
    static func grant(tokenBytes: Int) -> [UInt8] {
        Array(#"{"access_token":"\#(String(repeating: "a", count: tokenBytes))","expires_in":3599,"token_type":"Bearer"}"#.utf8)
    }

    func exchange(_ files: [String: [UInt8]], path: String) async throws -> OAuthHTTPResponse {
        let server = try await LocalHTTP2Server.start(files: files)
        defer { server.stop() }
        let exchange = try OAuthExchange(caFile: server.certificatePath)
        let answer = await exchange.post(OAuthTokenRequest(url: server.baseURL + path, body: Array("grant_type=x&assertion=y".utf8)))
        await exchange.shutdown()
        return answer
    }

    func parseError(_ answer: OAuthHTTPResponse) -> OAuthError? {
        if case .failure(let error) = Result(catching: { () throws(OAuthError) in try OAuthTokenResponse.parse(answer) }) { return error }
        return nil
    }

    @Test func aTokenLongerThanTheBodyTheTransportKeepsIsReportedAsOverTheLimit() async throws {
        let answer = try await exchange(["token": Self.grant(tokenBytes: 100_000)], path: "/token")
        #expect(answer.status == 200)
        #expect(answer.bodyTruncatedAt == OAuthTokenResponse.bodyLimit)
        #expect(answer.body.count == OAuthTokenResponse.bodyLimit)
        let error = try #require(parseError(answer))
        #expect(error.description == "FCM OAuth token endpoint answered 200 with an unusable token response: response body over 16384 bytes (an access token is at most 8192 bytes)")
        #expect(!error.description.contains("not JSON"))
    }

    @Test func aTokenOverItsLimitInABodyThatFitsIsReportedAsTooLong() async throws {
        let answer = try await exchange(["token": Self.grant(tokenBytes: 9_000)], path: "/token")
        #expect(answer.status == 200 && answer.bodyTruncatedAt == nil)
        let error = try #require(parseError(answer))
        #expect(error.description == "FCM OAuth token endpoint answered 200 with an unusable token response: access_token is longer than 8192 bytes")
    }

    @Test func aTokenOfTheLongestLengthAllowedIsTaken() async throws {
        let answer = try await exchange(["token": Self.grant(tokenBytes: 8_192)], path: "/token")
        let token = try OAuthTokenResponse.parse(answer)
        #expect(token.expiresIn == .seconds(3599))
    }
}
