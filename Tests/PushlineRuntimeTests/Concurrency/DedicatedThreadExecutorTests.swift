import Foundation
import PushlineRuntime
import Testing

/// The reader's and writer's threads, as the operating system sees them.
struct DedicatedThreadExecutorTests {
    private actor OnThread {
        let executor: DedicatedThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: DedicatedThreadExecutor) { self.executor = executor }

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
}
