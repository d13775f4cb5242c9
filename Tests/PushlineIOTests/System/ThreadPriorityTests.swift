import Foundation
import PushlineIO
import Testing

/// `ThreadPriority` changes the calling thread only, and only ever lowers it.
struct ThreadPriorityTests {
    /// The calling thread's nice value as the kernel reports it (/proc's field 19).
    private static func niceFromProc() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

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
        #expect(ThreadPriority.background() == min(19, ThreadPriority.processNice() + ThreadPriority.backgroundOffset))
    }
}
