import Crypto
import Foundation
import PushlineEmulator
import Synchronization
import Testing

@Suite("APNs endpoint")
struct APNsEndpointTests {
    @Test("curl over TLS (trusting only the written certificate) and ALPN h2: a valid ES256 provider token is accepted")
    func validProviderTokenOverCurl() async throws {
        try await withEmulator { fixture in
            let token = TestDevice.apns(1)
            let response = try Curl.request(
                "POST", "\(fixture.endpoint)/3/device/\(token)", caFile: fixture.caFile,
                headers: fixture.apnsHeaders(extra: [("apns-priority", "10"), ("apns-expiration", "0")]), body: EmulatorFixture.alertPayload
            )
            #expect(response.status == 200)
            #expect(response.httpVersion == "2")
            #expect(response.body.isEmpty)
            let apnsID = try #require(response.headers["apns-id"])
            #expect(apnsID.count == 36 && apnsID == apnsID.lowercased())
            let stats = fixture.emulator.stats()
            #expect(stats.apns.delivered == 1)
            #expect(stats.apns.tokens[token]?.answers == ["200"])

            // The certificate names localhost too.
            let byName = try Curl.request(
                "POST", "https://localhost:\(fixture.port)/3/device/\(token)", caFile: fixture.caFile,
                headers: fixture.apnsHeaders(), body: EmulatorFixture.alertPayload
            )
            #expect(byName.status == 200)
        }
    }

    @Test("the apns-id a request sends is echoed")
    func echoesApnsID() async throws {
        try await withEmulator { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let id = "123e4567-e89b-42d3-a456-556642440000"
            let outcome = try await client.request("POST", "/3/device/\(TestDevice.apns(2))", headers: fixture.apnsHeaders(extra: [("apns-id", id)]), body: EmulatorFixture.alertPayload)
            guard case .response(200, let headers, _) = outcome else { Issue.record("got \(outcome)"); return }
            #expect(headers["apns-id"] == id)
        }
    }

    @Test("a token signed with another key is 403 InvalidProviderToken; an old iat is 403 ExpiredProviderToken")
    func providerTokenFailures() async throws {
        try await withEmulator { fixture in
            let url = "\(fixture.endpoint)/3/device/\(TestDevice.apns(3))"
            let credentials = fixture.credentials
            let now = TestJWT.nowSeconds
            let wrongKey = TestJWT.apnsProviderToken(key: P256.Signing.PrivateKey(), keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: now)
            let wrong = try Curl.request("POST", url, caFile: fixture.caFile, headers: fixture.apnsHeaders(token: wrongKey), body: EmulatorFixture.alertPayload)
            #expect(wrong.status == 403)
            #expect(try wrong.json()["reason"] as? String == "InvalidProviderToken")

            let old = fixture.providerToken(issuedAt: now - 3601 - 5)
            let expired = try Curl.request("POST", url, caFile: fixture.caFile, headers: fixture.apnsHeaders(token: old), body: EmulatorFixture.alertPayload)
            #expect(expired.status == 403)
            #expect(try expired.json()["reason"] as? String == "ExpiredProviderToken")

            let missing = try Curl.request("POST", url, caFile: fixture.caFile, headers: [("apns-topic", credentials.topic)], body: EmulatorFixture.alertPayload)
            #expect(missing.status == 403)
            #expect(try missing.json()["reason"] as? String == "MissingProviderToken")

            #expect(fixture.emulator.stats().apns.delivered == 0)
        }
    }

    @Test("kid, iss, a future iat, a tampered signature and malformed tokens are InvalidProviderToken")
    func providerTokenClaims() async throws {
        try await withEmulator { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let credentials = fixture.credentials
            let key = credentials.apnsPrivateKey
            let now = TestJWT.nowSeconds
            let valid = fixture.providerToken()
            let tampered = String(valid.dropLast(2)) + (valid.hasSuffix("AA") ? "BB" : "AA")
            let tokens = [
                TestJWT.apnsProviderToken(key: key, keyID: "OTHERKEY00", teamID: credentials.teamID, issuedAt: now),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, teamID: "OTHERTEAM0", issuedAt: now),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: now + 600),
                tampered, "not-a-jwt", "a.b.c", "", "..", "a.b.c.d", "eyJ9.e30.AAAA",
                // Hostile iat values: far future, fractional, beyond Int64, a string, missing.
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: .max),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, rawClaims: #"{"iss":"\#(credentials.teamID)","iat":1.5}"#),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, rawClaims: #"{"iss":"\#(credentials.teamID)","iat":99999999999999999999999}"#),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, rawClaims: #"{"iss":"\#(credentials.teamID)","iat":"\#(now)"}"#),
                TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, rawClaims: #"{"iss":"\#(credentials.teamID)"}"#),
            ]
            for token in tokens {
                let outcome = try await client.request("POST", "/3/device/\(TestDevice.apns(4))", headers: fixture.apnsHeaders(token: token), body: EmulatorFixture.alertPayload)
                #expect(outcome.status == 403, "token \(token.prefix(40))")
                #expect(outcome.reason == "InvalidProviderToken", "token \(token.prefix(40))")
            }
            // The oldest possible iat is expired, not an overflow.
            let ancient = TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: .min)
            let old = try await client.request("POST", "/3/device/\(TestDevice.apns(4))", headers: fixture.apnsHeaders(token: ancient), body: EmulatorFixture.alertPayload)
            #expect(old.reason == "ExpiredProviderToken")
            // A token within the clock skew is fine.
            let skewed = TestJWT.apnsProviderToken(key: key, keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: now + 30)
            let outcome = try await client.request("POST", "/3/device/\(TestDevice.apns(4))", headers: fixture.apnsHeaders(token: skewed), body: EmulatorFixture.alertPayload)
            #expect(outcome.status == 200)
        }
    }

    @Test("the emulator's clock ages a cached token: accepted, then ExpiredProviderToken an hour later")
    func cachedTokenExpires() async throws {
        let clock = ManualClock(seconds: 1_800_000_000)
        try await withEmulator({ $0.clock = clock.emulatorClock }) { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let token = fixture.providerToken(issuedAt: 1_800_000_000)
            let first = try await client.request("POST", "/3/device/\(TestDevice.apns(5))", headers: fixture.apnsHeaders(token: token), body: EmulatorFixture.alertPayload)
            #expect(first.status == 200)
            clock.advance(3600)
            let atLimit = try await client.request("POST", "/3/device/\(TestDevice.apns(5))", headers: fixture.apnsHeaders(token: token), body: EmulatorFixture.alertPayload)
            #expect(atLimit.status == 200)
            clock.advance(1)
            let late = try await client.request("POST", "/3/device/\(TestDevice.apns(5))", headers: fixture.apnsHeaders(token: token), body: EmulatorFixture.alertPayload)
            #expect(late.reason == "ExpiredProviderToken")
        }
    }

    @Test("every header rule of PROVIDERS.md gets APNs' status and reason")
    func headerRules() async throws {
        try await withEmulator { fixture in
            let client = try await H2TestClient.connect(port: fixture.port, certificatePEM: fixture.emulator.configuration.tls.certificatePEM)
            defer { Task { await client.close() } }
            let topic = fixture.credentials.topic
            let auth = ("authorization", "bearer \(fixture.providerToken())")
            let device = TestDevice.apns(6)
            let payload = EmulatorFixture.alertPayload
            let cases: [(String, [(String, String)], String, [UInt8], Int, String?)] = [
                ("no topic", [auth], device, payload, 400, "MissingTopic"),
                ("other bundle", [auth, ("apns-topic", "com.other.app")], device, payload, 400, "TopicDisallowed"),
                ("voip without suffix", [auth, ("apns-topic", topic), ("apns-push-type", "voip")], device, payload, 400, "TopicDisallowed"),
                ("malformed topic", [auth, ("apns-topic", "bad topic")], device, payload, 400, "BadTopic"),
                ("unknown push type", [auth, ("apns-topic", topic), ("apns-push-type", "banner")], device, payload, 400, "InvalidPushType"),
                ("priority 7", [auth, ("apns-topic", topic), ("apns-priority", "7")], device, payload, 400, "BadPriority"),
                ("background at 10", [auth, ("apns-topic", topic), ("apns-push-type", "background"), ("apns-priority", "10")], device, payload, 400, "BadPriority"),
                ("expiration not a number", [auth, ("apns-topic", topic), ("apns-expiration", "tomorrow")], device, payload, 400, "BadExpirationDate"),
                ("collapse id of 65 bytes", [auth, ("apns-topic", topic), ("apns-collapse-id", String(repeating: "c", count: 65))], device, payload, 400, "BadCollapseId"),
                ("apns-id not a UUID", [auth, ("apns-topic", topic), ("apns-id", "1234")], device, payload, 400, "BadMessageId"),
                ("two topics", [auth, ("apns-topic", topic), ("apns-topic", topic)], device, payload, 400, "DuplicateHeaders"),
                ("token not hex", [auth, ("apns-topic", topic)], "zz11", payload, 400, "BadDeviceToken"),
                ("no token", [auth, ("apns-topic", topic)], "", payload, 400, "MissingDeviceToken"),
                ("empty payload", [auth, ("apns-topic", topic)], device, [], 400, "PayloadEmpty"),
                ("payload not JSON", [auth, ("apns-topic", topic)], device, Array("{aps".utf8), 400, "BadPayload"),
                ("payload of 4097 bytes", [auth, ("apns-topic", topic)], device, Self.payload(size: 4097), 413, "PayloadTooLarge"),
                ("voip payload of 5121 bytes", [auth, ("apns-topic", topic + ".voip"), ("apns-push-type", "voip")], device, Self.payload(size: 5121), 413, "PayloadTooLarge"),
                ("payload far above the buffer bound", [auth, ("apns-topic", topic)], device, Self.payload(size: 200_000), 413, "PayloadTooLarge"),
                // The limits themselves are fine.
                ("collapse id of 64 bytes", [auth, ("apns-topic", topic), ("apns-collapse-id", String(repeating: "c", count: 64))], device, payload, 200, nil),
                ("payload of 4096 bytes", [auth, ("apns-topic", topic)], device, Self.payload(size: 4096), 200, nil),
                ("voip payload of 5120 bytes", [auth, ("apns-topic", topic + ".voip"), ("apns-push-type", "voip")], device, Self.payload(size: 5120), 200, nil),
                ("background at 5", [auth, ("apns-topic", topic), ("apns-push-type", "background"), ("apns-priority", "5")], device, payload, 200, nil),
                ("live activity topic", [auth, ("apns-topic", topic + ".push-type.liveactivity"), ("apns-push-type", "liveactivity")], device, payload, 200, nil),
                ("odd-length upper-case hex token", [auth, ("apns-topic", topic)], "ABCDEF0123456789A", payload, 200, nil),
            ]
            for (name, headers, token, body, status, reason) in cases {
                let outcome = try await client.request("POST", "/3/device/\(token)", headers: headers, body: body)
                #expect(outcome.status == status, "\(name)")
                if let reason { #expect(outcome.reason == reason, "\(name)") }
            }
            let get = try await client.request("GET", "/3/device/\(device)", headers: [auth, ("apns-topic", topic)])
            #expect(get.status == 405)
            #expect(get.reason == "MethodNotAllowed")
            let elsewhere = try await client.request("POST", "/4/device/\(device)", headers: [auth, ("apns-topic", topic)], body: payload)
            #expect(elsewhere.status == 404)
            #expect(elsewhere.reason == "BadPath")
        }
    }

    @Test("long tokens are InvalidProviderToken; a header block above the HTTP/2 layer's bound fails that connection only")
    func oversizedHeaderBlock() async throws {
        try await withEmulator { fixture in
            let url = "\(fixture.endpoint)/3/device/\(TestDevice.apns(7))"
            for long in [String(repeating: "x", count: 10_000), String(repeating: "eyJ", count: 3000) + ".e30.AAAA"] {
                let response = try Curl.request("POST", url, caFile: fixture.caFile, headers: fixture.apnsHeaders(token: long), body: EmulatorFixture.alertPayload)
                #expect(response.status == 403)
                #expect(try response.json()["reason"] as? String == "InvalidProviderToken")
            }
            let huge = String(repeating: "x", count: 70_000)
            let (status, _, _) = try Curl.run(["-sS", "--http2", "--cacert", fixture.caFile, "-o", "/dev/null", "-X", "POST",
                                               "-H", "authorization: bearer \(huge)", "--data-binary", "{}", "--max-time", "20", url])
            #expect(status != 0)
            let after = try Curl.request("POST", url, caFile: fixture.caFile, headers: fixture.apnsHeaders(), body: EmulatorFixture.alertPayload)
            #expect(after.status == 200)
        }
    }

    /// A JSON object of exactly `size` bytes.
    static func payload(size: Int) -> [UInt8] {
        let frame = #"{"aps":{"alert":""}}"#.utf8.count
        return Array(#"{"aps":{"alert":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: size - frame) + Array(#""}}"#.utf8)
    }
}

/// A settable clock for the emulator (JWT ages, access-token expiry).
final class ManualClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(seconds: Int64) {
        milliseconds = Mutex(seconds * 1000)
    }

    func advance(_ seconds: Int64) {
        milliseconds.withLock { $0 += seconds * 1000 }
    }

    var emulatorClock: EmulatorClock {
        EmulatorClock { [self] in milliseconds.withLock { $0 } }
    }
}
