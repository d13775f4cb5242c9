import Foundation
import PushlineDelivery
import PushlineIO
import Synchronization

/// An executor that owns one OS thread, for stages that block on files (reading and inflating
/// the audience, writing result files).
///
/// Actors that use it as their executor, and tasks that prefer it, keep blocking system calls off
/// Swift's cooperative pool, so the encode workers there always have every core.
public final class DedicatedThreadExecutor: SerialExecutor, TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    public let name: String

    /// `nice`: the thread lowers itself to that nice value first (`ThreadPriority`).
    public init(name: String, nice: Int32? = nil) {
        self.name = name
        let thread = Thread { [self] in
            // Named from inside: an OS thread starts with its creator's name (a dispatch
            // worker's, "oot.default-qos"); `ThreadName` says why not through Foundation.
            ThreadName.setCurrent(name)
            if let nice { ThreadPriority.lowerCurrentThread(to: nice) }
            self.runLoop()
        }
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        state.withLock { $0.jobs.append(unowned) }
        wakeUp.signal()
    }

    /// Lets the thread end once the jobs already queued have run.
    public func shutdown() {
        state.withLock { $0.stopped = true }
        wakeUp.signal()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    private func runLoop() {
        while true {
            wakeUp.wait()
            while true {
                let next: UnownedJob? = state.withLock { state in
                    state.jobs.isEmpty ? nil : state.jobs.removeFirst()
                }
                guard let job = next else { break }
                job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
            }
            if state.withLock({ $0.stopped && $0.jobs.isEmpty }) { return }
        }
    }
}
