import Foundation
import PushlineEmulator
import Testing

/// SIGTERM, SIGINT and SIGKILL sent to a real `pushline run` process. The audience streams in
/// through standard input without end, so the run is mid-run whenever the signal comes; the tests
/// wait for progress on disk (or at the emulator) before they signal, never for a fixed time.
@Suite(
    "Stopping a real run with signals",
    .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"),
    .serialized
)
struct SignalStopTests {
    /// `pushline generate-audience` output: realistic lines with one to three devices.
    static func generatedAudience(_ scratch: Scratch, count: Int = 20_000) async throws -> [UInt8] {
        let path = scratch.file("generated.ndjson")
        let outcome = try await PushlineBinary.run(["generate-audience", "\(count)", path, "--seed", "12"])
        try #require(outcome.status == 0, "\(outcome.stderr)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// What a stopped run must leave: final names only, a summary that says stopped and adds up,
    /// and (sending) as many result lines as the summary counts.
    static func expectStoppedFolder(_ out: String, sending: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "no temporary file: \(names)", sourceLocation: sourceLocation)
        let summary = try readSummary(out)
        #expect(summary["status"] as? String == "stopped" && summary["exit_code"] as? Int == 6, sourceLocation: sourceLocation)
        #expect(summary["reconciled"] as? Bool == true, "\(summary["failure"] ?? "")", sourceLocation: sourceLocation)
        let devices = try #require(summary["devices"] as? [String: Any])
        let lines = try #require(summary["lines"] as? [String: Any])
        let input = try #require(summary["input"] as? [String: Any])
        #expect((lines["read"] as? Int ?? 0) + (lines["blank"] as? Int ?? 0) == input["physical_lines"] as? Int, sourceLocation: sourceLocation)
        #expect((lines["read"] as? Int ?? 0) > 0, sourceLocation: sourceLocation)
        var outcomes = 0
        for key in ["written", "sent", "invalid_token", "rejected", "failed", "skipped", "unsent"] { outcomes += devices[key] as? Int ?? 0 }
        #expect(outcomes == devices["read"] as? Int, "every device read has one outcome", sourceLocation: sourceLocation)
        if sending {
            var seen = Set<String>()
            for (file, key) in [("sent.ndjson", "sent"), ("failed.ndjson", "failed"), ("invalid-tokens.ndjson", "invalid_token"), ("unsent.ndjson", "unsent")] {
                let objects = try readLines(out + "/" + file)
                #expect(objects.count == devices[key] as? Int, "\(file) has a line per \(key) device", sourceLocation: sourceLocation)
                for object in objects {
                    let id = "\(object["line"] ?? "?")/\(object["device"] ?? "?")"
                    #expect(seen.insert(id).inserted, "device \(id) has one outcome, not two", sourceLocation: sourceLocation)
                }
            }
        }
        return summary
    }

    @Test func sigtermStopsADryRunWithItsResultsWritten() async throws {
        let scratch = try Scratch()
        let feed = try await Self.generatedAudience(scratch)
        let out = scratch.file("out")
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", out],
            feed: feed, stderrPath: scratch.file("stderr.log")
        )
        // Mid-run: the first MiB of requests has reached the disk.
        try await child.waitUntil("requests on disk", watching: [out]) {
            guard let file = temporaryFile("requests-apns.ndjson", in: out) else { return false }
            return completeLines(file) > 0
        }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")

        let summary = try Self.expectStoppedFolder(out, sending: false)
        let stop = try #require(summary["stop"] as? [String: Any])
        #expect(stop["cause"] as? String == "SIGTERM" && stop["input_read_to_end"] as? Bool == false)
        let devices = try #require(summary["devices"] as? [String: Any])
        let written = try #require(devices["written_by_provider"] as? [String: Int])
        #expect(try readLines(out + "/requests-apns.ndjson").count == written["apns"])
        #expect(try readLines(out + "/requests-fcm.ndjson").count == written["fcm"])
        #expect(child.stderr.contains("stopping: reading no more") && child.stderr.contains("cause=SIGTERM"))
        #expect(child.stderr.contains("run ended") && child.stderr.contains("status=stopped"))
    }

    /// Input that never completes a batch: one line that never ends (a binary file, `/dev/zero`)
    /// or blank lines without end. The reader used to loop inside one batch for as long as the
    /// input lasted: progress showed no byte read, and SIGTERM was logged but never acted on.
    @Test(arguments: ["a line without end", "blank lines without end"])
    func sigtermStopsARunWhoseInputNeverCompletesABatch(input kind: String) async throws {
        let blank = kind.hasPrefix("blank")
        // Blank lines of 1 KiB of spaces: a debug build splits them far faster than bare newlines.
        let feed = blank
            ? Array(repeating: Array(repeating: UInt8(ascii: " "), count: 1023) + [0x0A], count: 1024).flatMap { $0 }
            : Array(repeating: UInt8(ascii: "x"), count: 1 << 20)
        let scratch = try Scratch()
        let out = scratch.file("out")
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", out, "--progress-interval", "0.1"],
            feed: feed, stderrPath: scratch.file("stderr.log")
        )
        // Progress names the input's offset as it goes on: past 40 MiB, two steps (16 MiB) in.
        try await child.waitUntil("progress past 40 MiB") {
            child.stderr.split(separator: "\n").contains { line in
                guard let range = line.range(of: "bytes_read=") else { return false }
                return (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0) > 40 << 20
            }
        }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")
        let summary = try readSummary(out)
        #expect(summary["status"] as? String == "stopped" && summary["reconciled"] as? Bool == true, "\(summary)")
        let lines = try #require(summary["lines"] as? [String: Any])
        let input = try #require(summary["input"] as? [String: Any])
        #expect(lines["read"] as? Int == 0)
        #expect((lines["blank"] as? Int ?? 0) == input["physical_lines"] as? Int)
        if blank { #expect((lines["blank"] as? Int ?? 0) > 40 << 10) }
        #expect((summary["stop"] as? [String: Any])?["input_read_to_end"] as? Bool == false)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: out)).contains { $0.hasSuffix(".tmp") })
    }

    /// A producer that stalls with the pipe open: the lines it sent are encoded and written
    /// without waiting for a batch to fill, and SIGTERM stops the run, which used to wait in
    /// `read(2)` for bytes that never came.
    @Test func sigtermStopsARunWhosePipeStalls() async throws {
        let scratch = try Scratch()
        let out = scratch.file("out")
        let feed = Array(try await Self.generatedAudience(scratch, count: 3))
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", out, "--progress-interval", "0.1"],
            feed: feed, repeats: 1, thenStall: true, stderrPath: scratch.file("stderr.log")
        )
        try await child.waitUntil("the three lines encoded") { child.stderr.contains("lines=3 ") }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")
        let summary = try Self.expectStoppedFolder(out, sending: false)
        #expect((summary["lines"] as? [String: Any])?["read"] as? Int == 3)
        let written = (summary["devices"] as? [String: Any])?["written"] as? Int ?? 0
        #expect(written > 0)
        #expect(try readLines(out + "/requests-apns.ndjson").count + readLines(out + "/requests-fcm.ndjson").count == written)
    }

    /// A producer that stalls before its first byte: the reader waits for the two bytes that
    /// tell gzip from text, and that wait hears SIGTERM too.
    @Test func sigtermStopsARunWhosePipeNeverSendsAByte() async throws {
        let scratch = try Scratch()
        let out = scratch.file("out")
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", out, "--progress-interval", "0.1"],
            feed: [], repeats: 1, thenStall: true, stderrPath: scratch.file("stderr.log")
        )
        try await child.waitUntil("a progress line") { child.stderr.contains("bytes_read=0 ") }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")
        let summary = try readSummary(out)
        #expect(summary["status"] as? String == "stopped" && summary["reconciled"] as? Bool == true, "\(summary)")
        #expect((summary["lines"] as? [String: Any])?["read"] as? Int == 0)
        #expect((summary["input"] as? [String: Any])?["physical_lines"] as? Int == 0)
    }

    /// A sending run against the emulator (answers after 20–50 ms, one in five a 503 with
    /// Retry-After: 1): SIGTERM lets what is in flight finish, and the queued and retrying
    /// devices are written to unsent.ndjson.
    @Test func sigtermDrainsASendingRun() async throws {
        var faults = FaultPlan(seed: 5, rates: FaultRates([.serviceUnavailable: 0.2]))
        faults.latencyMilliseconds = 20
        faults.latencyJitterMilliseconds = 30
        try await withEmulator(faults) { harness in
            let feed = try await Self.generatedAudience(harness.scratch)
            let out = harness.scratch.file("out")
            let child = try ChildRun(
                ["run", try harness.writePipeline(), "--audience", "-", "--output", out],
                feed: feed, stderrPath: harness.scratch.file("stderr.log")
            )
            // Mid-run: results are on disk while it sends (flushed at least every second).
            try await child.waitUntil("sent results on disk", watching: [out]) {
                guard let file = temporaryFile("sent.ndjson", in: out) else { return false }
                return completeLines(file) >= 50
            }
            child.send(SIGTERM)
            #expect(try await child.waitForExit() == 6, "\(child.stderr)")

            let summary = try Self.expectStoppedFolder(out, sending: true)
            let stop = try #require(summary["stop"] as? [String: Any])
            #expect(stop["cause"] as? String == "SIGTERM" && stop["in_flight_cancelled"] as? Bool == false)
            let unsent = try readLines(out + "/unsent.ndjson")
            #expect(!unsent.isEmpty)
            #expect(unsent.allSatisfy { $0["reason"] as? String == "run_stopped" && ($0["token"] as? String)?.isEmpty == false })
            // Waiting for a retry at the stop: unsent after the attempts they made.
            #expect(unsent.contains { ($0["attempts"] as? Int ?? 0) >= 1 }, "some were waiting for a retry")
            #expect(try readLines(out + "/sent.ndjson").count >= 50)
            #expect(child.stderr.contains("stopping: reading no more") && child.stderr.contains("cause=SIGTERM"))
        }
    }

    /// Requests the emulator holds for ten minutes: the drain would wait; a second signal
    /// cancels them at once, and they are unsent, marked as possibly delivered.
    @Test func aSecondSignalCancelsWhatIsInFlight() async throws {
        var faults = FaultPlan(seed: 5)
        faults.latencyMilliseconds = FaultPlan.maxLatencyMilliseconds
        try await withEmulator(faults) { harness in
            let feed = try await Self.generatedAudience(harness.scratch, count: 2000)
            let out = harness.scratch.file("out")
            let child = try ChildRun(
                ["run", try harness.writePipeline(), "--audience", "-", "--output", out, "--drain-timeout", "3600"],
                feed: feed, stderrPath: harness.scratch.file("stderr.log")
            )
            try await child.waitUntil("requests at the emulator", at: harness.emulator) { $0.apns.requests >= 1 && $0.fcm.requests >= 1 }
            child.send(SIGTERM)
            try await child.waitUntil("the stop's log line") { child.stderr.contains("stopping: reading no more") }
            child.send(SIGINT)
            #expect(try await child.waitForExit() == 6, "\(child.stderr)")

            let summary = try Self.expectStoppedFolder(out, sending: true)
            let stop = try #require(summary["stop"] as? [String: Any])
            #expect(stop["cause"] as? String == "SIGTERM")
            #expect(stop["in_flight_cancelled"] as? Bool == true && stop["cancel_cause"] as? String == "a second signal (SIGINT)")
            let stats = harness.emulator.stats()
            let unsent = try readLines(out + "/unsent.ndjson")
            let cancelled = unsent.filter { $0["possible_duplicate"] as? Bool == true }
            // Each lane had a request in flight (held by the emulator): cancelled, possibly delivered.
            #expect(Set(cancelled.compactMap { $0["provider"] as? String }) == ["apns", "fcm"])
            #expect(cancelled.count <= stats.apns.requests + stats.fcm.requests)
            #expect(cancelled.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 1 })
            #expect(try readLines(out + "/sent.ndjson").isEmpty)
            #expect(child.stderr.contains("stopping now: cancelling the requests in flight"))
        }
    }

    /// The drain deadline: one SIGTERM, requests held for ten minutes, `--drain-timeout 1`.
    @Test func theDrainTimeoutCancelsWhatIsStillInFlight() async throws {
        var faults = FaultPlan(seed: 5)
        faults.latencyMilliseconds = FaultPlan.maxLatencyMilliseconds
        try await withEmulator(faults) { harness in
            let feed = try await Self.generatedAudience(harness.scratch, count: 2000)
            let out = harness.scratch.file("out")
            let child = try ChildRun(
                ["run", try harness.writePipeline(), "--audience", "-", "--output", out, "--drain-timeout", "1"],
                feed: feed, stderrPath: harness.scratch.file("stderr.log")
            )
            try await child.waitUntil("requests at the emulator", at: harness.emulator) { $0.apns.requests >= 1 }
            child.send(SIGTERM)
            #expect(try await child.waitForExit() == 6, "\(child.stderr)")
            let summary = try Self.expectStoppedFolder(out, sending: true)
            let stop = try #require(summary["stop"] as? [String: Any])
            #expect(stop["cancel_cause"] as? String == "the drain deadline (1 s)" && stop["drain_timeout_seconds"] as? Int == 1)
            #expect(try readLines(out + "/unsent.ndjson").contains { $0["possible_duplicate"] as? Bool == true })
        }
    }

    /// SIGKILL mid-send: what was sent is on disk (in the temporary files). The next run into the
    /// folder refuses to replace it; with --force it moves it aside, byte for byte.
    @Test func aKilledRunsRecordSurvivesTheNextRun() async throws {
        var faults = FaultPlan(seed: 5)
        faults.latencyMilliseconds = 5
        try await withEmulator(faults) { harness in
            let pipeline = try harness.writePipeline()
            let feed = try await Self.generatedAudience(harness.scratch)
            let out = harness.scratch.file("out")
            let child = try ChildRun(["run", pipeline, "--audience", "-", "--output", out], feed: feed, stderrPath: harness.scratch.file("killed.log"))
            try await child.waitUntil("sent results on disk", watching: [out]) {
                guard let file = temporaryFile("sent.ndjson", in: out) else { return false }
                return completeLines(file) >= 20
            }
            child.send(SIGKILL)
            #expect(try await child.waitForExit() == 128 + SIGKILL)

            let killed = try folderFiles(out).filter { $0.key != ".pushline.lock" }
            let sentFile = try #require(killed.keys.first { $0.hasPrefix("sent.ndjson.") && $0.hasSuffix(".tmp") })
            let sentLines = try readLines(out + "/" + sentFile)
            #expect(sentLines.count >= 20 && sentLines.allSatisfy { $0["apns_id"] != nil || $0["message"] != nil })
            #expect(killed["summary.json"] == nil)

            // A finite audience for the next runs.
            let small = harness.scratch.file("small.ndjson")
            let smallLines = Array(feed.split(separator: 0x0A).prefix(50).joined(separator: [0x0A])) + [0x0A]
            try Data(smallLines).write(to: URL(fileURLWithPath: small))

            let refused = try await PushlineBinary.run(["run", pipeline, "--audience", small, "--output", out])
            #expect(refused.status == 9, "output_folder_busy")
            let errors = refused.stderrLines.filter { $0.hasPrefix("pushline: error:") }
            #expect(errors.count == 1)
            let error = try #require(errors.first)
            #expect(error.contains(out) && error.contains(sentFile) && error.contains("--force"), "\(error)")
            #expect(try folderFiles(out).filter { $0.key != ".pushline.lock" } == killed, "nothing touched")

            // --force alone would notify the recorded devices again: refused, naming how many.
            let unacknowledged = try await PushlineBinary.run(["run", pipeline, "--audience", small, "--output", out, "--force"])
            #expect(unacknowledged.status == 9, "\(unacknowledged.stderr)")
            #expect(unacknowledged.stderr.contains("already sent ") && unacknowledged.stderr.contains("--resend"), "\(unacknowledged.stderr)")
            #expect(try folderFiles(out).filter { $0.key != ".pushline.lock" } == killed, "nothing touched")

            let forced = try await PushlineBinary.run(["run", pipeline, "--audience", small, "--output", out, "--force", "--resend"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(forced.stderr.contains("moved the results of a previous run that did not finish"))
            let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasPrefix("interrupted-") })
            #expect(try folderFiles(out + "/" + aside) == killed, "moved intact")
            #expect(try readSummary(out)["status"] as? String == "completed")
        }
    }

    /// Runs `body` with a fresh in-process emulator, stopped afterwards however `body` ends.
    private func withEmulator(_ faults: FaultPlan, _ body: (SendingRunHarness) async throws -> Void) async throws {
        let harness = try await SendingRunHarness.start(faults: faults)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
