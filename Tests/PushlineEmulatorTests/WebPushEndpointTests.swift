import Crypto
import Foundation
import PushlineEmulator
import Testing

@Suite("Web Push endpoint")
struct WebPushEndpointTests {
    /// RFC 8291 Appendix A (section 5's example).
    enum RFC8291 {
        static let userAgentPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let userAgentPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        static let plaintext = "When I grow up, I want to be a watermelon"
    }

    @Test("RFC 8291's example decrypts to its plaintext, and the tests' encryption reproduces its body")
    func rfc8291Example() throws {
        let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: TestWebPush.decodeBase64URL(RFC8291.userAgentPrivate))
        #expect(Array(key.publicKey.x963Representation) == TestWebPush.decodeBase64URL(RFC8291.userAgentPublic))
        let body = TestWebPush.decodeBase64URL(RFC8291.body)
        let auth = TestWebPush.decodeBase64URL(RFC8291.auth)
        let plaintext = try WebPushDecryption.decrypt(body, privateKey: key, auth: auth)
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)

        // The tests' own encryption is right too: with the RFC's sender key and salt it gives the RFC's body.
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: TestWebPush.decodeBase64URL(RFC8291.senderPrivate))
        let rebuilt = try TestWebPush.encrypt(
            Array(RFC8291.plaintext.utf8), p256dh: TestWebPush.decodeBase64URL(RFC8291.userAgentPublic), auth: auth,
            senderKey: sender, salt: TestWebPush.decodeBase64URL(RFC8291.salt)
        )
        #expect(rebuilt == body)

        // Any changed byte, another auth secret, a cut body: a failure, never a trap.
        var tampered = body
        tampered[body.count - 20] ^= 1
        #expect(throws: WebPushDecryption.Failure.self) { try WebPushDecryption.decrypt(tampered, privateKey: key, auth: auth) }
        #expect(throws: WebPushDecryption.Failure.self) { try WebPushDecryption.decrypt(body, privateKey: key, auth: [UInt8](repeating: 0, count: 16)) }
        for length in [0, 1, 20, 21, 85, 86, 87, 102] {
            #expect(throws: WebPushDecryption.Failure.self, "\(length)") { try WebPushDecryption.decrypt(Array(body.prefix(length)), privateKey: key, auth: auth) }
        }
    }

    @Test("hostile headers: a key id not 65 bytes or not a point, rs below 18 or below the record, another delimiter")
    func hostileBodies() throws {
        let subscription = WebPushSubscription.generate(id: "x")
        let message = Array(#"{"k":"v"}"#.utf8)
        func body(recordSize: UInt32 = 4096, delimiter: UInt8 = 2, padding: Int = 0) throws -> [UInt8] {
            try TestWebPush.encrypt(message, p256dh: subscription.p256dh, auth: subscription.auth, recordSize: recordSize, padding: padding, delimiter: delimiter)
        }
        func decrypt(_ body: [UInt8]) throws -> [UInt8] {
            try WebPushDecryption.decrypt(body, privateKey: subscription.privateKey, auth: subscription.auth)
        }
        #expect(try decrypt(try body(padding: 100)) == message)
        #expect(try decrypt(try body(recordSize: 9 + 1 + 16)) == message, "a record exactly rs long")
        var shortID = try body()
        shortID[20] = 64
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(shortID) }
        var notAPoint = try body()
        notAPoint[22] ^= 0xff
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(notAPoint) }
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(try body(recordSize: 17)) }
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(try body(recordSize: 20)) }
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(try body(delimiter: 1)) }
        #expect(throws: WebPushDecryption.Failure.self) { try decrypt(try body(delimiter: 0)) }
    }

    /// A valid request for `subscription`: headers and body.
    static func request(
        _ fixture: EmulatorFixture, _ subscription: WebPushSubscription, plaintext: String = #"{"title":"Hi","body":"There"}"#,
        jwt: String? = nil, extra: [(String, String)] = []
    ) throws -> (headers: [(String, String)], body: [UInt8]) {
        let vapid = fixture.credentials.webPush.vapidPrivateKey
        let token = jwt ?? TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: fixture.endpoint))
        let headers = [
            ("authorization", TestWebPush.authorization(token, key: vapid.publicKey)), ("ttl", "60"), ("content-encoding", "aes128gcm"),
        ] + extra
        return (headers, try TestWebPush.encrypt(Array(plaintext.utf8), p256dh: subscription.p256dh, auth: subscription.auth))
    }

    static func subscription(_ fixture: EmulatorFixture, _ index: Int) -> WebPushSubscription {
        fixture.credentials.webPush.subscriptions[index]
    }

    @Test("curl end to end: an encrypted message with a valid VAPID token is 201 with a location, and the record file holds its plaintext")
    func deliversAndRecords() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("record.ndjson").path
        try await withEmulator({ $0.recordWebPush = record }) { fixture in
            let first = Self.subscription(fixture, 0)
            #expect(first.id == "s000")
            let (headers, body) = try Self.request(fixture, first, extra: [("urgency", "high"), ("topic", "news_1-A")])
            let response = try Curl.request("POST", first.endpoint(origin: fixture.endpoint), caFile: fixture.caFile, headers: headers, body: body)
            #expect(response.status == 201, "\(response.bodyText)")
            #expect(response.httpVersion == "2")
            #expect(response.body.isEmpty)
            let location = try #require(response.headers["location"])
            #expect(location.hasPrefix(fixture.endpoint + "/message/"))

            // A second message over HTTP/2 with the same token (remembered), padding and a multi-line JSON body.
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let second = Self.subscription(fixture, 255)
            #expect(second.id == "s255")
            let vapid = fixture.credentials.webPush.vapidPrivateKey
            let jwt = TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: fixture.endpoint))
            let padded = try TestWebPush.encrypt(Array("{\n  \"n\": [1, 2]\n}".utf8), p256dh: second.p256dh, auth: second.auth, padding: 300)
            let auth = [("authorization", TestWebPush.authorization(jwt, key: vapid.publicKey)), ("ttl", "0"), ("content-encoding", "aes128gcm")]
            for _ in 0..<2 {
                let outcome = try await client.request("POST", "/push/s255", headers: auth, body: padded)
                #expect(outcome.status == 201, "\(outcome)")
            }

            let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines == [
                #"{"subscription":"s000","plaintext":{"title":"Hi","body":"There"}}"#,
                #"{"subscription":"s255","plaintext":{   "n": [1, 2] }}"#,
                #"{"subscription":"s255","plaintext":{   "n": [1, 2] }}"#,
                "",
            ])
            let mode = try FileManager.default.attributesOfItem(atPath: record)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            let stats = fixture.emulator.stats()
            #expect(stats.webpush.requests == 3)
            #expect(stats.webpush.delivered == 3)
            #expect(stats.webpush.tokens["s000"]?.answers == ["201"])
            #expect(stats.webpush.tokens["s255"]?.answers == ["201", "201"])
            #expect(stats.statuses["201"] == 3)
            // Credentials never appear in the stats.
            let statsText = try Curl.request("GET", "\(fixture.endpoint)/stats", caFile: fixture.caFile).bodyText
            #expect(!statsText.contains(jwt))
            #expect(statsText.contains(#""webpush":{"#))
        }
    }

    @Test("VAPID: missing or malformed authorization, bad signature, wrong aud, expired or too late exp, no sub are 401; another key's k is 403")
    func vapidFailures() async throws {
        let clock = ManualClock(seconds: TestJWT.nowSeconds)
        try await withEmulator({ $0.clock = clock.emulatorClock }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let subscription = Self.subscription(fixture, 3)
            let vapid = fixture.credentials.webPush.vapidPrivateKey
            let now = clock.emulatorClock.seconds
            let audience = fixture.endpoint
            let other = P256.Signing.PrivateKey()
            let good = TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, expiry: now + 3600))
            let key = TestJWT.base64URL(vapid.publicKey.x963Representation)
            let body = try TestWebPush.encrypt(Array("{}".utf8), p256dh: subscription.p256dh, auth: subscription.auth)

            let cases: [(String, String?, Int, String)] = [
                ("no authorization", nil, 401, "MissingAuthorization"),
                ("bearer scheme", "bearer \(good)", 401, "BadAuthorization"),
                ("no k", "vapid t=\(good)", 401, "BadAuthorization"),
                ("k not a key", "vapid t=\(good), k=abc", 401, "BadAuthorization"),
                ("t twice", "vapid t=\(good), t=\(good), k=\(key)", 401, "BadAuthorization"),
                ("not a JWT", "vapid t=abc.def, k=\(key)", 401, "BadJWT"),
                ("another key's k", TestWebPush.authorization(TestWebPush.jwt(key: other, claims: TestWebPush.claims(audience: audience)), key: other.publicKey), 403, "KeyMismatch"),
                ("signed by another key", "vapid t=\(TestWebPush.jwt(key: other, claims: TestWebPush.claims(audience: audience))), k=\(key)", 401, "BadSignature"),
                ("alg HS256", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience), header: ["alg": "HS256"])), k=\(key)", 401, "BadJWT"),
                ("aud with a path", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience + "/push/s003"))), k=\(key)", 401, "BadAudience"),
                ("aud of another origin", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: "https://push.example.net"))), k=\(key)", 401, "BadAudience"),
                ("expired", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, expiry: now - 1))), k=\(key)", 401, "ExpiredJWT"),
                ("exp beyond 24 h", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, expiry: now + 86_400 + 60))), k=\(key)", 401, "BadExpiration"),
                ("exp Int64.max", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, expiry: .max))), k=\(key)", 401, "BadExpiration"),
                ("exp a string", "vapid t=\(TestWebPush.jwt(key: vapid, claims: ["aud": audience, "exp": "soon", "sub": "mailto:a@b.c"])), k=\(key)", 401, "BadExpiration"),
                ("no sub", "vapid t=\(TestWebPush.jwt(key: vapid, claims: ["aud": audience, "exp": now + 60])), k=\(key)", 401, "BadSubject"),
                ("sub not a contact", "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, subject: "ops@example.com"))), k=\(key)", 401, "BadSubject"),
            ]
            for (name, authorization, status, reason) in cases {
                var headers = [("ttl", "60"), ("content-encoding", "aes128gcm")]
                if let authorization { headers.append(("authorization", authorization)) }
                let outcome = try await client.request("POST", "/push/s003", headers: headers, body: body)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.reason == reason, "\(name): \(outcome)")
            }
            // Accepted: any spaces after the comma, the scheme in any case, typ left out.
            let accepted = [
                "vapid t=\(good),k=\(key)", "VAPID t=\(good),    k=\(key)", "Vapid k=\(key), t=\(good)",
                "vapid t=\(TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: audience, expiry: now + 86_400), header: ["alg": "ES256"])), k=\(key)",
            ]
            for authorization in accepted {
                let outcome = try await client.request("POST", "/push/s003", headers: [("authorization", authorization), ("ttl", "60"), ("content-encoding", "aes128gcm")], body: body)
                #expect(outcome.status == 201, "\(authorization.prefix(12)): \(outcome)")
            }
            // A remembered token still expires.
            clock.advance(3601)
            let late = try await client.request("POST", "/push/s003", headers: [("authorization", "vapid t=\(good), k=\(key)"), ("ttl", "60"), ("content-encoding", "aes128gcm")], body: body)
            #expect(late.reason == "ExpiredJWT", "\(late)")
            let stats = fixture.emulator.stats()
            #expect(stats.webpush.delivered == accepted.count)
            #expect(stats.webpush.answers["401 BadAudience"] == 2)
            #expect(stats.webpush.answers["403 KeyMismatch"] == 1)
        }
    }

    @Test("404 unknown subscription, 405, 400 for ttl / urgency / topic, 415, 413, 400 for a tampered body or a message that is not JSON")
    func requestRules() async throws {
        try await withEmulator { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let subscription = Self.subscription(fixture, 7)
            let path = "/push/\(subscription.id)"
            let (headers, body) = try Self.request(fixture, subscription)
            func without(_ name: String) -> [(String, String)] { headers.filter { $0.0 != name } }

            var tampered = body
            tampered[body.count - 1] ^= 0x01
            let notJSON = try TestWebPush.encrypt(Array("hello".utf8), p256dh: subscription.p256dh, auth: subscription.auth)
            let forAnother = try TestWebPush.encrypt(Array("{}".utf8), p256dh: Self.subscription(fixture, 8).p256dh, auth: Self.subscription(fixture, 8).auth)
            let tooLarge = try TestWebPush.encrypt(Array(repeating: UInt8(ascii: " "), count: 3994), p256dh: subscription.p256dh, auth: subscription.auth)
            #expect(tooLarge.count == 4097)
            let largest = try TestWebPush.encrypt(Array(repeating: UInt8(ascii: " "), count: 3991) + Array("{}".utf8), p256dh: subscription.p256dh, auth: subscription.auth)
            #expect(largest.count == 4096)

            let cases: [(String, String, String, [(String, String)], [UInt8], Int, String?)] = [
                ("unknown subscription", "POST", "/push/s999", headers, body, 404, "NotFound"),
                ("empty id", "POST", "/push/", headers, body, 404, "NotFound"),
                ("GET", "GET", path, headers, [], 405, "MethodNotAllowed"),
                ("no ttl", "POST", path, without("ttl"), body, 400, "BadTTL"),
                ("ttl not digits", "POST", path, without("ttl") + [("ttl", "-1")], body, 400, "BadTTL"),
                ("urgency", "POST", path, headers + [("urgency", "urgent")], body, 400, "BadUrgency"),
                ("topic too long", "POST", path, headers + [("topic", String(repeating: "a", count: 33))], body, 400, "BadTopic"),
                ("topic not base64url", "POST", path, headers + [("topic", "a b")], body, 400, "BadTopic"),
                ("aesgcm", "POST", path, without("content-encoding") + [("content-encoding", "aesgcm")], body, 415, "BadContentEncoding"),
                ("no content-encoding", "POST", path, without("content-encoding"), body, 415, "BadContentEncoding"),
                ("4097 bytes", "POST", path, headers, tooLarge, 413, "PayloadTooLarge"),
                ("70 KiB", "POST", path, headers, [UInt8](repeating: 7, count: 70_000), 413, "PayloadTooLarge"),
                ("tampered", "POST", path, headers, tampered, 400, "DecryptionFailed"),
                ("for another subscription", "POST", path, headers, forAnother, 400, "DecryptionFailed"),
                ("empty body", "POST", path, headers, [], 400, "DecryptionFailed"),
                ("not JSON", "POST", path, headers, notJSON, 400, "BadPayload"),
                ("4096 bytes", "POST", path, headers, largest, 201, nil),
            ]
            for (name, method, target, requestHeaders, requestBody, status, reason) in cases {
                let outcome = try await client.request(method, target, headers: requestHeaders, body: requestBody)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.reason == reason, "\(name): \(outcome)")
            }
            let stats = fixture.emulator.stats()
            #expect(stats.webpush.requests == cases.count)
            #expect(stats.webpush.delivered == 1)
            #expect(stats.webpush.tokens["s999"] == nil, "unknown ids are not recorded")
            #expect(stats.webpush.tokens[subscription.id]?.requests == cases.count - 2)
        }
    }

    @Test("faults: 410 Gone for subscriptions drawn gone (every attempt), scripted 429 and 503 with retry-after, 500, then 201")
    func faults() async throws {
        var rates = FaultRates()
        rates[.webpushGone] = 0.3
        // APNs and FCM token-level rates must not reach Web Push.
        rates[.apnsUnregistered] = 0.5
        rates[.fcmUnregistered] = 0.5
        var plan = FaultPlan(seed: 11, rates: rates)
        plan.scripted["s100"] = [.tooManyRequests, .serviceUnavailable, .internalServerError, nil]
        plan.retryAfterSeconds = 9
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            var gone = 0
            for index in 0..<40 {
                let subscription = Self.subscription(fixture, index)
                let expected = plan.fault(for: .webpush, token: subscription.id, attempt: 0)
                #expect(expected == nil || expected == .webpushGone)
                for _ in 0..<2 {
                    let (headers, body) = try Self.request(fixture, subscription)
                    let outcome = try await client.request("POST", "/push/\(subscription.id)", headers: headers, body: body)
                    #expect(outcome.status == (expected == nil ? 201 : 410), "\(subscription.id): \(outcome)")
                    if expected != nil { #expect(outcome.reason == "Gone") }
                }
                if expected != nil { gone += 1 }
            }
            #expect((4...24).contains(gone), "about 30 % of 40")

            let scripted = Self.subscription(fixture, 100)
            var answers: [(Int?, String?)] = []
            for _ in 0..<4 {
                let (headers, body) = try Self.request(fixture, scripted)
                let outcome = try await client.request("POST", "/push/s100", headers: headers, body: body)
                guard case .response(let status, let responseHeaders, _) = outcome else { Issue.record("\(outcome)"); continue }
                answers.append((status, responseHeaders["retry-after"]))
            }
            #expect(answers.map(\.0) == [429, 503, 500, 201])
            #expect(answers.map(\.1) == ["9", "9", nil, nil])
            let stats = fixture.emulator.stats()
            #expect(stats.webpush.answers["410 Gone"] == gone * 2)
            #expect(stats.webpush.tokens["s100"]?.answers == ["429 TooManyRequests", "503 ServiceUnavailable", "500 InternalServerError", "201"])
            #expect(stats.webpush.delivered == (40 - gone) * 2 + 1)
        }
    }

    @Test("refused streams and dropped connections reach Web Push too, unprocessed")
    func connectionFaults() async throws {
        var plan = FaultPlan(seed: 3)
        plan.scripted["s010"] = [.refusedStream, .dropConnection, nil]
        try await withEmulator({ $0.faults = plan }) { fixture in
            let subscription = Self.subscription(fixture, 10)
            var outcomes: [H2TestClient.Outcome] = []
            for _ in 0..<3 {
                let client = try await fixture.connect()
                let (headers, body) = try Self.request(fixture, subscription)
                outcomes.append(try await client.request("POST", "/push/s010", headers: headers, body: body))
                await client.close()
            }
            #expect(outcomes[0] == .reset(.refusedStream))
            #expect(outcomes[1] == .closed)
            #expect(outcomes[2].status == 201)
            let stats = fixture.emulator.stats()
            #expect(stats.webpush.tokens["s010"]?.answers == ["refused_stream", "dropped_connection", "201"])
            #expect(stats.webpush.delivered == 1)
        }
    }
}
