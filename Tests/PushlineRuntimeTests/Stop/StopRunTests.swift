import Foundation
import Logging
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineRuntime
import ServiceLifecycle
import Synchronization
import Testing

/// Stopping a run in process (the signal path is `SignalStopTests`): the stop comes from the
/// scripted lanes or the encoder at a chosen line, so where it lands is decided by the data, not
/// by timing.
@Suite("Stopping a run: every device read is settled, the results and summary are final")
struct StopRunTests {
    /// 400 lines of one iOS and one Android device each.
    static let lines = (1...400).map { n in line("\"r\(n)\"", [("ios", apnsToken1), ("android", fcmToken1)]) }

    /// Every result line of the run's sending files, as (file, line, device, object).
    static func results(_ scratch: Scratch) throws -> [(file: String, line: Int, device: Int, object: [String: Any])] {
        var all: [(String, Int, Int, [String: Any])] = []
        for name in ["sent.ndjson", "failed.ndjson", "invalid-tokens.ndjson", "unsent.ndjson"] {
            for object in try readLines(scratch.file("out/" + name)) {
                all.append((name, try #require(object["line"] as? Int), try #require(object["device"] as? Int), object))
            }
        }
        return all
    }

    static func expectFinalFiles(_ scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.file("out"))
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "no temporary file left: \(names)", sourceLocation: sourceLocation)
        for name in ["sent.ndjson", "failed.ndjson", "invalid-tokens.ndjson", "unsent.ndjson", "rejects.ndjson", "summary.json"] {
            #expect(names.contains(name), "\(name) under its final name", sourceLocation: sourceLocation)
        }
    }

    /// The first signal: the reader stops, queued and retrying requests settle unsent, in-flight
    /// ones get their answers.
    @Test func aDrainSettlesEveryDeviceReadAndWritesUnsent() async throws {
        let scratch = try Scratch()
        let stop = RunStop()
        // APNs: every third line waits for a "retry" that never comes before the stop (released
        // only by a line 1000 lines later); the stop comes when line 100 reaches the lane.
        let apns = ScriptedLane(provider: .apns) { request in
            if request.entry.line == 100 { stop.drain(cause: "test stop at line 100") }
            return request.entry.line % 3 == 0
                ? .deferUntilLine(request.entry.line + 1000, .sent(providerID: "late", attempts: 2))
                : .settle(.sent(providerID: "a-\(request.entry.line)", attempts: 1))
        }
        // FCM: every fifth line is in flight for a short while; it gets its answer in the drain.
        let fcm = ScriptedLane(provider: .fcm) { request in
            request.entry.line % 5 == 0
                ? .slow(.sent(providerID: "slow-\(request.entry.line)", attempts: 1), delay: .milliseconds(30))
                : .settle(.sent(providerID: "f-\(request.entry.line)", attempts: 1))
        }
        let report = try await runSend(lines: Self.lines, lanes: [apns, fcm], batchLines: 10, workers: 1, in: scratch, stop: stop)

        #expect(report.status == .stopped && report.exit == .stopped && report.exit.rawValue == 6, "\(report.failure ?? "")")
        #expect(report.reconciled && report.counts.reconciles && report.counts.reconcilesByProvider)
        let stopReport = try #require(report.stop)
        #expect(stopReport.cause == "test stop at line 100" && stopReport.immediateCause == nil && !stopReport.inputReadToEnd)
        // The window (11 batches of 10 lines) bounds what was read after the stop.
        #expect(report.counts.lines >= 100 && report.counts.lines < 400)
        #expect(report.source.physicalLines == report.counts.lines, "lines read = lines settled")
        #expect(report.counts.devices == 2 * report.counts.lines)

        let results = try Self.results(scratch)
        #expect(results.count == report.counts.devices, "one result line per device read")
        #expect(Set(results.map { "\($0.line)/\($0.device)" }).count == results.count, "no device twice")
        let unsent = results.filter { $0.file == "unsent.ndjson" }
        #expect(unsent.count == report.counts.unsentTotal && unsent.count > 0)
        #expect(report.counts.unsent == ["run_stopped": unsent.count])
        for result in results where result.device == 0 {
            let attempts = result.object["attempts"] as? Int
            if result.line % 3 == 0 {
                // Waiting for its retry at the stop: unsent, with the attempt it made (or, handed
                // over after the stop, never attempted).
                #expect(result.file == "unsent.ndjson", "line \(result.line)")
                #expect(attempts == 1 || (attempts == 0 && result.line > 100), "line \(result.line)")
            } else if result.file == "unsent.ndjson" {
                #expect(attempts == 0 && result.line > 100, "only lines handed over after the stop are unsent unattempted")
            }
        }
        for result in unsent {
            #expect(result.object["reason"] as? String == "run_stopped")
            #expect(result.object["token"] as? String == (result.device == 0 ? apnsToken1 : fcmToken1))
            #expect(result.object["recipient"] as? String == "r\(result.line)")
            #expect(result.object["possible_duplicate"] == nil)
        }
        // In flight at the stop: answered, not unsent (FCM's unsent were never attempted).
        #expect(unsent.filter { $0.device == 1 }.allSatisfy { $0.object["attempts"] as? Int == 0 })
        #expect(results.filter { $0.device == 1 && $0.line % 5 == 0 && $0.file == "sent.ndjson" }.allSatisfy { $0.object["message"] as? String == "slow-\($0.line)" })

        try Self.expectFinalFiles(scratch)
        let summary = try readSummary(scratch.file("out"))
        #expect(summary["status"] as? String == "stopped" && summary["exit_code"] as? Int == 6 && summary["reconciled"] as? Bool == true)
        let devices = try #require(summary["devices"] as? [String: Any])
        #expect(devices["unsent"] as? Int == unsent.count)
        let lines = try #require(summary["lines"] as? [String: Any])
        #expect(lines["read"] as? Int == report.counts.lines)
        let stopObject = try #require(summary["stop"] as? [String: Any])
        #expect(stopObject["cause"] as? String == "test stop at line 100" && stopObject["in_flight_cancelled"] as? Bool == false)
        let providers = try #require(summary["providers"] as? [String: [String: Int]])
        #expect((providers["apns"]?["unsent"] ?? 0) + (providers["fcm"]?["unsent"] ?? 0) == unsent.count)
    }

    /// The second signal: what is in flight is cancelled and settles unsent, marked as possibly
    /// delivered.
    @Test func anImmediateStopCancelsInFlightRequestsAsPossiblyDelivered() async throws {
        let scratch = try Scratch()
        let stop = RunStop()
        let apns = ScriptedLane(provider: .apns) { _ in .settle(.sent(providerID: "a", attempts: 1)) }
        // Every fourth FCM request never answers by itself (an hour); the stop comes when line 60
        // reaches the lane, so lines 4…60 of them are in flight then.
        let fcm = ScriptedLane(provider: .fcm) { request in
            if request.entry.line == 60 {
                stop.drain(cause: "SIGTERM")
                stop.stopNow(cause: "a second signal (SIGINT)")
            }
            return request.entry.line % 4 == 0
                ? .slow(.sent(providerID: "never", attempts: 1), delay: .seconds(3600))
                : .settle(.sent(providerID: "f", attempts: 1))
        }
        let report = try await runSend(lines: Self.lines, lanes: [apns, fcm], batchLines: 10, workers: 1, in: scratch, stop: stop)

        #expect(report.status == .stopped, "\(report.failure ?? "")")
        #expect(report.reconciled)
        #expect(report.stop?.immediateCause == "a second signal (SIGINT)")
        let results = try Self.results(scratch)
        #expect(results.count == report.counts.devices)
        let slow = results.filter { $0.device == 1 && $0.line % 4 == 0 }
        #expect(slow.allSatisfy { $0.file == "unsent.ndjson" })
        // In flight when cancelled: one attempt, possibly delivered. Handed over after the stop:
        // never attempted.
        let cancelled = slow.filter { $0.object["possible_duplicate"] as? Bool == true }
        #expect(cancelled.allSatisfy { $0.object["attempts"] as? Int == 1 })
        #expect(Set(cancelled.map(\.line)).isSuperset(of: stride(from: 4, through: 60, by: 4)))
        #expect(slow.filter { $0.object["possible_duplicate"] == nil }.allSatisfy { $0.object["attempts"] as? Int == 0 && $0.line > 60 })
        #expect(report.counts.possiblyDelivered == cancelled.count)
        try Self.expectFinalFiles(scratch)
        let stopObject = try #require(try readSummary(scratch.file("out"))["stop"] as? [String: Any])
        #expect(stopObject["in_flight_cancelled"] as? Bool == true && stopObject["cancel_cause"] as? String == "a second signal (SIGINT)")
    }

    /// Through swift-service-lifecycle: the group's graceful shutdown starts the drain, and its
    /// deadline (the drain timeout, here 0 s) cancels what is still in flight.
    @Test func theServiceGroupDrainsAndItsDeadlineCancels() async throws {
        let scratch = try Scratch()
        let (reached, reachedLine) = AsyncStream<Void>.makeStream()
        let apns = ScriptedLane(provider: .apns) { request in
            if request.entry.line == 50 { reachedLine.yield() }
            return request.entry.line % 7 == 0
                ? .slow(.sent(providerID: "never", attempts: 1), delay: .seconds(3600))
                : .settle(.sent(providerID: "a", attempts: 1))
        }
        let fcm = ScriptedLane(provider: .fcm) { _ in .settle(.sent(providerID: "f", attempts: 1)) }
        var run = try sendRun(lines: Self.lines, lanes: [apns, fcm], batchLines: 10, workers: 1, in: scratch)
        run.drainTimeout = .zero
        let service = CampaignRunService(run)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let group = ServiceGroup(configuration: {
            var configuration = ServiceGroupConfiguration(services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)], logger: logger)
            configuration.maximumGracefulShutdownDuration = run.drainTimeout
            return configuration
        }())
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for await _ in reached { break }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let report = try #require(service.report)
        #expect(report.status == .stopped, "\(report.failure ?? "")")
        #expect(report.reconciled)
        #expect(report.stop?.cause == "a graceful shutdown request")
        #expect(report.stop?.immediateCause == "the drain deadline (0 s)")
        let results = try Self.results(scratch)
        #expect(results.count == report.counts.devices)
        let slow = results.filter { $0.device == 0 && $0.line % 7 == 0 }
        #expect(slow.allSatisfy { $0.file == "unsent.ndjson" })
        // Lines 7…49 were in flight when the deadline cancelled them.
        let cancelled = slow.filter { $0.object["possible_duplicate"] as? Bool == true }
        #expect(Set(cancelled.map(\.line)).isSuperset(of: stride(from: 7, through: 49, by: 7)))
        try Self.expectFinalFiles(scratch)
    }

    /// A dry run stopped at line 1,000 of 5,000: every line read is written, the rest is not read.
    @Test func aStoppedDryRunWritesEveryLineItRead() async throws {
        let scratch = try Scratch()
        let audience = scratch.file("audience.ndjson")
        try (((1...5000).map { line("\"r\($0)\"", [("ios", apnsToken1), ("android", fcmToken1)]) }).joined(separator: "\n") + "\n")
            .write(toFile: audience, atomically: true, encoding: .utf8)
        let loaded = try PipelineLoader.load(path: try writePipeline(sinkTestPipeline, in: scratch), now: 1_800_000_000)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        var run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: scratch.file("out"), workers: 2, logger: logger)
        run.readerOptions.maxBatchLines = 100
        let stop = RunStop()
        let encoder = StoppingEncoder(base: CampaignEncoder(campaign: loaded.campaign), line: 1000, stop: stop)
        let report = await run.run(encoder: encoder, stop: stop)

        #expect(report.status == .stopped, "\(report.failure ?? "")")
        #expect(report.reconciled && report.counts.reconciles)
        // The window is 2 × 2 + 4 = 8 batches of 100 lines past the stop at most.
        #expect(report.counts.lines >= 1000 && report.counts.lines <= 1000 + 900)
        #expect(report.source.physicalLines == report.counts.lines && report.source.stoppedEarly)
        let apns = try readLines(scratch.file("out/requests-apns.ndjson"))
        let fcm = try readLines(scratch.file("out/requests-fcm.ndjson"))
        #expect(apns.count == report.counts.lines && fcm.count == report.counts.lines, "every line read is written")
        #expect(apns.compactMap { $0["line"] as? Int } == Array(1...report.counts.lines), "in order, none missing")
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.file("out"))
        #expect(!names.contains { $0.hasSuffix(".tmp") })
        let summary = try readSummary(scratch.file("out"))
        #expect(summary["status"] as? String == "stopped" && summary["mode"] as? String == "dry_run")
        #expect((summary["lines"] as? [String: Any])?["read"] as? Int == report.counts.lines)
        #expect((summary["stop"] as? [String: Any])?["input_read_to_end"] as? Bool == false)
    }
}

/// The campaign's encoder, which starts the stop once it has encoded line `line`; `immediately`:
/// a drain and then a cancel at once, as SIGTERM and SIGINT together do.
struct StoppingEncoder: LineEncoding {
    let base: CampaignEncoder
    let line: Int
    let stop: RunStop
    var immediately = false
    var campaign: Campaign { base.campaign }
    func makeContext() -> CampaignEncoder.Context { base.makeContext() }
    func rejectOversizeLine(_ number: Int, length: Int, into batch: inout EncodedBatch) {
        base.rejectOversizeLine(number, length: length, into: &batch)
    }
    func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch, context: inout CampaignEncoder.Context) throws {
        base.encodeLine(buffer: buffer, line: line, into: &batch, context: &context)
        guard line.number == self.line else { return }
        if immediately {
            stop.drain(cause: "SIGTERM")
            stop.stopNow(cause: "a second signal (SIGINT)")
        } else {
            stop.drain(cause: "test stop at line \(self.line)")
        }
    }
}
