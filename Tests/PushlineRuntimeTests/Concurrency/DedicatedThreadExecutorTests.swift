import Foundation
import PushlineRuntime
import Testing

/// The reader's and writer's threads, as the operating system sees them.
struct DedicatedThreadExecutorTests {
    private actor OnThread {
        let executor: DedicatedThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: DedicatedThreadExecutor) { self.executor = executor }

        /// The nice value of the thread this runs on, as the kernel reports it (/proc's field 19).
        func niceFromProc() throws -> Int { try DedicatedThreadExecutorTests.callingThreadStat(19) }

        /// The scheduling policy of the thread this runs on (/proc's field 41: 0 SCHED_OTHER,
        /// 5 SCHED_IDLE).
        func policyFromProc() throws -> Int { try DedicatedThreadExecutorTests.callingThreadStat(41) }

        /// What the kernel calls the thread this runs on, and whether it is the main thread.
        func threadName() throws -> (comm: String, isMain: Bool) {
            let comm = try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            return (comm.trimmingCharacters(in: .newlines), Thread.isMainThread)
        }
    }

    /// `top -H`, `perf` and /proc name the thread after the executor, so a per-thread profile
    /// shows which stage spent what.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm"), "needs Linux's /proc/thread-self"))
    func runsJobsOnAThreadTheKernelKnowsByName() async throws {
        let executor = DedicatedThreadExecutor(name: "pushline-read")
        defer { executor.shutdown() }
        let first = try await OnThread(executor).threadName()
        #expect(first.comm == "pushline-read")
        #expect(!first.isMain)
        // Every job runs on that one thread.
        let second = try await OnThread(executor).threadName()
        #expect(second.comm == "pushline-read")
    }

    /// A sending run's reader and writer run below its transfer threads: the thread lowers
    /// itself before its first job, and only itself.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "needs Linux's /proc/thread-self"))
    func aThreadGivenANiceValueRunsAtIt() async throws {
        let before = try Self.callingThreadStat(19)
        let target = min(19, before + 3)
        let executor = DedicatedThreadExecutor(name: "pushline-write", lowering: .nice(Int32(target)))
        defer { executor.shutdown() }
        #expect(try await OnThread(executor).niceFromProc() == target)
        let plain = DedicatedThreadExecutor(name: "pushline-read")
        defer { plain.shutdown() }
        #expect(try await OnThread(plain).niceFromProc() <= before, "an executor without a nice value keeps its creator's")
    }

    /// A sending run's default: the reader, the writer and the encode workers run under
    /// SCHED_IDLE, the thread that made them does not.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "needs Linux's /proc/thread-self"))
    func anIdleThreadRunsUnderSchedIdle() async throws {
        let executor = DedicatedThreadExecutor(name: "pushline-encode", lowering: .idle)
        defer { executor.shutdown() }
        #expect(try await OnThread(executor).policyFromProc() == 5)
        #expect(try Self.callingThreadStat(41) == 0, "the creating thread keeps SCHED_OTHER")
        let plain = DedicatedThreadExecutor(name: "pushline-read")
        defer { plain.shutdown() }
        #expect(try await OnThread(plain).policyFromProc() == 0)
    }

    /// Field `number` (1-based, as proc(5) counts) of the calling thread's /proc stat line.
    fileprivate static func callingThreadStat(_ number: Int) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        // The name (field 2) is in parentheses and may hold spaces: count from after it.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return try #require(Int(fields[number - 3]))
    }
}
