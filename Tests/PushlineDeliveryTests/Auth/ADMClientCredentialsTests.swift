import Foundation
import Synchronization
import PushlineCore
@testable import PushlineDelivery
import Testing

@Suite("ADM client credentials")
struct ADMClientCredentialsTests {
    /// Decodes an `application/x-www-form-urlencoded` body as a server would.
    static func form(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "?" }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test func theTokenRequestIsAClientCredentialsGrantForMessagingPush() throws {
        let client = try ADMClientCredentials(clientID: "amzn1.application-oa2-client.abc", clientSecret: "s3cr=t&+%/x")
        let request = try client.tokenRequest(issuedAt: 0)
        #expect(request.url == "https://api.amazon.com/auth/O2/token")
        #expect(request.headers.contains { $0.name == "content-type" && $0.value == "application/x-www-form-urlencoded" })
        #expect(Self.form(request.body) == [
            "grant_type": "client_credentials", "scope": "messaging:push",
            "client_id": "amzn1.application-oa2-client.abc", "client_secret": "s3cr=t&+%/x",
        ])
        // Printing never shows the secret.
        #expect(!"\(client)".contains("s3cr") && !"\(request)".contains("s3cr"))
    }

    @Test func theSecretIsReadFromItsFile() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("adm-secret.txt", "  the-secret-value\n")
        let client = try ADMClientCredentials.load(clientID: "client", secretFile: path, tokenURI: "https://127.0.0.1:8443/auth/O2/token")
        #expect(Self.form(try client.tokenRequest(issuedAt: 0).body)["client_secret"] == "the-secret-value")
        #expect(client.tokenEndpoint.uri == "https://127.0.0.1:8443/auth/O2/token")

        let empty = try folder.write("empty.txt", "\n")
        #expect { try ADMClientCredentials.load(clientID: "client", secretFile: empty) } throws: { "\($0)".contains("is empty") }
        #expect { try ADMClientCredentials.load(clientID: "client", secretFile: folder.path + "/nope") } throws: { "\($0)".contains("ADM client secret file") }
    }

    @Test(arguments: [("", "secret"), ("has space", "secret"), ("id", ""), ("id", "a b")])
    func unusableValuesAreRefused(id: String, secret: String) {
        #expect(throws: OAuthError.self) { try ADMClientCredentials(clientID: id, clientSecret: secret) }
    }

    @Test func aTokenURIThatIsNotHTTPSIsRefused() {
        #expect { try ADMClientCredentials(clientID: "id", clientSecret: "s", tokenURI: "http://api.example.com/token") } throws: {
            "\($0)".contains("providers.adm.token_uri")
        }
    }

    @Test func amazonsAnswerIsReadAndA401AfterAFreshTokenStops() async throws {
        let client = try ADMClientCredentials(clientID: "client-1", clientSecret: "secret")
        let answers = [
            OAuthHTTPResponse(status: 200, body: Array(#"{"access_token":"Atc|MQEBI","expires_in":3600,"scope":"messaging:push","token_type":"bearer"}"#.utf8)),
            OAuthHTTPResponse(status: 200, body: Array(#"{"access_token":"Atc|second","expires_in":3600,"scope":"messaging:push","token_type":"bearer"}"#.utf8)),
        ]
        let endpoint = ScriptedTokenEndpoint(answers)
        let provider = OAuthAccessTokenProvider(grant: client, clock: TestClock(), exchange: endpoint.exchange)
        let first = try await provider.accessToken()
        #expect(first.authorizationHeaderValue == "Bearer Atc|MQEBI")
        #expect(Self.form(try #require(endpoint.requests.first).body)["scope"] == "messaging:push")
        // 401 to the first token: a fresh one; 401 to the fresh one: stop, naming the client.
        guard case .success = await provider.unauthorized(first) else { Issue.record("a first 401 resends"); return }
        let second = try await provider.accessToken()
        #expect(second.authorizationHeaderValue == "Bearer Atc|second")
        guard case .failure(let error) = await provider.unauthorized(second) else { Issue.record("a 401 to a fresh token stops"); return }
        #expect(error.description.hasPrefix("ADM answered 401 to a freshly obtained access token of client client-1"))
    }

    @Test func aRefusedClientIsAnADMErrorThatStops() async throws {
        let client = try ADMClientCredentials(clientID: "client-1", clientSecret: "wrong")
        let endpoint = ScriptedTokenEndpoint([OAuthHTTPResponse(status: 401, body: Array(#"{"error":"invalid_client","error_description":"Client authentication failed"}"#.utf8))])
        let provider = OAuthAccessTokenProvider(grant: client, clock: TestClock(), exchange: endpoint.exchange)
        await #expect { try await provider.accessToken() } throws: { error in
            let error = error as? OAuthError
            return error?.isRetryable == false
                && error?.description == "ADM OAuth token endpoint refused the client credentials (HTTP 401: invalid_client: Client authentication failed); check client_id and client_secret_file (the app's security profile) and token_uri"
        }
    }
}

/// Answers token requests from a script, keeping what it was asked.
final class ScriptedTokenEndpoint: Sendable {
    private struct State { var answers: [OAuthHTTPResponse]; var requests: [OAuthTokenRequest] = [] }
    private let state: Mutex<State>

    init(_ answers: [OAuthHTTPResponse]) { state = Mutex(State(answers: answers)) }

    var requests: [OAuthTokenRequest] { state.withLock { $0.requests } }

    func exchange(_ request: OAuthTokenRequest) async -> OAuthHTTPResponse {
        state.withLock { state in
            state.requests.append(request)
            return state.answers.isEmpty ? OAuthHTTPResponse(status: 500, body: []) : state.answers.removeFirst()
        }
    }
}
