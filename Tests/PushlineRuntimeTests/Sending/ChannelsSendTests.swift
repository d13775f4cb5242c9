import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Every channel at once, end to end: iOS, Android, web, Amazon, SMS and email devices sent
/// through `CampaignRun` to the emulator, which checks every credential (provider tokens, OAuth
/// access tokens for FCM and ADM, VAPID, Standard Webhooks signatures), decrypts every Web Push
/// body, and records what it accepted; what it recorded must be what the dry run writes.
@Suite("Sending run: every channel to the emulator", .serialized)
struct ChannelsSendTests {
    static let customers = 300
    static let admClient = ADMAccount(clientID: "amzn1.application-oa2-client.pushline-test", clientSecret: "adm-s3cret+/=&")
    static let webhookKey = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static var webhookSecret: String { "whsec_" + Data(webhookKey).base64EncodedString() }

    static func start(faults: FaultPlan = FaultPlan()) async throws -> (SendingRunHarness, WebPushCredentials) {
        let web = WebPushCredentials.generate(subscriptions: 32)
        let harness = try await SendingRunHarness.start(faults: faults) { configuration, scratch in
            configuration.webPush = web.account
            configuration.adm = Self.admClient
            configuration.webhooks = WebhookAccount(key: Self.webhookKey)
            configuration.recordADM = scratch.file("adm.ndjson")
            configuration.recordWebhooks = scratch.file("webhooks.ndjson")
        }
        try web.vapidPrivateKeyPEM.write(toFile: harness.scratch.file("vapid.pem"), atomically: true, encoding: .utf8)
        try (Self.admClient.clientSecret + "\n").write(toFile: harness.scratch.file("adm-secret.txt"), atomically: true, encoding: .utf8)
        try (Self.webhookSecret + "\n").write(toFile: harness.scratch.file("webhook-secret.txt"), atomically: true, encoding: .utf8)
        return (harness, web)
    }

    static func admToken(_ n: Int) -> String { "amzn1.adm-registration.v3.pushline-\(n)-" + String(repeating: "x", count: 40) }

    /// Customer n has one device of each kind; the SMS text of every fifth is not GSM-7.
    static func writeAudience(_ harness: SendingRunHarness, web: WebPushCredentials) throws {
        var text = ""
        for n in 0..<customers {
            let subscription = web.subscriptions[n % web.subscriptions.count].json(origin: harness.emulator.endpoint)
            let name = n % 5 == 0 ? "Zoë \(n) 🎉" : "Ann \(n)"
            text += "{\"id\":\"c-\(n)\",\"first_name\":\"\(name)\",\"devices\":["
            text += "{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"},"
            text += "{\"platform\":\"web\",\"subscription\":\(subscription)},{\"platform\":\"amazon\",\"token\":\"\(admToken(n))\"},"
            text += "{\"platform\":\"sms\",\"address\":\"+1555\(String(format: "%07d", n))\"},{\"platform\":\"email\",\"address\":\"ann\(n)@example.com\"}]}\n"
        }
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
    }

    static func pipeline(_ harness: SendingRunHarness) throws -> String {
        var yaml = try String(contentsOfFile: try harness.writePipeline(), encoding: .utf8)
        let endpoint = harness.emulator.endpoint
        yaml = yaml.replacingOccurrences(of: "device_types: [ios, android]", with: "device_types: [ios, android, web, amazon, sms, email]\ndedupe: false")
        yaml = yaml.replacingOccurrences(of: "  alert: \"Hello {{ id }}\"\n", with: """
              title: "Hi {{ first_name }}"
              alert: "Hello {{ first_name }}, your order {{ id }} shipped"
              email:
                subject: "Order {{ id }}"
                plaintext_body: "Hello {{ first_name }}"
                message_type: transactional
                sender_name: Shop
                sender_address: shop@example.com
                reply_to: help@example.com

            """)
        yaml += """
          webpush:
            vapid_private_key: vapid.pem
            subject: "mailto:ops@example.com"
            ca_file: ca.pem
            allow_private_endpoints: true
            rate: 200000/s
          adm:
            client_id: "\(admClient.clientID)"
            client_secret_file: adm-secret.txt
            token_uri: "\(harness.emulator.admTokenURI)"
            endpoint: "\(endpoint)"
            ca_file: ca.pem
            connections: 2
            streams: 50
            rate: 200000/s
          sms:
            url: "\(endpoint)/webhooks/sms"
            secret_file: webhook-secret.txt
            ca_file: ca.pem
            rate: 200000/s
          email:
            url: "\(endpoint)/webhooks/email"
            secret_file: webhook-secret.txt
            ca_file: ca.pem
            rate: 200000/s

        """
        let path = harness.scratch.file("pipeline-channels.yaml")
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A JSON value as sorted-keys text, for comparing bodies as sets.
    static func canonical(_ value: Any?) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: try #require(value), options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    @Test("a mixed audience (ios, android, web, amazon, sms, email): every device reconciles; ADM and webhook bodies arrive as the dry run writes them, every signature verified",
          .timeLimit(.minutes(5)))
    func everyChannel() async throws {
        let (harness, web) = try await Self.start()
        try Self.writeAudience(harness, web: web)
        let path = try Self.pipeline(harness)
        let logs = LogRecorder()
        let report = try await harness.run(pipelinePath: path, logs: logs)
        let stats = harness.emulator.stats()
        let n = Self.customers

        #expect(report.failure == nil, "\(report.failure ?? "")")
        #expect(report.counts.devices == 6 * n)
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        #expect(report.counts.sent[.apns] == n && report.counts.sent[.fcm] == n && report.counts.sent[.webpush] == n)
        #expect(report.counts.sent[.adm] == n)
        #expect(report.counts.sent[.webhook] == 2 * n)
        #expect(report.counts.sentTotal == 6 * n)
        #expect(stats.adm.delivered == n && stats.webpush.delivered == n)
        #expect(stats.webhooks.delivered == 2 * n)
        #expect(stats.webhooks.signatureFailures == 0 && stats.webhooks.duplicates == 0)
        #expect(stats.admOAuth.issued >= 1)

        // What the emulator accepted is what the dry run writes, body by body.
        let dryRun = try await harness.runDryRun(pipelinePath: path, output: harness.scratch.file("dry"))
        #expect(dryRun.reconciled)
        var expectedADM: [String: Int] = [:]
        for line in try readResults(harness.scratch.file("dry") + "/requests-adm.ndjson") {
            let url = try #require(line["url"] as? String)
            let id = url.split(separator: "/").dropLast().last.map(String.init) ?? "?"
            expectedADM[id + " " + (try Self.canonical(line["body"])), default: 0] += 1
        }
        var gotADM: [String: Int] = [:]
        for line in try readResults(harness.scratch.file("adm.ndjson")) {
            gotADM["\(line["registration_id"] as? String ?? "?") " + (try Self.canonical(line["body"])), default: 0] += 1
        }
        #expect(gotADM.count == n)
        #expect(gotADM == expectedADM)

        var expectedHooks: [String: Int] = [:]
        for line in try readResults(harness.scratch.file("dry") + "/requests-webhook.ndjson") {
            let url = try #require(line["url"] as? String)
            expectedHooks[String(url.split(separator: "/").last ?? "") + " " + (try Self.canonical(line["body"])), default: 0] += 1
        }
        var gotHooks: [String: Int] = [:]
        var ids = Set<String>()
        for line in try readResults(harness.scratch.file("webhooks.ndjson")) {
            gotHooks["\(line["path"] as? String ?? "?") " + (try Self.canonical(line["body"])), default: 0] += 1
            ids.insert(line["id"] as? String ?? "")
        }
        #expect(gotHooks == expectedHooks)
        #expect(ids.count == 2 * n && ids.allSatisfy { $0.hasPrefix("msg_") && $0.utf8.count == 36 })
        // SMS bodies carry their segments: "Zoë" is GSM-7, the emoji is not.
        let sms = try readResults(harness.scratch.file("webhooks.ndjson")).filter { $0["path"] as? String == "sms" }
        #expect(sms.count == n)
        #expect(sms.allSatisfy { line in
            let body = line["body"] as? [String: Any]
            let text = body?["text"] as? String ?? ""
            return body?["encoding"] as? String == (text.contains("🎉") ? "UCS-2" : "GSM-7") && body?["segments"] as? Int == 1
        })
        #expect(!logs.all.contains { $0.contains(Self.admClient.clientSecret) || $0.contains(String(Self.webhookSecret.dropFirst(6).prefix(16))) }, "no secret in the logs")
        await harness.stop()
    }

    @Test("ADM: unregistered ids go to invalid-tokens; a replaced id is sent and listed with its new id; 429 and 503 are retried",
          .timeLimit(.minutes(5)))
    func admFaults() async throws {
        var faults = FaultPlan(seed: 2026, rates: FaultRates([.admUnregistered: 0.1, .admReplaced: 0.1, .tooManyRequests: 0.05, .serviceUnavailable: 0.05]))
        faults.retryAfterSeconds = 0
        let (harness, web) = try await Self.start(faults: faults)
        try Self.writeAudience(harness, web: web)
        let report = try await harness.run(pipelinePath: try Self.pipeline(harness), logs: LogRecorder())
        let stats = harness.emulator.stats()
        await harness.stop()
        let n = Self.customers

        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        let results = harness.scratch.file("out")
        let invalid = try readResults(results + "/invalid-tokens.ndjson").filter { $0["provider"] as? String == "adm" }
        let unregistered = invalid.filter { $0["reason"] as? String == "Unregistered" }
        let replaced = invalid.filter { $0["reason"] as? String == "replaced" }
        var expectedUnregistered = 0, expectedReplaced = 0
        for c in 0..<n {
            switch faults.fault(for: .adm, token: Self.admToken(c), attempt: 0) {
            case .admUnregistered?: expectedUnregistered += 1
            case .admReplaced?: expectedReplaced += 1
            default: break
            }
        }
        #expect(expectedUnregistered > 0 && expectedReplaced > 0)
        #expect(unregistered.count == expectedUnregistered)
        #expect(replaced.count == expectedReplaced)
        for line in replaced {
            let token = try #require(line["token"] as? String)
            #expect(line["new_token"] as? String == faults.replacementRegistrationID(for: token))
            #expect(line["platform"] as? String == "amazon")
        }
        // A replaced device was delivered: it is sent, and counted.
        let failedADM = report.counts.byProvider[.adm]?.failed ?? 0
        #expect((report.counts.sent[.adm] ?? 0) + expectedUnregistered + failedADM == n)
        #expect(report.delivery.first { $0.provider == .adm }?.tokensReplaced == expectedReplaced)
        #expect(stats.adm.requests > n - expectedUnregistered, "429 and 503 were retried")
    }

    @Test("webhooks: 429 and 503 are retried under the same webhook-id (the emulator draws its faults per id and attempt), nothing delivered twice",
          .timeLimit(.minutes(5)))
    func webhookRetriesKeepTheirId() async throws {
        var faults = FaultPlan(seed: 77, rates: FaultRates([.serviceUnavailable: 0.15, .tooManyRequests: 0.1]))
        faults.retryAfterSeconds = 0
        let (harness, web) = try await Self.start(faults: faults)
        try Self.writeAudience(harness, web: web)
        let report = try await harness.run(pipelinePath: try Self.pipeline(harness), logs: LogRecorder())
        let stats = harness.emulator.stats()
        await harness.stop()
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        let delivered = try readResults(harness.scratch.file("webhooks.ndjson"))
        #expect(stats.webhooks.duplicates == 0)
        #expect(delivered.count == stats.webhooks.delivered)
        #expect(report.counts.sent[.webhook] == delivered.count)
        // With a stable id, attempt k of a message is the emulator's attempt k of that id: the
        // requests it saw are exactly what the plan predicts for the ids it delivered.
        var predicted = 0
        for line in delivered {
            let id = try #require(line["id"] as? String)
            var attempt = 0
            while faults.fault(for: .webhook, token: id, attempt: attempt) != nil { attempt += 1 }
            predicted += attempt + 1
        }
        #expect(predicted > delivered.count, "the plan retried some")
        if report.counts.byProvider[.webhook]?.failed == 0 {
            #expect(stats.webhooks.requests == predicted)
        }
    }

    @Test("a webhook receiver refusing the signature (another secret) stops that channel only; the other channels send",
          .timeLimit(.minutes(5)))
    func wrongSecretStopsTheChannel() async throws {
        let (harness, web) = try await Self.start()
        try Self.writeAudience(harness, web: web)
        let other = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        try (other + "\n").write(toFile: harness.scratch.file("other-secret.txt"), atomically: true, encoding: .utf8)
        var yaml = try String(contentsOfFile: try Self.pipeline(harness), encoding: .utf8)
        yaml = yaml.replacingOccurrences(of: "    url: \"\(harness.emulator.endpoint)/webhooks/sms\"\n    secret_file: webhook-secret.txt", with: "    url: \"\(harness.emulator.endpoint)/webhooks/sms\"\n    secret_file: other-secret.txt")
        let path = harness.scratch.file("pipeline-wrong.yaml")
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let logs = LogRecorder()
        let report = try await harness.run(pipelinePath: path, logs: logs)
        let stats = harness.emulator.stats()
        await harness.stop()
        let n = Self.customers
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        #expect(report.counts.sent[.webhook] == n, "the email channel sent")
        #expect(report.counts.byProvider[.webhook]?.failed == n, "every sms device failed")
        #expect(stats.webhooks.signatureFailures >= 1)
        #expect(stats.webhooks.signatureFailures <= 5, "the channel stopped instead of burning the audience")
        let failed = try readResults(harness.scratch.file("out") + "/failed.ndjson")
        let reasons = Set(failed.compactMap { $0["reason"] as? String })
        #expect(reasons.isSubset(of: ["webhook_unauthorized", "provider_stopped"]) && reasons.contains("webhook_unauthorized"))
        #expect(logs.all.contains { $0.contains("the sms webhook") && $0.contains("stopping this provider") }, "\(logs.all.suffix(5))")
    }
}
