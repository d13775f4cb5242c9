import Synchronization

/// Whether a run is being stopped, and how (docs/output.md, "Stopping a run"). Shared by the
/// stages: the reader stops reading, the delivery sink drains its lanes and later cancels them.
///
/// Only moves forward: running → draining (the first SIGTERM / SIGINT, or a graceful shutdown
/// asked for by whoever runs the run) → immediate (a second signal, or the drain deadline).
/// An immediate stop without a drain before it implies the drain.
public final class RunStop: Sendable {
    public enum Phase: Int, Sendable, Comparable {
        case running
        /// Read nothing more; settle what was read; let what is in flight finish.
        case draining
        /// Also cancel what is in flight.
        case immediate

        public static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }
    }

    private struct State {
        var phase = Phase.running
        /// Why the drain began: `SIGTERM`, `SIGINT`, `a graceful shutdown`.
        var cause: String?
        /// Why in-flight requests were cancelled: `a second signal (SIGINT)`, `the drain deadline (30 s)`.
        var immediateCause: String?
        /// The last signal the service group reported, before it starts the graceful shutdown.
        var signal: String?
        var observers: [@Sendable (Phase) -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var phase: Phase { state.withLock { $0.phase } }
    public var isStopping: Bool { phase > .running }
    public var cause: String? { state.withLock { $0.cause } }
    public var immediateCause: String? { state.withLock { $0.immediateCause } }

    /// The signal that is about to start a graceful shutdown (the service group's, see
    /// `CampaignRunService`), for the stop's cause.
    public func noteSignal(_ name: String) { state.withLock { $0.signal = name } }
    public var signalNoted: String? { state.withLock { $0.signal } }

    /// Starts the graceful stop (once; later calls do nothing).
    public func drain(cause: String) {
        advance(to: .draining) { state in state.cause = cause }
    }

    /// Stops at once: what is in flight is cancelled (once; a drain is implied).
    public func stopNow(cause: String) {
        advance(to: .immediate) { state in
            if state.cause == nil { state.cause = cause }
            state.immediateCause = cause
        }
    }

    /// Calls `observer` with every phase reached from now on, and at once with the current one if
    /// the run is already stopping. Called outside the lock, on the caller's thread.
    public func observe(_ observer: @escaping @Sendable (Phase) -> Void) {
        let current = state.withLock { state -> Phase in
            state.observers.append(observer)
            return state.phase
        }
        if current > .running { observer(current) }
    }

    /// The phases reached from now on (and the current one if the run is already stopping), for
    /// a task that waits for them. Bounded at two: after `running` there are only two phases, each
    /// reported once.
    public func phases() -> AsyncStream<Phase> {
        let (stream, continuation) = AsyncStream<Phase>.makeStream(bufferingPolicy: .bufferingOldest(2))
        observe { phase in continuation.yield(phase) }
        return stream
    }

    private func advance(to phase: Phase, _ update: (inout State) -> Void) {
        let observers = state.withLock { state -> [@Sendable (Phase) -> Void] in
            guard state.phase < phase else { return [] }
            state.phase = phase
            update(&state)
            return state.observers
        }
        for observer in observers { observer(phase) }
    }
}
