import Crypto
import Foundation
import PushlineEmulator
import Testing

@Suite("Standard Webhooks receiver")
struct WebhookEndpointTests {
    @Test("the reference libraries' known answer: the tests' signing reproduces it, and the emulator accepts it")
    func knownAnswer() async throws {
        // From the Standard Webhooks reference libraries' tests (github.com/standard-webhooks/standard-webhooks).
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        #expect(TestWebhooks.signature(secret: secret, id: id, timestamp: "1614265330", body: body) == signature)

        let account = try #require(WebhookAccount(secret: secret))
        let clock = ManualClock(seconds: 1_614_265_330 + 100)
        try await withEmulator({ $0.webhooks = account; $0.clock = clock.emulatorClock }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let headers = [("webhook-id", id), ("webhook-timestamp", "1614265330"), ("webhook-signature", signature)]
            // The signature verifies; the body is no Pushline message.
            let outcome = try await client.request("POST", "/webhooks/sms", headers: headers, body: body)
            #expect(outcome.status == 400, "\(outcome)")
            #expect(outcome.jsonString("error") == "invalid_body")
            #expect(fixture.emulator.stats().webhooks.signatureFailures == 0)
        }
        #expect(WebhookAccount(secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil, "the prefix is required")
        #expect(WebhookAccount(secret: "whsec_" + Data(count: 16).base64EncodedString()) == nil, "16 bytes are too few")
        #expect(WebhookAccount(secret: "whsec_not base64") == nil)
    }

    @Test("curl end to end: a signed delivery is 200 {} and counted for its channel; the record file holds it")
    func deliversAndRecords() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("webhooks.ndjson").path
        try await withEmulator({ $0.recordWebhooks = record }) { fixture in
            let secret = fixture.credentials.webhookSecret
            #expect(secret.hasPrefix("whsec_"))
            #expect(Data(base64Encoded: String(secret.dropFirst(6)))?.count == 32)
            let body = TestWebhooks.body()
            let response = try Curl.request(
                "POST", fixture.emulator.webhookURL("sms"), caFile: fixture.caFile,
                headers: TestWebhooks.headers(secret: secret, id: "msg_1", body: body), body: body
            )
            #expect(response.status == 200, "\(response.bodyText)")
            #expect(response.httpVersion == "2")
            #expect(response.bodyText == "{}")

            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let email = Array("{\n  \"channel\": \"email\", \"to\": \"a@example.com\", \"html_body\": \"<p>\\n</p>\"\n}".utf8)
            let outcome = try await client.request("POST", "/webhooks/email", headers: TestWebhooks.headers(secret: secret, id: "msg_2", body: email), body: email)
            #expect(outcome.status == 200, "\(outcome)")
            let open = TestWebhooks.body(channel: "open-slack", to: "#general")
            #expect(try await client.request("POST", "/webhooks/open-slack", headers: TestWebhooks.headers(secret: secret, id: "msg_3", body: open), body: open).status == 200)

            let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines == [
                #"{"id":"msg_1","path":"sms","body":{"channel":"sms","to":"+15555550100","text":"Hi"}}"#,
                #"{"id":"msg_2","path":"email","body":{   "channel": "email", "to": "a@example.com", "html_body": "<p>\n</p>" }}"#,
                ##"{"id":"msg_3","path":"open-slack","body":{"channel":"open-slack","to":"#general","text":"Hi"}}"##,
                "",
            ])
            let mode = try FileManager.default.attributesOfItem(atPath: record)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            let stats = fixture.emulator.stats()
            #expect(stats.webhooks.requests == 3)
            #expect(stats.webhooks.delivered == 3)
            #expect(stats.webhooks.duplicates == 0)
            #expect(stats.webhooks.channels["sms"]?.delivered == 1)
            #expect(stats.webhooks.channels["email"]?.answers == ["200": 1])
            #expect(stats.statuses["200"] == 3)
            let statsText = try Curl.request("GET", "\(fixture.endpoint)/stats", caFile: fixture.caFile).bodyText
            #expect(statsText.contains(#""webhooks":{"#))
            #expect(statsText.contains(#""signatureFailures":0"#))
            #expect(!statsText.contains("msg_1"), "ids are not listed")
            #expect(!statsText.contains(String(secret.dropFirst(6).prefix(12))))
        }
    }

    @Test("verification: a tampered body, another secret, a stale timestamp are 401; one matching v1 entry among several is enough")
    func verification() async throws {
        let clock = ManualClock(seconds: 1_800_000_000)
        try await withEmulator({ $0.clock = clock.emulatorClock }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let secret = fixture.credentials.webhookSecret
            let now = clock.emulatorClock.seconds
            let body = TestWebhooks.body()
            let other = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
            let good = TestWebhooks.signature(secret: secret, id: "msg_v", timestamp: String(now), body: body)
            func headers(id: String = "msg_v", timestamp: Int64 = now, signature: String? = nil, secret: String = secret, body: [UInt8] = body) -> [(String, String)] {
                TestWebhooks.headers(secret: secret, id: id, timestamp: timestamp, body: body, signature: signature)
            }
            var tampered = body
            tampered[tampered.count - 3] ^= 0x01
            let cases: [(String, [(String, String)], [UInt8], Int, String)] = [
                ("tampered body", headers(), tampered, 401, "invalid_signature"),
                ("another secret", headers(secret: other), body, 401, "invalid_signature"),
                ("the secret's text as key", headers(signature: "v1," + Data(HMAC<SHA256>.authenticationCode(for: Data("msg_v.\(now).".utf8) + Data(body), using: SymmetricKey(data: Data(secret.utf8)))).base64EncodedString()), body, 401, "invalid_signature"),
                ("signed for another id", headers(id: "msg_w").filter { $0.0 != "webhook-id" } + [("webhook-id", "msg_v")], body, 401, "invalid_signature"),
                ("signed for another time", headers(timestamp: now - 1).filter { $0.0 != "webhook-timestamp" } + [("webhook-timestamp", String(now))], body, 401, "invalid_signature"),
                ("v1a only", headers(signature: "v1a," + good.dropFirst(3)), body, 401, "invalid_signature"),
                ("no version", headers(signature: String(good.dropFirst(3))), body, 401, "invalid_signature"),
                ("not base64", headers(signature: "v1,***"), body, 401, "invalid_signature"),
                ("empty signature", headers(signature: ""), body, 401, "invalid_signature"),
                ("301 s old", headers(timestamp: now - 301), body, 401, "stale_timestamp"),
                ("301 s ahead", headers(timestamp: now + 301), body, 401, "stale_timestamp"),
                ("in milliseconds", headers(timestamp: now * 1000), body, 401, "stale_timestamp"),
                ("32 digits", headers(signature: good).filter { $0.0 != "webhook-timestamp" } + [("webhook-timestamp", String(repeating: "9", count: 32))], body, 401, "stale_timestamp"),
                ("33 digits", headers().filter { $0.0 != "webhook-timestamp" } + [("webhook-timestamp", String(repeating: "9", count: 33))], body, 400, "invalid_webhook_timestamp"),
                ("negative", headers().filter { $0.0 != "webhook-timestamp" } + [("webhook-timestamp", "-1")], body, 400, "invalid_webhook_timestamp"),
                ("ISO date", headers().filter { $0.0 != "webhook-timestamp" } + [("webhook-timestamp", "2027-01-15T08:00:00Z")], body, 400, "invalid_webhook_timestamp"),
                ("no id", headers().filter { $0.0 != "webhook-id" }, body, 400, "missing_webhook_id"),
                ("no timestamp", headers().filter { $0.0 != "webhook-timestamp" }, body, 400, "missing_webhook_timestamp"),
                ("no signature", headers().filter { $0.0 != "webhook-signature" }, body, 400, "missing_webhook_signature"),
                ("two ids", headers() + [("webhook-id", "msg_x")], body, 400, "duplicate_webhook_id"),
                ("id with a space", headers(id: "msg v"), body, 400, "invalid_webhook_id"),
                ("257-byte id", headers(id: String(repeating: "i", count: 257)), body, 400, "invalid_webhook_id"),
            ]
            for (name, requestHeaders, requestBody, status, error) in cases {
                let outcome = try await client.request("POST", "/webhooks/sms", headers: requestHeaders, body: requestBody)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.jsonString("error") == error, "\(name): \(outcome)")
            }

            let bad = TestWebhooks.signature(secret: other, id: "msg_v", timestamp: String(now), body: body)
            let accepted: [(String, [(String, String)])] = [
                ("rotated secrets", headers(signature: "\(bad) v1a,AAAA \(good)")),
                ("the good one first", headers(signature: "\(good) \(bad)")),
                ("extra spaces", headers(signature: "  \(bad)   \(good) ")),
                ("300 s old", headers(id: "msg_old", timestamp: now - 300)),
                ("300 s ahead", headers(id: "msg_new", timestamp: now + 300)),
                ("256-byte id", headers(id: String(repeating: "~", count: 256))),
            ]
            for (name, requestHeaders) in accepted {
                let outcome = try await client.request("POST", "/webhooks/sms", headers: requestHeaders, body: body)
                #expect(outcome.status == 200, "\(name): \(outcome)")
                #expect(outcome.body == "{}", "\(name)")
            }
            let stats = fixture.emulator.stats()
            #expect(stats.webhooks.signatureFailures == cases.filter { $0.4 == "invalid_signature" }.count)
            #expect(stats.webhooks.answers["401 stale_timestamp"] == 4)
            #expect(stats.webhooks.delivered == 4, "msg_v three times: one delivery, two duplicates")
            #expect(stats.webhooks.duplicates == 2)
            #expect(stats.webhooks.channels["sms"]?.requests == accepted.count, "only requests whose signature verified")
        }
    }

    @Test("paths, methods, bodies: 404 for a bad channel path, 405, 400 for a body without channel and to, 413 above 1 MiB")
    func requestRules() async throws {
        try await withEmulator { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let secret = fixture.credentials.webhookSecret
            func signed(_ body: [UInt8], id: String) -> [(String, String)] { TestWebhooks.headers(secret: secret, id: id, body: body) }
            let body = TestWebhooks.body()
            let bigEmail = Array(#"{"channel":"email","to":"a@example.com","html_body":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 900_000) + Array(#""}"#.utf8)
            let tooBig = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
            let cases: [(String, String, String, [UInt8], Int, String)] = [
                ("empty channel", "POST", "/webhooks/", body, 404, "not_found"),
                ("escaped channel", "POST", "/webhooks/a%20b", body, 404, "not_found"),
                ("empty segment", "POST", "/webhooks/a//b", body, 404, "not_found"),
                ("trailing slash", "POST", "/webhooks/sms/", body, 404, "not_found"),
                ("257-byte channel", "POST", "/webhooks/" + String(repeating: "c", count: 257), body, 404, "not_found"),
                ("GET", "GET", "/webhooks/sms", [], 405, "method_not_allowed"),
                ("not JSON", "POST", "/webhooks/sms", Array("to=1".utf8), 400, "invalid_body"),
                ("an array", "POST", "/webhooks/sms", Array(#"[{"channel":"sms","to":"1"}]"#.utf8), 400, "invalid_body"),
                ("no to", "POST", "/webhooks/sms", Array(#"{"channel":"sms"}"#.utf8), 400, "invalid_body"),
                ("to a number", "POST", "/webhooks/sms", Array(#"{"channel":"sms","to":15555550100}"#.utf8), 400, "invalid_body"),
                ("empty body", "POST", "/webhooks/sms", [], 400, "invalid_body"),
                ("above 1 MiB", "POST", "/webhooks/email", tooBig, 413, "payload_too_large"),
            ]
            for (index, (name, method, path, requestBody, status, error)) in cases.enumerated() {
                let outcome = try await client.request(method, path, headers: signed(requestBody, id: "msg_r\(index)"), body: requestBody)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.jsonString("error") == error, "\(name): \(outcome)")
            }
            let nested = TestWebhooks.body(channel: "open")
            #expect(try await client.request("POST", "/webhooks/open/eu-1", headers: signed(nested, id: "msg_n"), body: nested).status == 200)
            #expect(try await client.request("POST", "/webhooks/email", headers: signed(bigEmail, id: "msg_big"), body: bigEmail).status == 200, "900 KB of email")
            let stats = fixture.emulator.stats()
            #expect(stats.webhooks.requests == cases.count + 2)
            #expect(stats.webhooks.delivered == 2)
            #expect(stats.webhooks.channels["open/eu-1"]?.delivered == 1)
            #expect(stats.webhooks.channels["a%20b"] == nil, "bad paths are not counted per channel")
            #expect(stats.webhooks.channels["sms"]?.answers["400 invalid_body"] == 5)
        }
    }

    @Test("a webhook id answered 200 before is answered 200 again as a duplicate, and recorded once; the memory of ids is bounded")
    func duplicates() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-dup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("webhooks.ndjson").path
        try await withEmulator({ $0.recordWebhooks = record; $0.maxRememberedWebhookIDs = 3 }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let secret = fixture.credentials.webhookSecret
            func send(_ id: String, channel: String = "sms", timestamp: Int64 = TestJWT.nowSeconds) async throws -> H2TestClient.Outcome {
                let body = TestWebhooks.body(channel: channel, text: id)
                return try await client.request("POST", "/webhooks/\(channel)", headers: TestWebhooks.headers(secret: secret, id: id, timestamp: timestamp, body: body), body: body)
            }
            #expect(try await send("msg_a").status == 200)
            // A retry signs again with a later timestamp: still the same id.
            let retry = try await send("msg_a", timestamp: TestJWT.nowSeconds + 5)
            #expect(retry.status == 200)
            #expect(retry.body == "{}")
            #expect(try await send("msg_a", channel: "email").status == 200, "dedupe is by id, whatever the channel")
            var stats = fixture.emulator.stats()
            #expect(stats.webhooks.delivered == 1)
            #expect(stats.webhooks.duplicates == 2)
            #expect(stats.webhooks.answers["200 duplicate"] == 2)
            #expect(stats.webhooks.channels["sms"]?.duplicates == 1)
            #expect(stats.webhooks.channels["email"]?.duplicates == 1)

            // Three ids remembered: msg_b, msg_c and msg_d push msg_a out, so it counts as new again.
            for id in ["msg_b", "msg_c", "msg_d", "msg_a", "msg_d"] {
                #expect(try await send(id).status == 200, "\(id)")
            }
            stats = fixture.emulator.stats()
            #expect(stats.webhooks.delivered == 5)
            #expect(stats.webhooks.duplicates == 3)
            let ids = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            }
            #expect(ids == ["msg_a", "msg_b", "msg_c", "msg_d", "msg_a"])

            // A reset forgets the ids too.
            fixture.emulator.resetStats()
            #expect(try await send("msg_d").status == 200)
            #expect(fixture.emulator.stats().webhooks.delivered == 1)
        }
    }

    @Test("faults by webhook id: scripted 429 and 503 with retry-after, 500, then 200 and a duplicate; rates as the plan says; refused and dropped unprocessed")
    func faults() async throws {
        var plan = FaultPlan(seed: 99, rates: FaultRates([.tooManyRequests: 0.2, .internalServerError: 0.2, .admUnregistered: 0.9]))
        plan.scripted["msg_s"] = [.tooManyRequests, .serviceUnavailable, .internalServerError, nil]
        plan.scripted["msg_r"] = [.refusedStream, .dropConnection, nil]
        plan.retryAfterSeconds = 6
        try await withEmulator({ $0.faults = plan }) { fixture in
            let secret = fixture.credentials.webhookSecret
            let body = TestWebhooks.body()
            let client = try await fixture.connect()
            var answers: [(Int?, String?, String?)] = []
            for _ in 0..<5 {
                let outcome = try await client.request("POST", "/webhooks/sms", headers: TestWebhooks.headers(secret: secret, id: "msg_s", body: body), body: body)
                answers.append((outcome.status, outcome.jsonString("error"), outcome.headers["retry-after"]))
            }
            #expect(answers.map(\.0) == [429, 503, 500, 200, 200])
            #expect(answers.map(\.1) == ["too_many_requests", "service_unavailable", "internal_error", nil, nil])
            #expect(answers.map(\.2) == ["6", "6", nil, nil, nil])

            for index in 0..<40 {
                let id = "msg_\(index)"
                let expected: (Int, String?) = switch plan.fault(for: .webhook, token: id, attempt: 0) {
                case nil: (200, nil)
                case .tooManyRequests?: (429, "too_many_requests")
                case .internalServerError?: (500, "internal_error")
                case let other?: (-1, other.rawValue)
                }
                let outcome = try await client.request("POST", "/webhooks/sms", headers: TestWebhooks.headers(secret: secret, id: id, body: body), body: body)
                #expect(outcome.status == expected.0, "\(id): \(outcome)")
                #expect(outcome.jsonString("error") == expected.1, "\(id): \(outcome)")
            }
            await client.close()

            var outcomes: [H2TestClient.Outcome] = []
            for _ in 0..<3 {
                let connection = try await fixture.connect()
                outcomes.append(try await connection.request("POST", "/webhooks/sms", headers: TestWebhooks.headers(secret: secret, id: "msg_r", body: body), body: body))
                await connection.close()
            }
            #expect(outcomes[0] == .reset(.refusedStream))
            #expect(outcomes[1] == .closed)
            #expect(outcomes[2].status == 200)
            let stats = fixture.emulator.stats()
            #expect(stats.webhooks.channels["sms"]?.answers["200 duplicate"] == 1)
            #expect(stats.webhooks.answers["refused_stream"] == 1)
            #expect(stats.webhooks.answers["dropped_connection"] == 1)
            #expect(stats.statuses["refused_stream"] == 1)
        }
    }
}
