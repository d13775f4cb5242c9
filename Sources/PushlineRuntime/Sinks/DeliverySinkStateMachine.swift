/// The delivery sink's decisions, with no I/O (the shape of swift-nio's
/// `NIOThrowingAsyncSequenceProducerStateMachine`): `DeliverySink` feeds it what happened (input
/// ended, a stop, a lane's events ended, a feeder done sending, results unwritable, a tick) and
/// does what it answers. Every stop path is one transition here, tested without threads or sleeps.
///
/// The run moves `sending` → `draining` (the first stop: lanes drained, requests still coming
/// settle unsent here) → `cancelling` (the immediate stop, or results that cannot be written:
/// every lane cancelled once its feeder's last `send` returned) → `finished` (input ended and
/// every lane's events ended). `sending` may go straight to `cancelling`.
struct DeliverySinkStateMachine: Sendable {
    /// What a lane's feeder task has been told and has done. A lane is finished or cancelled only
    /// after its feeder's last `send` (`DeliveryLane`: a send after either is a caller's error),
    /// so the terminal order travels behind the requests on the feeder's own stream.
    enum Feeder: Sendable, Hashable {
        /// Still taking requests.
        case open
        /// Told to finish the lane after the requests it holds.
        case finishing
        /// Finishing, and an immediate stop came: the sink cancels the lane once the feeder says
        /// its last `send` returned.
        case finishingThenCancel
        /// Told to cancel the lane after the requests it holds.
        case cancelling
        /// Its last `send` returned; `cancelled` once someone cancels (or will cancel) the lane.
        case sendsDone(cancelled: Bool)
    }

    /// Why the sink cancels its lanes (for its log line; the cancelling itself is the same).
    enum CancelCause: Sendable, Hashable {
        /// A second signal or the drain deadline (`RunStop.Phase.immediate`).
        case immediateStop
        /// A result file cannot be written: stop sending and reading, keep what was written.
        case resultsUnwritable
    }

    /// What the sink knows of the run while it is not finished.
    struct Run: Sendable, Hashable {
        var inputEnded = false
        var feeders: [Feeder]
        var lanesEnded: [Bool]

        init(lanes: Int) {
            feeders = Array(repeating: .open, count: lanes)
            lanesEnded = Array(repeating: false, count: lanes)
        }

        var isDone: Bool { inputEnded && !lanesEnded.contains(false) }
    }

    enum State: Sendable, Hashable {
        /// Reading batches and handing their requests to the lanes.
        case sending(Run)
        /// Stopping: the lanes were drained; new requests settle unsent in the sink.
        case draining(Run)
        /// The lanes are being cancelled; new requests settle unsent in the sink.
        case cancelling(Run)
        /// Input ended and every lane's events ended: the sink writes its report.
        case finished
    }

    /// One thing for the sink to do, in the order given.
    enum Action: Sendable, Equatable {
        /// The one log line that says the stop began.
        case logStop(immediate: Bool)
        /// The log line that says why in-flight requests are cancelled.
        case logCancel(CancelCause)
        /// No more batches from the reader (it ends at its next batch).
        case closeSettlement
        /// Requests waiting for the duplicate window settle unsent (and so do those still to come).
        case settleHeldUnsent
        /// `DeliveryLane.drain()` on every lane (returns once waiting requests settled).
        case drainLanes
        /// Put a terminal order behind the requests on lane `lane`'s feeder stream, and close it.
        case finishLane(Int)
        case cancelLaneAfterSends(Int)
        /// Cancel lane `lane` now, from a task of its own: its feeder's last `send` returned.
        case cancelLane(Int)
        /// The run is over: leave the loop, close the files, write the report.
        case finish
    }

    private(set) var state: State
    private var ticks = 0

    init(lanes: Int) {
        state = .sending(Run(lanes: lanes))
    }

    /// Whether requests cut from a batch go to the lanes (false: the sink settles them unsent).
    var sendsToLanes: Bool {
        if case .sending = state { return true }
        return false
    }

    var inputEnded: Bool {
        switch state {
        case .sending(let run), .draining(let run), .cancelling(let run): return run.inputEnded
        case .finished: return true
        }
    }

    // MARK: - Events

    /// The encoder's stream ended: no more batches.
    mutating func endOfInput() -> [Action] {
        update { run in
            run.inputEnded = true
            return []
        }
    }

    /// Every request cut so far went to a feeder (or settled): once the input ended, each open
    /// feeder is told to finish its lane behind the requests it holds.
    mutating func everythingHandedOver() -> [Action] {
        update { run in
            guard run.inputEnded else { return [] }
            var actions: [Action] = []
            for lane in run.feeders.indices where run.feeders[lane] == .open {
                run.feeders[lane] = .finishing
                actions.append(.finishLane(lane))
            }
            return actions
        }
    }

    /// A stop phase reached (`RunStop`). A second report of a phase does nothing.
    mutating func stop(_ phase: RunStop.Phase) -> [Action] {
        switch (state, phase) {
        case (_, .running), (.finished, _), (.draining, .draining), (.cancelling, .draining):
            return []
        case (.sending(let run), .draining):
            state = .draining(run)
            return [.logStop(immediate: false), .settleHeldUnsent, .drainLanes]
        case (.sending(var run), .immediate):
            let cancels = Self.cancelAll(&run)
            state = .cancelling(run)
            return [.logStop(immediate: true), .settleHeldUnsent, .drainLanes, .logCancel(.immediateStop)] + cancels
        case (.draining(var run), .immediate):
            let cancels = Self.cancelAll(&run)
            state = .cancelling(run)
            return [.logCancel(.immediateStop)] + cancels
        case (.cancelling, .immediate):
            return []
        }
    }

    /// A result file failed to write: stop sending and reading; everything still settles.
    mutating func resultsUnwritable() -> [Action] {
        switch state {
        case .finished, .cancelling:
            return []
        case .sending(var run):
            let cancels = Self.cancelAll(&run)
            state = .cancelling(run)
            return [.closeSettlement, .logCancel(.resultsUnwritable), .settleHeldUnsent, .drainLanes] + cancels
        case .draining(var run):
            // Already drained: what is queued settles at once.
            let cancels = Self.cancelAll(&run)
            state = .cancelling(run)
            return [.closeSettlement, .logCancel(.resultsUnwritable)] + cancels
        }
    }

    /// Lane `lane`'s feeder returned from its last `send`.
    mutating func feederSentAll(lane: Int) -> [Action] {
        update { run in
            switch run.feeders[lane] {
            case .finishingThenCancel:
                run.feeders[lane] = .sendsDone(cancelled: true)
                return run.lanesEnded[lane] ? [] : [.cancelLane(lane)]
            case .cancelling:
                run.feeders[lane] = .sendsDone(cancelled: true)
                return []
            case .finishing:
                run.feeders[lane] = .sendsDone(cancelled: false)
                return []
            case .open, .sendsDone:
                // A feeder reports once, after its terminal order: nothing else can happen.
                return []
            }
        }
    }

    /// Lane `lane`'s events ended. `early` when it ended before its feeder was told to finish
    /// or cancel it: the lane broke its contract, and what it did not settle is lost (counted).
    mutating func laneEnded(_ lane: Int) -> (early: Bool, actions: [Action]) {
        var early = false
        let actions = update { run in
            guard !run.lanesEnded[lane] else { return [] }
            run.lanesEnded[lane] = true
            early = run.feeders[lane] == .open
            return []
        }
        return (early, actions)
    }

    /// Every `DeliverySink.diskFlushInterval` (results to disk, a checkpoint when due): whether
    /// this tick also gives free heap back.
    mutating func tick() -> Bool {
        ticks &+= 1
        return ticks % DeliverySink.ticksPerHeapTrim == 0
    }

    // MARK: - Transitions

    /// Applies `change` to the run of any state but `finished`, then finishes if the run is done.
    private mutating func update(_ change: (inout Run) -> [Action]) -> [Action] {
        var run: Run
        let next: (Run) -> State
        switch state {
        case .finished: return []
        case .sending(let current): run = current; next = State.sending
        case .draining(let current): run = current; next = State.draining
        case .cancelling(let current): run = current; next = State.cancelling
        }
        var actions = change(&run)
        guard run.isDone else {
            state = next(run)
            return actions
        }
        // Every lane ended. A feeder still open belongs to a lane that ended early: close it
        // (cancelling an ended lane only returns) so its task ends.
        for lane in run.feeders.indices where run.feeders[lane] == .open {
            actions.append(.cancelLaneAfterSends(lane))
        }
        state = .finished
        actions.append(.finish)
        return actions
    }

    /// Every lane is to be cancelled: an open feeder carries the order behind its requests; a
    /// finishing one is cancelled once it says its sends are done; a done one at once.
    private static func cancelAll(_ run: inout Run) -> [Action] {
        var actions: [Action] = []
        for lane in run.feeders.indices {
            switch run.feeders[lane] {
            case .open:
                run.feeders[lane] = .cancelling
                actions.append(.cancelLaneAfterSends(lane))
            case .finishing:
                run.feeders[lane] = .finishingThenCancel
            case .sendsDone(cancelled: false):
                run.feeders[lane] = .sendsDone(cancelled: true)
                // A lane whose events ended has nothing left to cancel.
                if !run.lanesEnded[lane] { actions.append(.cancelLane(lane)) }
            case .finishingThenCancel, .cancelling, .sendsDone(cancelled: true):
                break
            }
        }
        return actions
    }
}
