import Foundation
import Logging
import PushlineCore
import PushlineEncoding
import PushlineIO
import PushlineRuntime
import Synchronization
import Testing

/// The thread a piece of a run's work ran on, as the kernel names it, and that thread's
/// scheduling policy (/proc's field 41: 0 SCHED_OTHER, 5 SCHED_IDLE).
struct ThreadSeen: Hashable, Sendable {
    var name: String
    var policy: Int

    static func current() -> ThreadSeen {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "?"
        var policy = -1
        if let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 38 { policy = Int(fields[38]) ?? -1 }
        }
        return ThreadSeen(name: name, policy: policy)
    }
}

/// Threads noted by the pieces of a run under test, in order.
final class ThreadLog: Sendable {
    private let threads = Mutex<[ThreadSeen]>([])
    private let ids = Mutex<Set<String>>([])

    func noteCurrent() {
        let thread = ThreadSeen.current()
        // "<pid>/task/<tid>": which OS thread, whatever its name.
        let id = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
        threads.withLock { $0.append(thread) }
        ids.withLock { _ = $0.insert(id) }
    }

    var all: [ThreadSeen] { threads.withLock { $0 } }
    /// How many OS threads were noted.
    var distinctThreads: Int { ids.withLock { $0.count } }
}

/// Encodes as the campaign does, and notes the threads it ran on: a `PoisonedEncoder` that
/// poisons no line.
func threadNotingEncoder(_ campaign: Campaign, into seen: ThreadLog) -> PoisonedEncoder {
    PoisonedEncoder(inner: CampaignEncoder(campaign: campaign)) { _ in
        seen.noteCurrent()
        return false
    }
}

/// A sending run's background threads give way to its transfer threads (docs/delivery.md,
/// "Background threads give way"): the reader, the writer and the encode workers run on threads
/// of their own under SCHED_IDLE (or `--background-priority`'s choice); the pool's threads,
/// where anything else may run, are never lowered; and the sink's work stays on its thread.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "needs Linux's /proc/thread-self"))
struct BackgroundThreadsTests {
    static let lines = (1...400).map { line("\($0)", [("ios", apnsToken1)]) }

    static func sendingRun(_ scratch: Scratch, priority: ThreadPriority.Background?, sendGate: (@Sendable () async -> Void)? = nil) throws -> CampaignRun {
        let apns = ScriptedLane(provider: .apns, sendGate: sendGate) { _ in .settle(.sent(providerID: "a", attempts: 1)) }
        var run = try sendRun(lines: lines, lanes: [apns], batchLines: 10, workers: 2, in: scratch)
        if let priority { run.backgroundPriority = priority }
        return run
    }

    @Test func aSendingRunEncodesOnThreadsOfItsOwnUnderSchedIdle() async throws {
        let scratch = try Scratch()
        let run = try Self.sendingRun(scratch, priority: nil)
        #expect(run.backgroundPriority == .idle, "the default")
        let seen = ThreadLog()
        let report = await run.run(encoder: threadNotingEncoder(run.pipeline.campaign, into: seen))
        #expect(report.exit == .ok && report.counts.sentTotal == Self.lines.count, "\(report.failure ?? "")")
        let threads = Set(seen.all)
        #expect(!threads.isEmpty)
        #expect(threads.allSatisfy { $0 == ThreadSeen(name: "pushline-encode", policy: 5) }, "\(threads)")
    }

    /// `--workers` beyond the cores share threads, as they share the pool's: no more encode
    /// threads than cores.
    @Test func moreWorkersThanCoresShareAThreadEach() async throws {
        let scratch = try Scratch()
        let apns = ScriptedLane(provider: .apns) { _ in .settle(.sent(providerID: "a", attempts: 1)) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let run = try sendRun(lines: Self.lines, lanes: [apns], batchLines: 5, workers: cores + 6, in: scratch)
        let seen = ThreadLog()
        let report = await run.run(encoder: threadNotingEncoder(run.pipeline.campaign, into: seen))
        #expect(report.exit == .ok && report.counts.sentTotal == Self.lines.count, "\(report.failure ?? "")")
        #expect(seen.distinctThreads >= 1 && seen.distinctThreads <= cores, "\(seen.distinctThreads) threads for \(cores) cores")
        #expect(Set(seen.all) == [ThreadSeen(name: "pushline-encode", policy: 5)])
    }

    @Test func niceAndNormalLeaveTheSchedulingPolicyAlone() async throws {
        for priority in [ThreadPriority.Background.nice, .normal] {
            let scratch = try Scratch()
            let run = try Self.sendingRun(scratch, priority: priority)
            let seen = ThreadLog()
            let report = await run.run(encoder: threadNotingEncoder(run.pipeline.campaign, into: seen))
            #expect(report.exit == .ok, "\(priority): \(report.failure ?? "")")
            let threads = Set(seen.all)
            #expect(!threads.isEmpty && threads.allSatisfy { $0.policy == 0 }, "\(priority): \(threads)")
            // `.nice` lowers threads of the run's own; `.normal` encodes on the pool, as a dry run does.
            let onOwnThreads = threads.allSatisfy { $0.name == "pushline-encode" }
            #expect(onOwnThreads == (priority == .nice), "\(priority): \(threads)")
        }
    }

    @Test func aDryRunLowersNothing() async throws {
        let scratch = try Scratch()
        let loaded = try PipelineLoader.load(path: try writePipeline(sinkTestPipeline, in: scratch), now: 1_800_000_000)
        let audience = scratch.file("audience.ndjson")
        try (Self.lines.joined(separator: "\n") + "\n").write(toFile: audience, atomically: true, encoding: .utf8)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: scratch.file("out"), workers: 2, logger: logger)
        run.readerOptions.maxBatchLines = 10
        let seen = ThreadLog()
        let report = await run.run(encoder: threadNotingEncoder(loaded.campaign, into: seen))
        #expect(report.exit == .ok, "\(report.failure ?? "")")
        let threads = Set(seen.all)
        #expect(!threads.isEmpty && threads.allSatisfy { $0.policy == 0 && $0.name != "pushline-encode" }, "\(threads)")
    }

    /// The sink's loop, its helpers (here: the stop's log line, written where the loop applies
    /// the stop) and the tasks that feed the lanes run on the sink's thread. Before, the loop's
    /// local helpers were nonisolated, so every item the loop handled went to a pool thread and
    /// back, and the journal writes and lane hand-overs ran at the pool's priority.
    @Test func theSinksWorkStaysOnItsThread() async throws {
        let scratch = try Scratch()
        let stop = RunStop()
        let sends = ThreadLog()
        let apns = ScriptedLane(provider: .apns, sendGate: { sends.noteCurrent() }) { request in
            if request.entry.line == 100 { stop.drain(cause: "test stop at line 100") }
            return .settle(.sent(providerID: "a", attempts: 1))
        }
        var run = try sendRun(lines: Self.lines, lanes: [apns], batchLines: 10, workers: 2, in: scratch)
        let log = LogRecorder(notingThreadsOf: "stopping: reading no more")
        run.logger = log.logger
        let report = await run.run(stop: stop)
        #expect(report.status == .stopped && report.reconciled, "\(report.failure ?? "")")
        let idleWriter = ThreadSeen(name: "pushline-write", policy: 5)
        #expect(log.threads.all == [idleWriter], "the stop is applied by the sink's loop, on its thread")
        let feeders = sends.all
        #expect(!feeders.isEmpty && feeders.allSatisfy { $0 == idleWriter }, "\(Set(feeders))")
    }
}
