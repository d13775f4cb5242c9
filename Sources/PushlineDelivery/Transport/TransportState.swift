/// What the producers, the consumer and the transfer thread share, behind one lock.
///
/// One budget bounds everything: `held` counts requests queued, in flight, and completed but not
/// yet taken by the consumer; it never exceeds `capacity`. Producers wait (in `waiters`, FIFO)
/// while it is full, and only the consumer taking completions lowers it, so a slow consumer slows
/// admission while the transfer thread itself never waits: completions always have room.
struct TransportState {
    enum Phase { case running, draining, cancelling }

    /// Touched only under the lock (its producer reads `remaining` under it after resuming).
    final class SubmitWaiter: @unchecked Sendable {
        var remaining: ArraySlice<TransportRequest>
        let continuation: CheckedContinuation<Void, Never>
        init(remaining: ArraySlice<TransportRequest>, continuation: CheckedContinuation<Void, Never>) {
            self.remaining = remaining
            self.continuation = continuation
        }
    }

    let capacity: Int
    var phase = Phase.running
    var queue = FIFOQueue<TransportRequest>()
    var held = 0
    var waiters: [SubmitWaiter] = []
    var completed: [TransportResponse] = []
    var consumer: CheckedContinuation<[TransportResponse]?, Never>?
    /// The transfer thread has published its last completion.
    var loopFinished = false
    /// The transfer thread has closed its engine: nobody may wake it any more.
    var engineClosed = false
    var loopJoined = false
    var joinWaiters: [CheckedContinuation<Void, Never>] = []
    /// A wake-up is pending: further producers need not send another.
    var wakePending = false

    var inFlight = 0
    var submitted: UInt64 = 0
    var completedCount: UInt64 = 0
    var connectionsOpened = 0
    var wireSends: UInt64 = 0

    init(capacity: Int) { self.capacity = capacity }

    /// Moves what fits of `requests` into the queue; returns how many.
    mutating func enqueue(_ requests: ArraySlice<TransportRequest>) -> Int {
        let room = capacity - held
        let taken = Swift.min(room, requests.count)
        guard taken > 0 else { return 0 }
        queue.append(contentsOf: requests.prefix(taken))
        held += taken
        submitted &+= UInt64(taken)
        return taken
    }

    /// Admits waiting producers' requests into freed room, in order; returns the producers whose
    /// requests are now all taken (to resume outside the lock).
    mutating func admitWaiters() -> [CheckedContinuation<Void, Never>] {
        var resumed: [CheckedContinuation<Void, Never>] = []
        var satisfied = 0
        for waiter in waiters {
            let taken = enqueue(waiter.remaining)
            waiter.remaining = waiter.remaining.dropFirst(taken)
            guard waiter.remaining.isEmpty else { break }
            resumed.append(waiter.continuation)
            satisfied += 1
        }
        if satisfied > 0 { waiters.removeFirst(satisfied) }
        return resumed
    }

    /// Hands every completed response to the consumer and frees their room.
    mutating func takeCompleted() -> (batch: [TransportResponse], resumed: [CheckedContinuation<Void, Never>]) {
        let batch = completed
        completed = []
        held -= batch.count
        return (batch, admitWaiters())
    }

    /// Ends every waiting producer's wait; what they had not handed over is not taken.
    mutating func releaseWaiters() -> [CheckedContinuation<Void, Never>] {
        let resumed = waiters.map(\.continuation)
        waiters = []
        return resumed
    }
}

/// Counters for metrics: a snapshot, consistent with itself.
public struct TransportCounters: Sendable, Equatable {
    /// Requests taken but not yet handed to curl.
    public let queued: Int
    /// Requests handed to curl and not completed.
    public let inFlight: Int
    /// Completions waiting for the consumer.
    public let awaitingConsumer: Int
    public let submitted: UInt64
    public let completed: UInt64
    /// New connections curl opened (the sum of `CURLINFO_NUM_CONNECTS` over completed transfers).
    public let connectionsOpened: Int
    /// Times libcurl put a completed request on a connection, its own resends included (the sum
    /// of `TransportResponse.wireSends` over completed requests).
    public let wireSends: UInt64
}
