import Foundation
import Logging
import PushlineCore
@testable import PushlineRuntime
import Synchronization
import Testing

@Suite("Batch window")
struct BatchWindowTests {
    @Test func aFullWindowAdmitsNothingMore() {
        var window = BatchWindow(size: 3)
        let first = [window.admit(), window.admit(), window.admit()]
        #expect(first == [0, 1, 2])
        let fourth = window.admit()
        #expect(!window.canAdmit && fourth == nil)
        #expect(window.inFlight == 3 && window.nextSequence == 3)
    }

    @Test func outOfOrderSettlementSlidesOnlyFromTheLowEnd() {
        var window = BatchWindow(size: 3)
        for _ in 0..<3 { _ = window.admit() }
        let settledLate = [window.settle(2), window.settle(1)]
        #expect(settledLate == [true, true])
        // Batch 0 is still out: nothing may be admitted, whatever settled after it.
        #expect(window.lowestUnsettled == 0 && !window.canAdmit && window.inFlight == 1)
        let settledFirst = window.settle(0)
        #expect(settledFirst)
        #expect(window.lowestUnsettled == 3 && window.inFlight == 0)
        let next = [window.admit(), window.admit(), window.admit(), window.admit()]
        #expect(next == [3, 4, 5, nil])
    }

    @Test func aSlowBatchStopsAdmissionInsteadOfGrowing() {
        var window = BatchWindow(size: 4)
        var admitted: [Int] = []
        // Batch 0 never settles; every other batch settles as soon as it is admitted.
        for _ in 0..<1000 {
            guard let s = window.admit() else { break }
            admitted.append(s)
            if s != 0 { window.settle(s) }
        }
        #expect(admitted == [0, 1, 2, 3], "never beyond lowest unsettled (0) + 4")
        #expect(window.inFlight == 1)
        window.settle(0)
        let after = window.admit()
        #expect(after == 4)
    }

    @Test func unknownAndRepeatedSettlementsChangeNothing() {
        var window = BatchWindow(size: 2)
        _ = window.admit()
        let results = [window.settle(1), window.settle(-1), window.settle(0), window.settle(0)]
        #expect(results == [false, false, true, false], "never admitted, never admitted, settled, settled already")
        #expect(window == {
            var w = BatchWindow(size: 2)
            _ = w.admit()
            w.settle(0)
            return w
        }())
        #expect(BatchWindow(size: 0).size == 1, "a window always admits one")
    }
}

@Suite("Settled-line tracker")
struct SettledLineTrackerTests {
    /// Batches of lines 1–100, 101–250 (ending in blank lines), 251–300 (rejected lines included:
    /// they are settled when their batch is).
    @Test func theMarkWaitsForTheLowestBatch() {
        var tracker = SettledLineTracker()
        #expect(tracker.lowWaterMark == 0)
        tracker.settle(sequence: 2, lastLine: 300)
        #expect(tracker.lowWaterMark == 0 && tracker.waitingBatches == 1)
        tracker.settle(sequence: 0, lastLine: 100)
        #expect(tracker.lowWaterMark == 100)
        tracker.settle(sequence: 1, lastLine: 250)
        #expect(tracker.lowWaterMark == 300 && tracker.waitingBatches == 0)
        let again = tracker.settle(sequence: 1, lastLine: 250)
        #expect(!again, "settled already")
        #expect(tracker.lowWaterMark == 300)
    }

    @Test func heldLinesKeepTheMarkBelowThem() {
        var tracker = SettledLineTracker()
        // Line 120's request was copied out for a retry; its batch settled without it.
        tracker.hold(line: 120)
        tracker.hold(line: 180)
        tracker.hold(line: 120)   // two devices of line 120
        tracker.settle(sequence: 0, lastLine: 100)
        tracker.settle(sequence: 1, lastLine: 250)
        #expect(tracker.lowWaterMark == 119)
        tracker.release(line: 120)
        #expect(tracker.lowWaterMark == 119, "one of line 120's requests is still out")
        tracker.release(line: 120)
        #expect(tracker.lowWaterMark == 179)
        tracker.release(line: 180)
        #expect(tracker.lowWaterMark == 250)
        let notHeld = tracker.release(line: 180)
        #expect(!notHeld)
    }

    @Test func aResumeStartsAfterItsCheckpoint() {
        var tracker = SettledLineTracker(afterLine: 5000)
        #expect(tracker.lowWaterMark == 5000)
        tracker.settle(sequence: 0, lastLine: 9096)
        #expect(tracker.lowWaterMark == 9096)
    }

    @Test func manyHoldsAndReleasesInAnyOrder() {
        var tracker = SettledLineTracker()
        tracker.settle(sequence: 0, lastLine: 10_000)
        var rng = SystemRandomNumberGenerator()
        var held = Set<Int>()
        for _ in 0..<2000 {
            if held.isEmpty || Bool.random(using: &rng) {
                let line = Int.random(in: 1...10_000, using: &rng)
                if held.insert(line).inserted { tracker.hold(line: line) }
            } else {
                let line = held.randomElement(using: &rng)!
                held.remove(line)
                tracker.release(line: line)
            }
            #expect(tracker.lowWaterMark == (held.min().map { $0 - 1 } ?? 10_000))
        }
    }
}

@Suite("Batch settlement")
struct BatchSettlementTests {
    /// The reader's parking is observed, not waited out: a clock would only show that nothing
    /// happened yet.
    @Test(.timeLimit(.minutes(1)))
    func theReaderWaitsWhileTheWindowIsFullAndResumesOnSettlement() async throws {
        let settlement = BatchSettlement(window: 2)
        await settlement.waitForAdmission()
        await settlement.waitForAdmission()
        let admitted = Mutex(false)
        let reader = Task {
            await settlement.waitForAdmission()
            admitted.withLock { $0 = true }
        }
        while !settlement.readerIsWaiting { await Task.yield() }
        #expect(!admitted.withLock { $0 }, "a third batch waits: 0 and 1 are in flight")
        settlement.settle(sequence: 1, lastLine: 20)
        // Settling batch 1 leaves batch 0 out: the window cannot slide, so the reader stays
        // parked (settle resumes it only when it can admit).
        #expect(settlement.readerIsWaiting, "batch 0 is still out")
        #expect(!admitted.withLock { $0 })
        #expect(settlement.lowWaterMark == 0)
        settlement.settle(sequence: 0, lastLine: 10)
        await reader.value
        #expect(admitted.withLock { $0 })
        #expect(settlement.lowWaterMark == 20 && settlement.peakInFlight == 2)
    }

    @Test func openingLetsTheReaderDrain() async {
        let settlement = BatchSettlement(window: 1)
        await settlement.waitForAdmission()
        let reader = Task { await settlement.waitForAdmission() }
        settlement.open()
        #expect(await reader.value)
        #expect(await settlement.waitForAdmission())   // no longer bounded
    }

    /// A stopping run closes the window: a reader waiting for admission is woken and told to
    /// read no more, and so is every later call, even after `open()`.
    @Test func closingWakesTheReaderAndAdmitsNothing() async {
        let settlement = BatchSettlement(window: 1)
        #expect(await settlement.waitForAdmission())
        let reader = Task { await settlement.waitForAdmission() }
        settlement.close()
        #expect(await reader.value == false)
        settlement.settle(sequence: 0, lastLine: 10)
        #expect(await settlement.waitForAdmission() == false)
        settlement.open()
        #expect(await settlement.waitForAdmission() == false)
    }
}

@Suite("Batch window and settled lines in a dry run")
struct DryRunSettlementTests {
    @Test func aDryRunSettlesEveryLineWithinItsWindow() async throws {
        let scratch = try Scratch()
        let audience = scratch.file("audience.ndjson")
        let good = #"{"id":"c","customer":{"first_name":"A"},"event":{"event_title":"T"},"devices":[{"platform":"ios","token":"\#(PoisonedLineTests.iosToken)"},{"platform":"android","token":"\#(PoisonedLineTests.fcmToken)"},{"platform":"web","subscription":{"endpoint":"https://push.example.net/1","keys":{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}}},{"platform":"pager","token":"x"}]}"#
        var lines: [String] = []
        for i in 1...500 {
            switch i % 50 {
            case 7: lines.append("")                      // blank
            case 13: lines.append("{not json")            // rejected line
            default: lines.append(good)
            }
        }
        lines += ["", ""]   // trailing blank lines are settled too
        try (lines.joined(separator: "\n") + "\n").write(toFile: audience, atomically: true, encoding: .utf8)
        let loaded = try PipelineLoader.load(path: try writePipeline(sinkTestPipeline, in: scratch), now: 1_800_000_000)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: scratch.file("out"), workers: 2, logger: logger)
        run.readerOptions.maxBatchLines = 7   // ~70 batches through a window of 13
        let report = await run.run()

        #expect(report.status == .completedWithRejects, "\(report.failure ?? "")")
        #expect(report.source.physicalLines == 502)
        #expect(report.settledThroughLine == 502, "every line, blank and rejected ones included")
        #expect(report.peakBatchesInFlight >= 1 && report.peakBatchesInFlight <= CampaignRun.batchWindow(workers: 2))
        #expect(report.counts.reconciles && report.counts.reconcilesByProvider)
        // 500 lines: 10 blank, 10 rejected, 480 customers with an iOS, an Android, a (not
        // targeted) web device and one of an unknown platform (no provider: `unrouted`).
        let c = report.counts
        #expect(c.lines == 490 && c.blankLines == 12 && c.linesRejected == 10 && c.devices == 1920)
        #expect(c.unrouted.devices == 480 && c.unrouted.rejected == 480 && c.rejected == ["unknown_platform": 480])
        #expect(c.byProvider[.apns]?.written == 480 && c.byProvider[.fcm]?.written == 480)
        #expect(c.byProvider[.webpush]?.skipped == 480 && c.byProvider[.webpush]?.devices == 480)

        let summary = try readSummary(scratch.file("out"))
        #expect(summary["settled_through_line"] as? Int == 502)
        #expect(summary["reconciled"] as? Bool == true)
        let devices = try #require(summary["devices"] as? [String: Any])
        for key in ["sent", "invalid_token", "failed", "possible_duplicates"] { #expect(devices[key] as? Int == 0, "\(key)") }
        for key in ["sent_by_provider", "invalid_token_by_reason", "failed_by_reason"] { #expect((devices[key] as? [String: Any])?.isEmpty == true, "\(key)") }
        #expect(devices["written"] as? Int == 960 && devices["skipped"] as? Int == 480)
        let providers = try #require(summary["providers"] as? [String: [String: Int]])
        #expect(providers["apns"] == ["devices": 480, "written": 480, "sent": 0, "invalid_token": 0, "rejected": 0, "failed": 0, "skipped": 0, "unsent": 0])
        #expect(providers["webpush"]?["skipped"] == 480)
        #expect(providers["unrouted"] == ["devices": 480, "written": 0, "sent": 0, "invalid_token": 0, "rejected": 480, "failed": 0, "skipped": 0, "unsent": 0])
    }
}
