import Foundation
import PushlineDelivery
public import PushlineIO
import Synchronization

/// An executor that owns one OS thread, for stages that block on files (reading and inflating
/// the audience, writing result files), and for a sending run's encode workers.
///
/// Actors that use it as their executor, and tasks that prefer it, keep blocking system calls off
/// Swift's cooperative pool, so the encode workers there always have every core. A sending run
/// lowers these threads below its transfer threads (`ThreadPriority`); work on threads of their
/// own, the pool's threads are never lowered, so nothing else that runs there is.
public final class DedicatedThreadExecutor: SerialExecutor, TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    public let name: String

    /// `lowering`: what the thread applies to itself before its first job (`ThreadPriority`).
    public init(name: String, lowering: ThreadPriority.Lowering? = nil) {
        self.name = name
        let thread = Thread { [self] in
            // Named from inside: an OS thread starts with its creator's name (a dispatch
            // worker's, "oot.default-qos"); `ThreadName` says why not through Foundation.
            ThreadName.setCurrent(name)
            lowering?.lowerCurrentThread()
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
