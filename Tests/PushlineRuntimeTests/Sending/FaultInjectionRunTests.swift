import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import Testing

/// Issue 8's acceptance run: 100,000 devices sent through `CampaignRun` and the real senders to
/// the emulator, which injects seeded faults. Every device must end exactly once in sent,
/// invalid-tokens or failed (the malformed lines in rejects), each as the fault plan says, the
/// emulator's per-token counts must agree (a second delivery only where the result says
/// `possible_duplicate`), the summary must reconcile, and no secret may appear anywhere.
@Suite("Sending run: 100,000 devices against the emulator with seeded faults", .serialized)
struct FaultInjectionRunTests {
    static let goodLines = 50_000
    /// A malformed line after every this many good ones: rejected, never sent.
    static let malformedEvery = 1_000

    static let faults: FaultPlan = {
        var plan = FaultPlan(seed: 2026, rates: FaultRates([
            .apnsUnregistered: 0.02, .apnsBadDeviceToken: 0.01, .fcmUnregistered: 0.02,
            .tooManyRequests: 0.01, .internalServerError: 0.01, .serviceUnavailable: 0.01,
            .refusedStream: 0.005, .dropConnection: 0.00005,
        ]))
        // Retry-After 0: a 1-s Retry-After on 1 % of answers would pause the lanes most of the run
        // (a 503's Retry-After pauses the whole provider); the pause is tested at lane level.
        plan.retryAfterSeconds = 0
        return plan
    }()

    /// Writes the audience; returns the line number of each good line's index and the malformed lines.
    static func writeAudience(to path: String) throws -> (lineOf: [Int], malformed: [Int]) {
        var text = ""
        text.reserveCapacity(goodLines * 260)
        var lineOf: [Int] = []
        var malformed: [Int] = []
        var line = 0
        for n in 0..<goodLines {
            if n > 0 && n % malformedEvery == 0 {
                line += 1
                malformed.append(line)
                text += "{\"id\":\"bad-\(n)\",\"devices\":[\n"
            }
            line += 1
            lineOf.append(line)
            text += "{\"id\":\"c-\(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"}]}\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (lineOf, malformed)
    }

    @Test(.timeLimit(.minutes(10)))
    func everyDeviceEndsExactlyOnceAsTheFaultPlanSays() async throws {
        let harness = try await SendingRunHarness.start(faults: Self.faults)
        let logs = LogRecorder()
        let audience = try Self.writeAudience(to: harness.scratch.file("audience.ndjson"))
        let report = try await harness.run(pipelinePath: try harness.writePipeline(), logs: logs)
        let stats = harness.emulator.stats()
        await harness.stop()

        // The run: 100,000 devices, 49 malformed lines rejected, everything reconciled.
        let devices = 2 * Self.goodLines
        #expect(report.failure == nil, "\(report.failure ?? "")")
        #expect(report.counts.devices == devices)
        #expect(report.counts.linesRejected == audience.malformed.count)
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider && report.reconciled)
        #expect(report.counts.sentTotal + report.counts.invalidTokenTotal + report.counts.failedTotal == devices)

        // Every device once, in exactly one file.
        let out = harness.scratch.file("out")
        let sent = try readResults(out + "/sent.ndjson")
        let invalid = try readResults(out + "/invalid-tokens.ndjson")
        let failed = try readResults(out + "/failed.ndjson")
        let rejects = try readResults(out + "/rejects.ndjson")
        var outcome: [Int: (kind: String, result: [String: Any])] = [:]  // key: line * 2 + device
        var duplicates = 0
        for (kind, results) in [("sent", sent), ("invalid", invalid), ("failed", failed)] {
            for result in results {
                let key = (result["line"] as! Int) * 2 + (result["device"] as! Int)
                if outcome[key] != nil { duplicates += 1 }
                outcome[key] = (kind, result)
            }
        }
        #expect(duplicates == 0)
        #expect(outcome.count == devices)
        #expect(Set(rejects.compactMap { $0["line"] as? Int }) == Set(audience.malformed))
        #expect(report.counts.sentTotal == sent.count && report.counts.invalidTokenTotal == invalid.count && report.counts.failedTotal == failed.count)

        // Each device as the plan says, and as the emulator saw it.
        var mismatches: [String] = []
        var possibleDuplicates = 0
        var retried = 0
        for n in 0..<Self.goodLines {
            let line = audience.lineOf[n]
            for (device, provider, token) in [(0, EmulatedProvider.apns, TestTokens.apns(n)), (1, .fcm, TestTokens.fcm(n))] {
                guard let (kind, result) = outcome[line * 2 + device] else {
                    mismatches.append("line \(line) device \(device): no outcome")
                    continue
                }
                let seen = (provider == .apns ? stats.apns : stats.fcm).tokens[token] ?? EmulatorStats.TokenStats()
                let attempts = result["attempts"] as? Int ?? 0
                if attempts > 1 { retried += 1 }
                if let fault = Self.faults.fault(for: provider, token: token, attempt: 0), fault.isTokenLevel {
                    let reason = ["apnsUnregistered": "Unregistered", "apnsBadDeviceToken": "BadDeviceToken", "fcmUnregistered": "UNREGISTERED"][fault.rawValue]
                    if kind != "invalid" || result["reason"] as? String != reason || seen.delivered != 0 {
                        mismatches.append("line \(line) \(provider): expected invalid token \(reason ?? "?"), got \(kind) \(result)")
                    }
                    if fault == .apnsUnregistered, result["timestamp"] as? Int == nil {
                        mismatches.append("line \(line): a 410 without its timestamp")
                    }
                    continue
                }
                let duplicate = result["possible_duplicate"] as? Bool == true
                if duplicate { possibleDuplicates += 1 }
                switch kind {
                case "sent":
                    // Delivered once; twice only where the result says it may have been.
                    if seen.delivered < 1 || seen.delivered > (duplicate ? 2 : 1) {
                        mismatches.append("line \(line) \(provider): sent, delivered \(seen.delivered)×, possible_duplicate \(duplicate)")
                    }
                    // The emulator never saw more attempts than the sender made. A stream refused
                    // with REFUSED_STREAM was not processed and curl resends it by itself: the
                    // emulator sees two requests, the sender one attempt.
                    let refused = seen.answers.filter { $0 == "refused_stream" }.count
                    if seen.requests - refused > attempts { mismatches.append("line \(line) \(provider): \(seen.requests) requests seen (\(refused) refused), \(attempts) attempts reported") }
                    let id = result[provider == .apns ? "apns_id" : "message"] as? String
                    if id == nil || id!.isEmpty { mismatches.append("line \(line) \(provider): sent without an id") }
                case "failed":
                    // Only an exhausted retry budget or a second unanswered attempt may fail a
                    // device without a token-level fault.
                    let reason = result["reason"] as? String ?? ""
                    if !["retries_exhausted", "retry_deadline_exceeded", "no_response_after_resend"].contains(reason) {
                        mismatches.append("line \(line) \(provider): failed with \(reason)")
                    }
                default:
                    mismatches.append("line \(line) \(provider): \(kind) without a token-level fault: \(result)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
        // The plan's attempt-level faults (3.5 % of APNs attempts, 2.5 % of FCM's) made retries.
        #expect(retried > 1_000)
        // A dropped connection makes only its own in-flight requests possible duplicates: sent
        // (possible_duplicates) or, when a copy may have been processed and the device still
        // failed, failed (possibly_delivered).
        #expect(possibleDuplicates == report.counts.possibleDuplicates + report.counts.possiblyDelivered)
        #expect(failed.count <= devices / 1_000, "\(failed.count) failed")

        // Connections: the configured 2 + 2 (and the OAuth one), plus one for each connection a
        // REFUSED_STREAM or a drop retired (the libcurl engine retires the whole connection on
        // a refused stream), never one per request: libcurl's resets after empty 200s are tolerated.
        let retiring = stats.statuses["refused_stream", default: 0] + stats.statuses["dropped_connection", default: 0]
        #expect(retiring > 0)
        #expect(stats.connectionsOpened <= 5 + retiring, "\(stats.connectionsOpened) connections, \(retiring) refused or dropped")
        #expect(stats.goawaysSent == 0)

        // No secret anywhere: keys, provider tokens (JWTs start eyJ), OAuth assertions, access tokens.
        let keyLines = harness.credentials.apnsKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        var texts = logs.all
        for name in try FileManager.default.contentsOfDirectory(atPath: out) {
            texts.append(try String(contentsOfFile: out + "/" + name, encoding: .utf8))
        }
        for text in texts {
            for secret in ["eyJ", "ya29.", "PRIVATE KEY", "assertion="] + keyLines where text.contains(secret) {
                Issue.record("an output or log line holds '\(secret.prefix(12))…'")
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aWrongAPNsKeyStopsTheProviderWithinAFewRequests() async throws {
        let harness = try await SendingRunHarness.start()
        // A valid P-256 key the emulator does not know, under the emulator's key id.
        let wrong = try EmulatorCredentials.generate()
        try wrong.apnsKeyPEM.write(toFile: harness.scratch.file("wrong.p8"), atomically: true, encoding: .utf8)
        var text = ""
        for n in 0..<2_000 {
            text += "{\"id\":\"c-\(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"}]}\n"
        }
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        let logs = LogRecorder()
        let report = try await harness.run(pipelinePath: try harness.writePipeline(apnsKeyFile: "wrong.p8"), logs: logs)
        let stats = harness.emulator.stats()
        await harness.stop()

        // APNs saw a few requests, not the audience.
        #expect(stats.apns.requests >= 1 && stats.apns.requests <= 4, "\(stats.apns.requests) APNs requests")
        #expect(stats.apns.delivered == 0)
        // The run failed, saying why in words a person can act on.
        #expect(report.status == .failed && report.exit == .providerStopped)
        let failure = report.failure ?? ""
        #expect(failure.contains("apns") && failure.contains("InvalidProviderToken") && failure.contains(harness.credentials.keyID), "\(failure)")
        // Every device is still accounted for: FCM sent, APNs failed (the stopped provider's).
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider)
        #expect(report.counts.sent[.fcm] == 2_000)
        #expect(report.counts.byProvider[.apns]?.failed == 2_000)
        let failed = try readResults(harness.scratch.file("out/failed.ndjson"))
        let reasons = Dictionary(grouping: failed, by: { $0["reason"] as? String ?? "" }).mapValues(\.count)
        #expect(reasons.keys.allSatisfy { $0 == "provider_stopped" || $0 == "InvalidProviderToken" }, "\(reasons)")
        #expect((reasons["provider_stopped"] ?? 0) >= 1_996)
    }
}
