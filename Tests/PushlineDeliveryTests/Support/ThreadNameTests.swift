import Foundation
import PushlineDelivery
import Synchronization
import Testing

@Suite("Thread names the kernel shows")
struct ThreadNameTests {
    /// A thread names itself the moment it starts (Foundation's setter can lose that race) and
    /// the kernel keeps the first 15 bytes.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm"), "needs Linux's /proc/thread-self"))
    func aThreadNamesItselfAtOnceCutToFifteenBytes() async {
        let seen = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                ThreadName.setCurrent("pushline-a-very-long-name")
                let first = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                ThreadName.setCurrent("pushline-short")
                let second = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                seen.withLock { $0 = [first, second] }
                done.resume()
            }
            thread.start()
        }
        #expect(seen.withLock { $0 } == ["pushline-a-very\n", "pushline-short\n"])
    }
}
