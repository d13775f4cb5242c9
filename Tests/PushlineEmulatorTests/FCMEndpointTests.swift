import Crypto
import Foundation
import PushlineEmulator
import Testing
import _CryptoExtras

@Suite("FCM v1 and its OAuth token endpoint")
struct FCMEndpointTests {
    static let formType = ("content-type", "application/x-www-form-urlencoded")

    static func form(_ assertion: String) -> [UInt8] {
        Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
    }

    func assertion(_ fixture: EmulatorFixture, key: _RSA.Signing.PrivateKey? = nil, audience: String? = nil,
                   scope: String = "https://www.googleapis.com/auth/firebase.messaging", issuedAt: Int64 = TestJWT.nowSeconds,
                   lifetime: Int64 = 3600, clientEmail: String? = nil) -> String {
        let credentials = fixture.credentials
        return TestJWT.oauthAssertion(
            key: key ?? credentials.fcmPrivateKey, keyID: credentials.privateKeyID, clientEmail: clientEmail ?? credentials.clientEmail,
            audience: audience ?? fixture.emulator.tokenURI, scope: scope, issuedAt: issuedAt, lifetime: lifetime
        )
    }

    static func message(token: String, validateOnly: Bool = false) -> [UInt8] {
        Array(#"{"validate_only":\#(validateOnly),"message":{"token":"\#(token)","notification":{"title":"Hi","body":"There"},"data":{"k":"v"}}}"#.utf8)
    }

    @Test("curl end to end: the service-account assertion buys an access token that messages:send accepts")
    func oauthExchangeEndToEnd() async throws {
        try await withEmulator { fixture in
            let tokenResponse = try Curl.request("POST", fixture.emulator.tokenURI, caFile: fixture.caFile, headers: [Self.formType], body: Self.form(assertion(fixture)))
            #expect(tokenResponse.status == 200)
            let json = try tokenResponse.json()
            let accessToken = try #require(json["access_token"] as? String)
            #expect(json["token_type"] as? String == "Bearer")
            #expect(json["expires_in"] as? Int == 3599)

            let project = fixture.credentials.projectID
            let device = TestDevice.fcm(1)
            let send = try Curl.request(
                "POST", "\(fixture.endpoint)/v1/projects/\(project)/messages:send", caFile: fixture.caFile,
                headers: [("authorization", "Bearer \(accessToken)"), ("content-type", "application/json")], body: Self.message(token: device)
            )
            #expect(send.status == 200)
            #expect(send.httpVersion == "2")
            let name = try #require(try send.json()["name"] as? String)
            #expect(name.hasPrefix("projects/\(project)/messages/"))
            #expect(name.count > "projects/\(project)/messages/".count)

            let check = try Curl.request(
                "POST", "\(fixture.endpoint)/v1/projects/\(project)/messages:send", caFile: fixture.caFile,
                headers: [("authorization", "Bearer \(accessToken)")], body: Self.message(token: device, validateOnly: true)
            )
            #expect(check.status == 200)
            #expect(try check.json()["name"] as? String == "projects/\(project)/messages/fake_message_id")

            let stats = fixture.emulator.stats()
            #expect(stats.oauth.issued == 1)
            #expect(stats.fcm.delivered == 1)
            #expect(stats.fcm.validated == 1)
            #expect(stats.fcm.tokens[device]?.answers == ["200", "200 validate_only"])
            // Credentials never appear in the stats.
            let statsText = try Curl.request("GET", "\(fixture.endpoint)/stats", caFile: fixture.caFile).bodyText
            #expect(!statsText.contains(accessToken))
        }
    }

    @Test("assertions with another key, issuer, audience, scope or lifetime are refused as Google does")
    func badAssertions() async throws {
        try await withEmulator { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let now = TestJWT.nowSeconds
            let cases: [(String, [UInt8], String)] = [
                ("other key", Self.form(assertion(fixture, key: otherKey)), "invalid_grant"),
                ("other issuer", Self.form(assertion(fixture, clientEmail: "someone@else.iam.gserviceaccount.com")), "invalid_grant"),
                ("other audience", Self.form(assertion(fixture, audience: "https://example.com/token")), "invalid_grant"),
                ("other scope", Self.form(assertion(fixture, scope: "https://www.googleapis.com/auth/userinfo.email")), "invalid_scope"),
                ("two hours long", Self.form(assertion(fixture, lifetime: 7200)), "invalid_grant"),
                ("expired", Self.form(assertion(fixture, issuedAt: now - 7200)), "invalid_grant"),
                ("issued in the future", Self.form(assertion(fixture, issuedAt: now + 600)), "invalid_grant"),
                ("iat at Int64.min", Self.form(assertion(fixture, issuedAt: .min, lifetime: 3600)), "invalid_grant"),
                ("exp at Int64.max", Self.form(assertion(fixture, issuedAt: now, lifetime: .max - now)), "invalid_grant"),
                ("exp before iat by Int64's span", Self.form(assertion(fixture, issuedAt: .max, lifetime: .min)), "invalid_grant"),
                ("not a JWT", Self.form("abc"), "invalid_grant"),
                ("wrong grant type", Array("grant_type=client_credentials&assertion=x".utf8), "unsupported_grant_type"),
                ("no assertion", Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8), "invalid_request"),
                ("broken escape", Array("grant_type=%G1&assertion=%".utf8), "unsupported_grant_type"),
            ]
            for (name, body, error) in cases {
                let outcome = try await client.request("POST", "/token", headers: [Self.formType], body: body)
                guard case .response(let status, _, let text) = outcome else { Issue.record("\(name): \(outcome)"); continue }
                #expect(status == 400, "\(name)")
                #expect(text.contains("\"error\":\"\(error)\""), "\(name): \(text)")
            }
            // Google's own token URI is an accepted audience too (what a sender following the spec uses).
            let google = try await client.request("POST", "/token", headers: [Self.formType], body: Self.form(assertion(fixture, audience: "https://oauth2.googleapis.com/token")))
            #expect(google.status == 200)
            let stats = fixture.emulator.stats()
            #expect(stats.oauth.rejected == cases.count)
            #expect(stats.oauth.issued == 1)
        }
    }

    @Test("an unknown or expired access token is 401 UNAUTHENTICATED without FcmError details")
    func accessTokenFailures() async throws {
        let clock = ManualClock(seconds: TestJWT.nowSeconds)
        try await withEmulator({ $0.clock = clock.emulatorClock; $0.accessTokenLifetimeSeconds = 60 }) { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let path = "/v1/projects/\(fixture.credentials.projectID)/messages:send"
            let unknown = try await client.request("POST", path, headers: [("authorization", "Bearer ya29.made-up")], body: Self.message(token: TestDevice.fcm(2)))
            guard case .response(401, _, let body) = unknown else { Issue.record("\(unknown)"); return }
            #expect(body.contains("\"status\":\"UNAUTHENTICATED\""))
            #expect(!body.contains("details"))
            let missing = try await client.request("POST", path, body: Self.message(token: TestDevice.fcm(2)))
            #expect(missing.status == 401)

            let issued = try await client.request("POST", "/token", headers: [Self.formType], body: Self.form(assertion(fixture, issuedAt: clock.emulatorClock.seconds)))
            guard case .response(200, _, let tokenBody) = issued else { Issue.record("\(issued)"); return }
            let accessToken = try #require(try JSONSerialization.jsonObject(with: Data(tokenBody.utf8)) as? [String: Any])["access_token"] as? String ?? ""
            let fresh = try await client.request("POST", path, headers: [("authorization", "Bearer \(accessToken)")], body: Self.message(token: TestDevice.fcm(2)))
            #expect(fresh.status == 200)
            clock.advance(61)
            let stale = try await client.request("POST", path, headers: [("authorization", "Bearer \(accessToken)")], body: Self.message(token: TestDevice.fcm(2)))
            #expect(stale.status == 401)
        }
    }

    @Test("bad messages are 400 INVALID_ARGUMENT with an FcmError detail; another project is 403")
    func messageRules() async throws {
        try await withEmulator { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let issued = try await client.request("POST", "/token", headers: [Self.formType], body: Self.form(assertion(fixture)))
            guard case .response(200, _, let tokenBody) = issued else { Issue.record("\(issued)"); return }
            let accessToken = (try JSONSerialization.jsonObject(with: Data(tokenBody.utf8)) as? [String: Any])?["access_token"] as? String ?? ""
            let auth = [("authorization", "Bearer \(accessToken)")]
            let path = "/v1/projects/\(fixture.credentials.projectID)/messages:send"
            let device = TestDevice.fcm(3)
            let bigData = String(repeating: "v", count: 4096)
            let cases: [(String, String)] = [
                ("token and topic", #"{"message":{"token":"\#(device)","topic":"news"}}"#),
                ("no target", #"{"message":{"notification":{"title":"x"}}}"#),
                ("token with a space", #"{"message":{"token":"not a token at all, not a token at all"}}"#),
                ("data not strings", #"{"message":{"token":"\#(device)","data":{"n":1}}}"#),
                ("reserved data key", #"{"message":{"token":"\#(device)","data":{"google.x":"1"}}}"#),
                ("data above 4096 bytes", #"{"message":{"token":"\#(device)","data":{"k":"\#(bigData)"}}}"#),
                ("unknown top-level field", #"{"message":{"token":"\#(device)"},"to":"x"}"#),
                ("not JSON", #"{"message":"#),
                ("validate_only not a bool", #"{"validate_only":"yes","message":{"token":"\#(device)"}}"#),
            ]
            for (name, body) in cases {
                let outcome = try await client.request("POST", path, headers: auth, body: Array(body.utf8))
                guard case .response(400, _, let text) = outcome else { Issue.record("\(name): \(outcome)"); continue }
                #expect(text.contains(#""status":"INVALID_ARGUMENT""#), "\(name)")
                #expect(text.contains(#""@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT""#), "\(name)")
            }
            let topic = try await client.request("POST", path, headers: auth, body: Array(#"{"message":{"topic":"news","data":{"k":"v"}}}"#.utf8))
            #expect(topic.status == 200)
            let other = try await client.request("POST", "/v1/projects/someone-else/messages:send", headers: auth, body: Self.message(token: device))
            #expect(other.status == 403)
            #expect(fixture.emulator.stats().fcm.tokens["topic:news"]?.delivered == 1)
        }
    }
}
