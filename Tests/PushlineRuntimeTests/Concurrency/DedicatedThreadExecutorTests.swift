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
        func niceFromProc() throws -> Int { try DedicatedThreadExecutorTests.callingThreadNice() }

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
        let before = try Self.callingThreadNice()
        let target = min(19, before + 3)
        let executor = DedicatedThreadExecutor(name: "pushline-write", nice: Int32(target))
        defer { executor.shutdown() }
        #expect(try await OnThread(executor).niceFromProc() == target)
        let plain = DedicatedThreadExecutor(name: "pushline-read")
        defer { plain.shutdown() }
        #expect(try await OnThread(plain).niceFromProc() <= before, "an executor without a nice value keeps its creator's")
    }

    /// The calling thread's nice value as the kernel reports it (/proc's field 19).
    fileprivate static func callingThreadNice() throws -> Int {
        let stat = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        // The name (field 2) is in parentheses and may hold spaces: count from after it.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return try #require(Int(fields[16]))
    }
}
