import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineEncoding
import PushlineRuntime
import Testing

/// Issue 34, item 2, through a whole run with the real senders: an immediate stop (SIGTERM and
/// SIGINT together, or `--drain-timeout 0`) while requests are still being handed to the lane
/// leaves every device that was not attempted in `unsent.ndjson`, never in `failed.ndjson`, and
/// a `--resume` sends each of them once, marking exactly those whose attempt the stop cut off.
@Suite("Stopping a run at once: untried devices are unsent, and a resume sends them", .serialized)
struct ImmediateStopResumeTests {
    static let customers = 6000
    /// The encoder stops the run at once when it has encoded this line: by then the lane's
    /// queue and its inbox are full (one connection of one stream: 1,025 each) and the feeder is
    /// waiting to hand over more. Nothing is answered, so the batch window (13 batches of 500
    /// lines) must reach it.
    static let stopLine = 4000

    @Test(.timeLimit(.minutes(5)))
    func anImmediateStopLeavesUntriedDevicesUnsentAndAResumeSendsThemOnce() async throws {
        // The first run's server answers nothing within the test (10 minutes): what the lane put
        // on the wire is cut off by the stop; everything else was never attempted.
        var silent = FaultPlan()
        silent.latencyMilliseconds = FaultPlan.maxLatencyMilliseconds
        let harness = try await SendingRunHarness.start(faults: silent)
        // The resume sends to a second emulator that answers at once (same certificate and key):
        // the pipeline file, which the resume checks, stays the same; only the endpoint the test
        // gives the senders differs.
        var answering = EmulatorConfiguration(tls: SendingRunHarness.tls)
        answering.apns = SendingRunHarness.credentials.apnsAccount
        answering.fcm = SendingRunHarness.credentials.fcmAccount
        answering.threads = 2
        let resumeEmulator = try await ProviderEmulator.start(answering)

        // iOS devices only: APNs tokens are signed locally (an FCM lane would ask the silent
        // emulator for an access token).
        let audience = (0..<Self.customers).map { n in
            "{\"id\":\"c-\(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"}]}"
        }
        try (audience.joined(separator: "\n") + "\n").write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        let pipeline = try harness.writePipeline()
        let folder = harness.scratch.file("out")
        let logs = LogRecorder()

        func makeRun(endpoint: String, resume: Bool) throws -> (CampaignRun, Campaign) {
            // The stopped run: one connection of one stream (the lane holds least); the resume
            // sends over a wider window.
            let loaded = try PipelineLoader.load(path: pipeline, now: 1_800_000_000, environment: [:])
            var configurations = try DeliveryConfiguration.load(pipeline: loaded)
            for i in configurations.indices {
                configurations[i].settings.endpoint = endpoint
                configurations[i].settings.connections = resume ? 2 : 1
                configurations[i].settings.streamsPerConnection = resume ? 50 : 1
                // Never timed out and resent during the test: the stop is what ends it.
                configurations[i].settings.requestTimeout = .seconds(900)
                configurations[i].settings.retry = RetryPolicy(
                    maximumAttempts: 5, initialBackoff: .milliseconds(50), maximumBackoff: .seconds(1), maximumTotalTime: .seconds(120)
                )
            }
            var run = CampaignRun(
                pipeline: loaded, audiencePath: loaded.audiencePath!, outputFolder: folder, workers: 2,
                mode: .send(configurations, validateOnly: false), logger: logs.logger
            )
            run.readerOptions.maxBatchLines = 500
            run.resume = resume
            return (run, loaded.campaign)
        }

        // 1. Stopped at once while the feeder is still handing requests to the lane.
        let stop = RunStop()
        let (first, campaign) = try makeRun(endpoint: harness.emulator.endpoint, resume: false)
        let report = await first.run(encoder: StoppingEncoder(base: CampaignEncoder(campaign: campaign), line: Self.stopLine, stop: stop, immediately: true), stop: stop)
        let silentStats = harness.emulator.stats()
        await harness.stop()

        #expect(report.status == .stopped, "\(report.failure ?? "")")
        #expect(report.reconciled && report.counts.reconciles)
        #expect(report.stop?.immediateCause != nil)
        let failed = try readResults(folder + "/failed.ndjson")
        #expect(failed.isEmpty, "a stop failed devices it did not try: \(failed.prefix(3))")
        let unsent = try readResults(folder + "/unsent.ndjson")
        let devicesRead = report.counts.devices
        #expect(devicesRead >= Self.stopLine)
        #expect(unsent.count == devicesRead, "nothing was answered: every device read is unsent")
        #expect(report.counts.unsentTotal == unsent.count)
        #expect(report.counts.unsent == [DeliveryOutcome.runStoppedReason: unsent.count])
        #expect(unsent.allSatisfy { $0["reason"] as? String == "run_stopped" })
        // Never attempted (attempts 0, unmarked), or cut off on the wire: one connection of one
        // stream holds at most one.
        let cutOff = unsent.filter { $0["possible_duplicate"] as? Bool == true }
        #expect(unsent.allSatisfy { ($0["attempts"] as? Int == 0 && $0["possible_duplicate"] == nil) || ($0["attempts"] as? Int == 1 && $0["possible_duplicate"] as? Bool == true) })
        #expect(cutOff.count <= 1)
        #expect(silentStats.apns.requests <= cutOff.count, "every request the server received is marked")
        let summary = try readSummary(folder)
        #expect(summary["status"] as? String == "stopped" && summary["reconciled"] as? Bool == true)
        #expect((summary["devices"] as? [String: Any])?["failed"] as? Int == 0)
        #expect((summary["devices"] as? [String: Any])?["unsent"] as? Int == unsent.count)

        // 2. The resume sends every device once; those cut off are marked, the others not.
        let (second, _) = try makeRun(endpoint: resumeEmulator.endpoint, resume: true)
        let resumed = await second.run()
        let stats = resumeEmulator.stats()
        await resumeEmulator.stop()

        #expect(resumed.status == .completed, "\(resumed.failure ?? "")")
        #expect(resumed.reconciled && resumed.counts.reconciles)
        #expect(try readResults(folder + "/unsent.ndjson").isEmpty)
        #expect(try readResults(folder + "/failed.ndjson").isEmpty)
        let sent = try readResults(folder + "/sent.ndjson")
        var seen: [String: Int] = [:]
        for record in sent { seen["\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)", default: 0] += 1 }
        #expect(seen.count == Self.customers && seen.values.allSatisfy { $0 == 1 }, "every device sent exactly once")
        #expect(stats.apns.requests == Self.customers, "the resume sent each device once")
        let key = { (record: [String: Any]) in "\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)" }
        let marked = Set(sent.filter { $0["possible_duplicate"] as? Bool == true }.map(key))
        #expect(marked == Set(cutOff.map(key)), "marked: \(marked.count), cut off at the stop: \(cutOff.count)")
        let final = try readSummary(folder)
        #expect(final["status"] as? String == "completed" && final["reconciled"] as? Bool == true)
        #expect((final["devices"] as? [String: Any])?["sent"] as? Int == Self.customers)
        #expect((final["devices"] as? [String: Any])?["unsent"] as? Int == 0)
    }
}
