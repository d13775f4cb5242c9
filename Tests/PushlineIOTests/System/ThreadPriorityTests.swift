import Foundation
import PushlineIO
import Testing

/// `ThreadPriority` changes the calling thread only, and only ever lowers it.
struct ThreadPriorityTests {
    /// Field `number` (1-based, as proc(5) counts) of the calling thread's /proc stat line.
    private static func statField(_ number: Int) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // The name (field 2) is in parentheses and may hold spaces: count from after it.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > number - 3 ? Int(fields[number - 3]) : nil
    }

    /// The calling thread's nice value as the kernel reports it (field 19).
    private static func niceFromProc() -> Int? { statField(19) }

    /// The calling thread's scheduling policy as the kernel reports it (field 41; sched.h's
    /// SCHED_OTHER is 0, SCHED_IDLE 5).
    private static func policyFromProc() -> Int? { statField(41) }

    /// Runs `body` on a thread of its own (a nice value stays with the thread that set it).
    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "needs Linux's /proc/thread-self"))
    func lowersTheCallingThreadOnlyAndNeverRaisesIt() async throws {
        let process = Int(ThreadPriority.processNice())
        let result = await Self.onOwnThread { () -> [Int?] in
            let start = Self.niceFromProc()
            let target = Int32(min(19, (start ?? 0) + 2))
            ThreadPriority.lowerCurrentThread(to: target)
            let lowered = Self.niceFromProc()
            // A higher priority than the thread has is not asked for.
            ThreadPriority.lowerCurrentThread(to: target - 1)
            let afterRaise = Self.niceFromProc()
            return [start, lowered, afterRaise, Int(target)]
        }
        let start = try #require(result[0]), lowered = try #require(result[1]), afterRaise = try #require(result[2]), target = try #require(result[3])
        #expect(lowered == target)
        #expect(afterRaise == target, "never raised")
        // Another thread (the process's main thread) kept its value.
        #expect(Int(ThreadPriority.processNice()) == process)
        #expect(start <= target)
        #expect(ThreadPriority.backgroundNice() == min(19, ThreadPriority.processNice() + ThreadPriority.backgroundOffset))
    }

    /// `.idle` puts the calling thread under SCHED_IDLE, as the kernel reports it, and no other
    /// thread: the test's own thread keeps its policy.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "needs Linux's /proc/thread-self"))
    func idleIsTheCallingThreadsOwnPolicy() async throws {
        let testThread = try #require(Self.policyFromProc())
        let result = await Self.onOwnThread { () -> [Int?] in
            let before = Self.policyFromProc()
            let wasIdle = ThreadPriority.currentThreadIsIdle()
            ThreadPriority.Lowering.idle.lowerCurrentThread()
            let after = Self.policyFromProc()
            let isIdle = ThreadPriority.currentThreadIsIdle()
            // Asked again: nothing changes, nothing fails.
            ThreadPriority.Lowering.idle.lowerCurrentThread()
            return [before, wasIdle ? 1 : 0, after, isIdle ? 1 : 0, Self.policyFromProc()]
        }
        #expect(result[0] == 0, "a new thread starts under SCHED_OTHER")
        #expect(result[1] == 0)
        #expect(result[2] == 5, "SCHED_IDLE after the lowering")
        #expect(result[3] == 1)
        #expect(result[4] == 5)
        #expect(Self.policyFromProc() == testThread, "the calling thread only")
    }

    /// What each `--background-priority` value asks of the background threads.
    @Test func eachBackgroundChoiceLowersAsDocumented() {
        #expect(ThreadPriority.Background.idle.lowering == .idle)
        #expect(ThreadPriority.Background.nice.lowering == .nice(ThreadPriority.backgroundNice()))
        #expect(ThreadPriority.Background.normal.lowering == nil)
        #expect(ThreadPriority.Background.allCases.map(\.rawValue) == ["idle", "nice", "normal"])
    }
}
