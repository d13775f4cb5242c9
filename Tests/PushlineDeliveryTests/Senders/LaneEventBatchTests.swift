import Foundation
import PushlineCore
@testable import PushlineDelivery
import PushlineEmulator
import Synchronization
import Testing

/// A lane holds its settlements back for a few turns while transfers are in flight (each
/// hand-over wakes the reading task on another thread), but never longer than
/// `LaneHost.eventsHoldNanoseconds`: a settlement does not wait for the next answer.
@Suite("Lane events: held briefly, never until the next answer")
struct LaneEventBatchTests {
    @Test func aSettlementReachesTheReaderWhileTheNextRequestIsStillInFlight() async throws {
        // One stream, answers after a second each: the first request's settlement is made while
        // the second is in flight, and nothing else happens on the network for a second.
        try await withLaneHarness({ $0.faults.latencyMilliseconds = 1_000 }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes)
            let requests = TestCampaign.requests(provider: .apns, tokens: (0..<2).map(TestCampaign.apnsToken))
            // The settlements of each hand-over, as the reader got them. A waiting reader is
            // resumed with exactly one hand-over's events; a reader that is not waiting gets
            // everything since its last read at once. So the reader runs on a thread of its own
            // (a task executor): a busy cooperative pool (the full suite) cannot keep it from
            // waiting again within the second between the two answers.
            let readerThread = ThreadTaskExecutor()
            defer { readerThread.stop() }
            let reader = Task(executorPreference: readerThread) { () -> [Int] in
                var batches: [Int] = []
                for await events in lane.events {
                    let settled = events.filter { if case .settled = $0 { true } else { false } }.count
                    if settled > 0 { batches.append(settled) }
                }
                return batches
            }
            await lane.send(requests)
            await lane.finish()
            let batches = await reader.value
            // Held until the second answer, the two would arrive together: [2].
            #expect(batches == [1, 1])
            #expect(harness.emulator.stats().apns.requests == 2)
        }
    }
}

/// Runs a task's jobs on one thread of its own.
private final class ThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
    private let jobs = Mutex<(queue: [UnownedJob], stopped: Bool)>(([], false))
    private let wakeUp = DispatchSemaphore(value: 0)

    init() {
        Thread { [self] in
            while true {
                wakeUp.wait()
                while true {
                    let (job, stopped) = jobs.withLock { state -> (UnownedJob?, Bool) in
                        state.queue.isEmpty ? (nil, state.stopped) : (state.queue.removeFirst(), false)
                    }
                    if stopped { return }
                    guard let job else { break }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.queue.append(job) }
        wakeUp.signal()
    }

    func stop() {
        jobs.withLock { $0.stopped = true }
        wakeUp.signal()
    }
}
