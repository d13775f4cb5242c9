import Synchronization

/// The run's batch window and settled-line tracker, shared by the reader (which waits for
/// admission before it reads the next batch) and the sink (which settles batches).
///
/// The pure `BatchWindow` and `SettledLineTracker` behind a lock; only `admit` suspends, and
/// only the reader calls it, so one waiter is enough.
public final class BatchSettlement: Sendable {
    private struct State {
        var window: BatchWindow
        var lines: SettledLineTracker
        var waiter: CheckedContinuation<Void, Never>?
        /// After a sink failure: admit everything so the other stages can drain and finish.
        var open = false
        /// The run is stopping: admit nothing more.
        var closed = false
        var peakInFlight = 0
    }

    private let state: Mutex<State>

    public init(window: Int, afterLine: Int = 0) {
        state = Mutex(State(window: BatchWindow(size: window), lines: SettledLineTracker(afterLine: afterLine)))
    }

    /// Waits until the next batch may be read (batches are admitted in sequence order, one per
    /// call: the reader calls this before reading each batch). False once the run is stopping
    /// (`close()`): read nothing more.
    @discardableResult
    public func waitForAdmission() async -> Bool {
        while true {
            let admitted = state.withLock { state -> Bool? in
                if state.closed { return false }
                if state.open { return true }
                guard state.window.admit() != nil else { return nil }
                state.peakInFlight = max(state.peakInFlight, state.window.nextSequence - state.window.lowestUnsettled)
                return true
            }
            if let admitted { return admitted }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.closed || state.open || state.window.canAdmit { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Batch `sequence` (lines through `lastLine`) is settled: every request of it has an outcome
    /// (or is held by `hold`). Wakes the reader when the window slides.
    public func settle(sequence: Int, lastLine: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.window.settle(sequence)
            state.lines.settle(sequence: sequence, lastLine: lastLine)
            guard state.window.canAdmit, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The reader is parked in `waitForAdmission` (what a test waits for, instead of a clock).
    var readerIsWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// A request of `line` outlives its batch (a retry): the low-water mark stays below it.
    public func hold(line: Int) { state.withLock { $0.lines.hold(line: line) } }
    public func release(line: Int) { state.withLock { _ = $0.lines.release(line: line) } }

    /// Stops bounding admission (the sink failed: the run drains without settling).
    public func open() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.open = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The run is stopping: the reader gets no more admissions (and is woken if it waits for one).
    public func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Batches admitted and not settled now.
    public var inFlight: Int { state.withLock { $0.window.nextSequence - $0.window.lowestUnsettled } }

    /// Every line up to here is settled.
    public var lowWaterMark: Int { state.withLock { $0.lines.lowWaterMark } }
    /// The most batches admitted and not yet settled at any time (≤ the window).
    public var peakInFlight: Int { state.withLock { $0.peakInFlight } }
    public var windowSize: Int { state.withLock { $0.window.size } }
}
