import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Web Push end to end: a mixed audience (iOS, Android, web) sent through `CampaignRun` to the
/// emulator, which decrypts every Web Push body with the subscription keys it issued and checks
/// every VAPID token; what it decrypted must be what the dry run of the same pipeline writes.
@Suite("Sending run: Web Push to the emulator", .serialized)
struct WebPushSendTests {
    static let customers = 600
    /// Every this many customers, a web device whose p256dh decodes but is not a curve point.
    static let badKeyEvery = 100

    static func start(faults: FaultPlan = FaultPlan()) async throws -> (SendingRunHarness, WebPushCredentials, String) {
        let web = WebPushCredentials.generate(subscriptions: 64)
        let harness = try await SendingRunHarness.start(faults: faults) { configuration, scratch in
            configuration.webPush = web.account
            configuration.recordWebPush = scratch.file("received.ndjson")
        }
        try web.vapidPrivateKeyPEM.write(toFile: harness.scratch.file("vapid.pem"), atomically: true, encoding: .utf8)
        return (harness, web, harness.scratch.file("received.ndjson"))
    }

    /// Customer n has an iOS, an Android and a web device; the web one uses subscription n % 64.
    static func writeAudience(_ harness: SendingRunHarness, web: WebPushCredentials) throws {
        let origin = harness.emulator.endpoint
        var text = ""
        for n in 0..<customers {
            var subscription = web.subscriptions[n % web.subscriptions.count].json(origin: origin)
            if n % badKeyEvery == 7 {
                // 65 bytes that decode but are no P-256 point: 0x04 then x = y = 0.
                let zeros = "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                subscription = subscription.replacingOccurrences(
                    of: #""p256dh":"[^"]*""#, with: "\"p256dh\":\"\(zeros)\"", options: .regularExpression
                )
            }
            text += "{\"id\":\"c-\(n)\",\"first_name\":\"Ann \(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},"
            text += "{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"},{\"platform\":\"web\",\"subscription\":\(subscription)}]}\n"
        }
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
    }

    static func pipeline(_ harness: SendingRunHarness, allowPrivate: Bool = true) throws -> String {
        var yaml = try String(contentsOfFile: try harness.writePipeline(), encoding: .utf8)
        // Customers share the emulator's 64 subscriptions: dedupe would skip the repeats.
        yaml = yaml.replacingOccurrences(of: "device_types: [ios, android]", with: "device_types: [ios, android, web]\ndedupe: false")
        yaml = yaml.replacingOccurrences(of: "  alert: \"Hello {{ id }}\"\n", with: "  title: \"Hi {{ first_name }}\"\n  alert: \"Hello {{ id }}\"\n  web:\n    time_to_live: 3600\n    urgency: high\n")
        yaml += """
          webpush:
            vapid_private_key: vapid.pem
            subject: "mailto:ops@example.com"
            ca_file: ca.pem
            allow_private_endpoints: \(allowPrivate)
            connections: 2
            streams: 50
            rate: 200000/s

        """
        let path = harness.scratch.file("pipeline-web.yaml")
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("every device reconciles; each Web Push body decrypts, at the emulator, to the dry run's plaintext; VAPID verified",
          .timeLimit(.minutes(5)))
    func mixedAudience() async throws {
        let (harness, web, received) = try await Self.start()
        try Self.writeAudience(harness, web: web)
        let path = try Self.pipeline(harness)
        let logs = LogRecorder()
        let report = try await harness.run(pipelinePath: path, logs: logs)
        let stats = harness.emulator.stats()

        let devices = 3 * Self.customers
        let badKeys = Self.customers / Self.badKeyEvery
        #expect(report.failure == nil, "\(report.failure ?? "")")
        #expect(report.counts.devices == devices)
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        #expect(report.counts.sent[.webpush] == Self.customers - badKeys)
        #expect(report.counts.byProvider[.webpush]?.failed == badKeys)
        #expect(report.counts.sentTotal == devices - badKeys)
        let failed = try readResults(harness.scratch.file("out") + "/failed.ndjson")
        #expect(failed.count == badKeys)
        #expect(failed.allSatisfy { $0["reason"] as? String == "invalid_subscription_key" && $0["attempts"] as? Int == 0 })
        // The emulator decrypted and accepted exactly the messages sent, nothing else.
        #expect(stats.webpush.delivered == Self.customers - badKeys)
        #expect(stats.webpush.requests == Self.customers - badKeys)

        // What it decrypted is what the dry run writes as the plaintext, subscription by subscription.
        let dryRun = try await harness.runDryRun(pipelinePath: path, output: harness.scratch.file("dry"))
        #expect(dryRun.reconciled)
        var expected: [String: Int] = [:]
        for line in try readResults(harness.scratch.file("dry") + "/requests-webpush.ndjson") {
            let url = try #require(line["url"] as? String)
            if url.isEmpty { continue }
            let body = try JSONSerialization.data(withJSONObject: try #require(line["body"]), options: [.sortedKeys])
            let id = String(url.split(separator: "/").last ?? "")
            let lineNumber = try #require(line["line"] as? Int)
            if (lineNumber - 1) % Self.badKeyEvery == 7 { continue }  // never encrypted, never sent
            expected[id + " " + String(decoding: body, as: UTF8.self), default: 0] += 1
        }
        var got: [String: Int] = [:]
        for line in try readResults(received) {
            let body = try JSONSerialization.data(withJSONObject: try #require(line["plaintext"]), options: [.sortedKeys])
            got["\(line["subscription"] as? String ?? "?") " + String(decoding: body, as: UTF8.self), default: 0] += 1
        }
        #expect(got.count == Self.customers - badKeys, "every plaintext names its customer, so each is distinct")
        #expect(got == expected)
        #expect(!logs.all.contains { $0.contains(web.vapidPrivateKeyPEM.split(separator: "\n")[1]) }, "no key in the logs")
        await harness.stop()
    }

    @Test("without allow_private_endpoints, loopback endpoints are refused unsent; the other providers send", .timeLimit(.minutes(5)))
    func privateEndpointsRefused() async throws {
        let (harness, web, _) = try await Self.start()
        try Self.writeAudience(harness, web: web)
        let report = try await harness.run(pipelinePath: try Self.pipeline(harness, allowPrivate: false), logs: LogRecorder())
        let stats = harness.emulator.stats()
        await harness.stop()
        #expect(report.counts.reconciles && report.reconciled)
        #expect(report.counts.byProvider[.webpush]?.failed == Self.customers)
        #expect(report.counts.sent[.apns] == Self.customers && report.counts.sent[.fcm] == Self.customers)
        #expect(stats.webpush.requests == 0, "nothing reached the loopback push service")
        let failed = try readResults(harness.scratch.file("out") + "/failed.ndjson")
        let reasons = Set(failed.compactMap { $0["reason"] as? String })
        #expect(reasons == ["endpoint_refused"])
    }

    @Test("a subscription the push service calls gone (410) goes to invalid-tokens; 429 and 503 are retried", .timeLimit(.minutes(5)))
    func gone() async throws {
        var faults = FaultPlan(seed: 11, rates: FaultRates([.webpushGone: 0.2, .tooManyRequests: 0.05, .serviceUnavailable: 0.05]))
        faults.retryAfterSeconds = 0
        let (harness, web, _) = try await Self.start(faults: faults)
        try Self.writeAudience(harness, web: web)
        let report = try await harness.run(pipelinePath: try Self.pipeline(harness), logs: LogRecorder())
        await harness.stop()
        let badKeys = Self.customers / Self.badKeyEvery
        #expect(report.counts.reconciles && report.reconciled)
        let invalid = try readResults(harness.scratch.file("out") + "/invalid-tokens.ndjson").filter { $0["provider"] as? String == "webpush" }
        #expect(!invalid.isEmpty)
        #expect(invalid.allSatisfy { $0["reason"] as? String == "subscription_gone" && ($0["token"] as? String)?.hasPrefix("https://") == true })
        #expect((report.counts.sent[.webpush] ?? 0) + invalid.count + badKeys == Self.customers)
    }

    @Test("--dry-run-encrypt: each body as it would be sent, in base64url, with its VAPID authorization and content-length; an independent decryptor opens it",
          .enabled(if: WebPushCheck.isAvailable, "needs /usr/bin/python3 with the cryptography package (apt install python3-cryptography)"),
          .timeLimit(.minutes(5)))
    func dryRunEncrypt() async throws {
        let (harness, web, _) = try await Self.start()
        try Self.writeAudience(harness, web: web)
        let path = try Self.pipeline(harness)
        let plain = try await harness.runDryRun(pipelinePath: path, output: harness.scratch.file("plain"))
        let encrypted = try await harness.runDryRun(pipelinePath: path, output: harness.scratch.file("sealed"), encrypt: true)
        await harness.stop()
        #expect(plain.reconciled && encrypted.reconciled)
        let plainLines = try readResults(harness.scratch.file("plain") + "/requests-webpush.ndjson")
        let sealedLines = try readResults(harness.scratch.file("sealed") + "/requests-webpush.ndjson")
        #expect(plainLines.count == Self.customers && sealedLines.count == Self.customers)
        let keys = Dictionary(uniqueKeysWithValues: web.subscriptions.map { ($0.id, $0) })
        for (index, (plainLine, sealedLine)) in zip(plainLines, sealedLines).enumerated() {
            let headers = try #require(sealedLine["headers"] as? [String: Any])
            if index % Self.badKeyEvery == 7 {
                #expect(sealedLine["body"] is NSNull && sealedLine["not_encrypted"] as? String == "invalid_subscription_key")
                continue
            }
            let body = try #require(sealedLine["body"] as? String)
            let bytes = try #require(WebPushCheck.bytes(base64url: body))
            #expect(sealedLine["body_encoding"] as? String == "base64url")
            #expect(headers["content-length"] as? String == String(bytes.count))
            #expect(headers["content-encoding"] as? String == "aes128gcm")
            // A sample through the independent decryptor and verifier (a process each).
            guard index % 50 == 0 else { continue }
            let url = try #require(sealedLine["url"] as? String)
            let subscription = try #require(keys[String(url.split(separator: "/").last ?? "")])
            let opened = try WebPushCheck.run([
                "decrypt", WebPushCheck.base64url(subscription.privateKey.rawRepresentation), WebPushCheck.base64url(subscription.auth), body,
            ])
            #expect(opened.status == 0, "\(opened.stderr)")
            let expected = try JSONSerialization.data(withJSONObject: try #require(plainLine["body"]), options: [.sortedKeys])
            let got = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: opened.stdout), options: [.sortedKeys])
            #expect(got == expected)
            let authorization = try #require(headers["authorization"] as? String)
            let verified = try WebPushCheck.run(["verify-vapid", authorization, harness.emulator.endpoint, String(Int(Date().timeIntervalSince1970))])
            #expect(verified.status == 0, "\(verified.stderr)")
        }
    }
}
