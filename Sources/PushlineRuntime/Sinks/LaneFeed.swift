import PushlineDelivery
import Synchronization

/// Requests released to one lane and not sent to it yet, then the lane's terminal order:
/// `DeliverySink` puts (it never waits for a lane, so a slow lane holds up only its own feeder)
/// and the lane's feeder task takes everything there is at once.
///
/// Bounds: the requests are those of the batches in the window (a batch settles only once its
/// requests have), like everything the sink holds; the wake-ups are a stream of one (a put
/// while the feeder sends leaves one wake-up, and the feeder then takes all that came).
final class LaneFeed: Sendable {
    /// What the lane is told once its requests are sent.
    enum Ending: Sendable, Equatable {
        case finish
        case cancel
    }

    private struct Queue {
        var requests: [OutgoingRequest] = []
        var ending: Ending?
    }

    private let queue = Mutex(Queue())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// More requests for the lane (never after `end`).
    func put(_ requests: [OutgoingRequest]) {
        queue.withLock { $0.requests.append(contentsOf: requests) }
        wake.yield()
    }

    /// The lane's terminal order, behind every request put before it.
    func end(_ ending: Ending) {
        queue.withLock { queue in
            if queue.ending == nil { queue.ending = ending }
        }
        wake.yield()
        wake.finish()
    }

    /// The feeder: sends what comes, in order, until the terminal order; returns it (`nil` when
    /// the task was cancelled before one came).
    func feed(_ lane: any DeliveryLane) async -> Ending? {
        for await _ in wakeups {
            var requests: [OutgoingRequest] = []
            let ending = queue.withLock { queue in
                swap(&requests, &queue.requests)
                return queue.ending
            }
            if !requests.isEmpty { await lane.send(requests) }
            if let ending { return ending }
        }
        return queue.withLock { $0.ending }
    }
}
