import Synchronization

/// A lane's events on their way to the one task that reads them (`DeliveryLane.events`).
///
/// The producers are transfer threads, which never wait (they are the network loop), so they
/// add here and wake the reader; the reader takes everything that came since its last read as
/// one batch. There is one wake-up at most, never a queue of them.
///
/// Bound: each request handed to a lane yields at most two events (a deferral, then its
/// settlement), and the sink hands a lane no more requests than its batch window holds before it
/// has read their settlements or deferrals (docs/delivery.md, "The most memory a sending run
/// holds"). So what waits here never exceeds twice the requests of the admitted batches plus
/// the deferred ones, whatever the audience.
public final class LaneEvents: AsyncSequence, Sendable {
    public typealias Element = [SendEvent]

    private struct State {
        var pending: [SendEvent] = []
        var finished = false
        /// The reader, waiting (only while `pending` is empty).
        var reader: CheckedContinuation<[SendEvent]?, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Adds `events` for the reader; false (and nothing added) once the sequence has finished.
    @discardableResult
    public func yield(_ events: [SendEvent]) -> Bool {
        guard !events.isEmpty else { return !state.withLock(\.finished) }
        let (reader, added) = state.withLock { state -> (CheckedContinuation<[SendEvent]?, Never>?, Bool) in
            guard !state.finished else { return (nil, false) }
            if let reader = state.reader {
                state.reader = nil
                return (reader, true)
            }
            state.pending.append(contentsOf: events)
            return (nil, true)
        }
        // Handed over whole: a waiting reader has nothing pending to join them to.
        reader?.resume(returning: events)
        return added
    }

    /// Events added and not read yet.
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// No more events: the reader gets what is pending, then the end.
    public func finish() {
        let reader = state.withLock { state -> CheckedContinuation<[SendEvent]?, Never>? in
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// Everything pending, waiting for it if nothing is; nil at the end, or when the reading
    /// task is cancelled (as `AsyncStream` does: events still pending stay for a next read).
    private func next() async -> [SendEvent]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[SendEvent]?, Never>) in
                let ready = state.withLock { state -> [SendEvent]?? in
                    if !state.pending.isEmpty {
                        var batch: [SendEvent] = []
                        swap(&batch, &state.pending)
                        return .some(batch)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.reader = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let reader = state.withLock { state -> CheckedContinuation<[SendEvent]?, Never>? in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: nil)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let events: LaneEvents

        public mutating func next() async -> [SendEvent]? { await events.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(events: self) }
}
