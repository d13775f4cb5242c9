public import PushlineCore
public import PushlineEncoding
public import PushlineDelivery
import PushlineIO
public import AsyncAlgorithms
public import Logging
import Synchronization

/// Stage 3 (sending): hands each batch's requests to the providers' lanes and accounts for every
/// one of them.
///
/// - `prepare` (on the encode worker) copies the batch's arena into `RequestBytes`, so requests
///   outlive the batch and the batch goes back to the pool as soon as its requests are cut.
/// - Batches are taken as they come (out of order). Each request gets a tag (`BatchLedger`) and
///   goes to its provider's lane through a feeder task of that lane: a lane that is slow or full
///   holds up only its own feeder, never another provider's sends (what waits is bounded by the
///   batch window, since a batch settles only when its requests have).
/// - One reader task per lane forwards its events here, and one more runs the lane's own
///   waiting work (`DeliveryLane.run()`: an OAuth lane's token exchange). A batch settles once each of its
///   requests is settled or deferred; a deferred request holds its line (`BatchSettlement.hold`)
///   until its `.settled` event, so the window moves on while retries wait.
/// - Outcomes are recorded on top of each batch's `encodeCounts`; result lines are written as
///   events arrive (completion order) to `sent.ndjson`, `invalid-tokens.ndjson`,
///   `failed.ndjson`, `unsent.ndjson`, and rejects to `rejects.ndjson`, each under a temporary
///   name renamed on close (written, empty, even when nothing lands in them). The outcomes of
///   each batch of a lane's events reach the (temporary) files together as they arrive (a group
///   commit: one write per file), so a killed run leaves its record in the kernel.
/// - Stopping (`RunStop`): at the drain, every lane is drained (`DeliveryLane.drain()`: queued
///   and retrying requests settle as unsent, in-flight ones get their answers), and the requests
///   of batches still coming from the encoder are settled unsent here, never handed to a lane;
///   at an immediate stop (second signal, drain deadline) every lane is cancelled after its
///   feeder's last `send`, and what was in flight settles as unsent too (`possibleDuplicate`
///   when it may have reached the provider). A lane never fails a request because of a stop
///   (`DeliveryLane.cancel()`): a device the stop kept from being attempted, including one
///   still on its way to a lane, is unsent. Every device read gets its outcome.
/// - Requests for a provider with no lane settle as failed (`provider_not_configured`);
///   providers in `skip` (APNs under `--validate-only`) settle as skipped. None is lost.
///
/// Runs on its own thread, like the dry-run sink: `write(2)` blocks.
public actor DeliverySink: RequestSink {
    private let executor: DedicatedThreadExecutor
    private let routes: RouteTable
    private let lanes: [any DeliveryLane]
    private let skip: [Provider: SkipReason]
    private let folder: String
    private let logger: Logger
    private let stop: RunStop?
    /// Quiet hours are on: deferred lines go to `deferred.ndjson`.
    private let writesDeferred: Bool
    private let writesHoldout: Bool
    /// Gets the counts at most every `RunObserver.publishInterval` (progress, metrics).
    private let observer: RunObserver?
    private let prepared = PreparedBytes()
    /// Web Push bodies are encrypted in `prepare`, when the run sends to Web Push.
    private let sealing: WebPushSealing?
    /// Checkpoints (and, resuming, where to continue): nil for an audience from standard input.
    private let checkpointPlan: CheckpointPlan?
    private var started = false
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Reason code of a request whose provider has no lane.
    public static let noLaneReason = "provider_not_configured"
    /// Reason code of a request given to a lane whose events ended before it settled it (a
    /// defect in the lane): the run fails.
    public static let laneEndedReason = "lane_ended"

    /// How often what settled is handed to the kernel (the "at least every second" of a killed
    /// run's record).
    static let diskFlushInterval: Duration = .milliseconds(500)
    /// Free heap goes back to the kernel every 2 s (`HeapTrim`).
    static let ticksPerHeapTrim = 4

    /// `lanes`: one per provider (a second lane for the same provider is ignored).
    public init(
        executor: DedicatedThreadExecutor, routes: RouteTable, lanes: [any DeliveryLane], skip: [Provider: SkipReason] = [:],
        folder: String, stop: RunStop? = nil, writesDeferred: Bool = false, logger: Logger, observer: RunObserver? = nil
    ) {
        self.init(
            executor: executor, routes: routes, lanes: lanes, skip: skip, folder: folder, stop: stop, writesDeferred: writesDeferred,
            checkpoint: nil, logger: logger, observer: observer
        )
    }

    init(
        executor: DedicatedThreadExecutor, routes: RouteTable, lanes: [any DeliveryLane], skip: [Provider: SkipReason] = [:],
        folder: String, stop: RunStop? = nil, writesDeferred: Bool = false, writesHoldout: Bool = false, checkpoint: CheckpointPlan?, logger: Logger, observer: RunObserver? = nil
    ) {
        self.checkpointPlan = checkpoint
        self.writesDeferred = writesDeferred
        self.writesHoldout = writesHoldout
        self.executor = executor
        self.routes = routes
        var seen = Set<Provider>()
        self.lanes = lanes.filter { seen.insert($0.provider).inserted }
        sealing = WebPushSealing(routes: routes, sendingTo: self.lanes.map(\.provider))
        self.skip = skip
        self.folder = folder
        self.stop = stop
        self.logger = logger
        self.observer = observer
    }

    /// Encrypts the batch's Web Push bodies and copies its arena into bytes of their own, on
    /// the encode worker.
    public nonisolated func prepare(_ batch: inout EncodedBatch) {
        guard !batch.index.isEmpty else { return }
        sealing?.seal(&batch.index)
        prepared.put(RequestBytes.arena(of: batch.index), sequence: batch.sequence)
    }

    /// What the sink's loop takes, one at a time, from its child tasks.
    private enum Item: Sendable {
        case batch(EncodedBatch)
        case inputEnded
        case events(lane: Int, [SendEvent])
        case eventsEnded(lane: Int)
        /// Lane `lane`'s feeder returned from its last `send`.
        case feederSentAll(lane: Int)
        /// Every `diskFlushInterval`: results to disk, a checkpoint when due, and the counts
        /// published while everything waits (retries, a pause).
        case tick
        /// The run is stopping.
        case stop(RunStop.Phase)
    }

    public func run(input: AsyncChannel<EncodedBatch>, settlement: BatchSettlement, recycle pool: BatchPool? = nil) async throws(SinkError) -> SinkReport {
        guard !started else { throw SinkError(message: "a DeliverySink runs once") }
        started = true
        let state: SendState
        do throws(OutputFileError) {
            state = try SendState(
                folder: folder, routes: routes, lanes: lanes.map(\.provider), skip: skip, writesDeferred: writesDeferred, writesHoldout: writesHoldout,
                checkpoint: checkpointPlan, logger: logger, observer: observer
            )
        } catch {
            for lane in lanes { await lane.cancel() }
            throw SinkError(message: error.description)
        }
        // The first journal, before any request reaches a lane. A resume keeps the horizon it
        // read: devices up to it that it has not sent yet are still possible duplicates.
        state.checkpoint(sync: true)

        // Back-pressured: each child task holds at most one item while the loop works.
        let items = AsyncChannel<Item>()
        let feeds = lanes.map { _ in LaneFeed() }
        let lanes = self.lanes
        let stopPhases = stop?.phases()

        // Everything that uses `state` stays in the group's body: it is this actor's, not sent.
        let report = await withTaskGroup(of: Void.self, returning: Result<SinkReport, SinkError>.self) { group in
            // Child tasks are not isolated to this actor, but the ones that only move items
            // prefer its thread: a hand-over to the loop is then a job on the same thread, not
            // a wake-up of a pool thread and a hop back, and what the lanes' events wake is the
            // sink's thread, which gives way to the transfer threads (`ThreadPriority`).
            let thread = executor
            group.addTask(executorPreference: thread) {
                for await batch in input { await items.send(.batch(batch)) }
                await items.send(.inputEnded)
            }
            for (i, lane) in lanes.enumerated() {
                let feed = feeds[i]
                group.addTask(executorPreference: thread) {
                    let ending = await feed.feed(lane)
                    await items.send(.feederSentAll(lane: i))
                    if ending == .finish { await lane.finish() } else { await lane.cancel() }
                }
                group.addTask(executorPreference: thread) {
                    for await events in lane.events { await items.send(.events(lane: i, events)) }
                    await items.send(.eventsEnded(lane: i))
                }
                // The lane's own waiting work (an OAuth token exchange): it ends with the lane.
                // On the pool: nothing of it may wait behind the sink.
                group.addTask { await lane.run() }
            }
            // The clock of the disk flush and the checkpoint (not a poll: it waits for nothing).
            // These two end when the loop is over (`cancelAll`).
            group.addTask(executorPreference: thread) {
                for await _ in AsyncTimerSequence(interval: Self.diskFlushInterval, clock: .continuous) { await items.send(.tick) }
            }
            if let stopPhases {
                group.addTask(executorPreference: thread) {
                    for await phase in stopPhases { await items.send(.stop(phase)) }
                }
            }

            var machine = DeliverySinkStateMachine(lanes: lanes.count)
            // Chunks wait here until the journal's horizon covers their lines and the lanes hold
            // fewer than the duplicate window (docs/resume.md): a kill can then repeat at most that
            // many sends, and a resume knows which lines they were.
            var pending = PendingChunks(window: checkpointPlan?.duplicateWindow ?? Int.max)
            var running = true

            nonisolated(nonsending) func perform(_ actions: [DeliverySinkStateMachine.Action]) async {
                for action in actions {
                    switch action {
                    case .logStop(let immediate):
                        logStop(state: state, settlement: settlement, immediate: immediate)
                    case .logCancel(.immediateStop):
                        logger.notice("stopping now: cancelling the requests in flight", metadata: [
                            "cause": "\(stop?.immediateCause ?? "a second stop")", "in_flight": "\(state.unsettledInLanes)",
                        ])
                    case .logCancel(.resultsUnwritable):
                        // Stop sending and reading (the reader ends at its next batch); everything
                        // still settles (counted) so the run drains and ends. The files keep every
                        // line written before the failure and the journal its last consistent
                        // checkpoint, for a resume once there is room.
                        logger.error("results cannot be written: stopping; the results written so far and the last checkpoint are kept (resume with --resume once the cause is fixed)", metadata: [
                            "error": "\(state.writeFailure?.description ?? "")", "in_lanes": "\(state.unsettledInLanes)",
                        ])
                    case .closeSettlement:
                        settlement.close()
                    case .settleHeldUnsent:
                        // Stopping: held requests never reach a lane.
                        for held in pending.takeAll() { state.settleUnsent(held.requests, settlement: settlement) }
                        await perform(machine.everythingHandedOver())
                    case .drainLanes:
                        for lane in lanes { await lane.drain() }
                    case .finishLane(let lane):
                        feeds[lane].end(.finish)
                    case .cancelLaneAfterSends(let lane):
                        feeds[lane].end(.cancel)
                    case .cancelLane(let lane):
                        // Its feeder is done sending; `cancel()` waits for the lane's end, so not here.
                        let lane = lanes[lane]
                        group.addTask { await lane.cancel() }
                    case .finish:
                        running = false
                    }
                }
            }
            nonisolated(nonsending) func release() async {
                while machine.sendsToLanes, let next = pending.next(inLanes: state.unsettledInLanes) {
                    if state.laneHasEnded(next.lane) {
                        // Cut for a lane whose events ended before they could be handed over (it
                        // broke its contract): they fail here, as later batches' do, and what the
                        // lane lost takes no room in the window.
                        pending.removeFirst(next.requests.count)
                        state.settleLaneEnded(next.requests, settlement: settlement)
                        continue
                    }
                    let highest = next.requests.last.map(\.entry.line) ?? 0
                    if highest > state.horizon(lane: next.lane) {
                        // Moving a horizon rewrites the journal. Done for each batch as it comes,
                        // that was a hundred writes a second (a quarter of this thread's time), so
                        // it waits until the lanes hold less than half the window (still far more
                        // than their streams), then covers every waiting request of this lane the
                        // window has room for: a write per half window or per batch window, and a
                        // resume still marks at most a window that never left.
                        let inLanes = state.unsettledInLanes
                        // At least 1: a window of 1 (`--duplicate-window 1`) has no half, and waiting
                        // for fewer than none would hold the chunk until the input ended, which the
                        // held batches themselves keep from happening.
                        guard inLanes < max(1, pending.window / 2) || machine.inputEnded else { break }
                        let ahead = max(highest, pending.highestLine(ofNext: pending.window - max(0, inLanes), lane: next.lane))
                        if !state.extendHorizon(lane: next.lane, to: ahead) { break }
                    }
                    pending.removeFirst(next.requests.count)
                    state.handed(lane: next.lane, count: next.requests.count)
                    feeds[next.lane].put(next.requests)
                }
                if pending.isEmpty { await perform(machine.everythingHandedOver()) }
            }

            for await item in items {
                switch item {
                case .batch(let batch):
                    // Once the run is stopping, nothing new goes to a lane: the sink settles the
                    // requests of batches still coming from the encoder as unsent itself.
                    let chunks = state.accept(batch, bytes: prepared.take(sequence: batch.sequence), settlement: settlement, pool: pool, stopping: !machine.sendsToLanes)
                    for (lane, chunk) in chunks.enumerated() where !chunk.isEmpty { pending.append(lane: lane, chunk, lastLine: batch.lastLine) }
                    await release()
                case .inputEnded:
                    await perform(machine.endOfInput())
                    await release()
                case .events(let lane, let events):
                    state.handle(events, lane: lane, settlement: settlement)
                    // Group commit: a lane turn's outcomes reach the kernel together, at once, so a
                    // kill finds the result line of nearly every device the provider accepted and a
                    // resume sends (and marks) only what was really on the wire.
                    state.flushToDisk()
                    await release()
                case .eventsEnded(let lane):
                    // Before its feeder was told to finish or cancel it, a lane's events may not
                    // end: it broke the contract even if it settled what it had.
                    let (early, actions) = machine.laneEnded(lane)
                    state.laneEnded(lane, early: early, settlement: settlement)
                    await perform(actions)
                case .feederSentAll(let lane):
                    await perform(machine.feederSentAll(lane: lane))
                case .tick:
                    state.flushToDisk()
                    if state.checkpointDue { state.checkpoint(sync: true) }
                    if machine.tick() { HeapTrim.releaseFreeMemory() }
                case .stop(let phase):
                    await perform(machine.stop(phase))
                }
                if state.writeFailure != nil { await perform(machine.resultsUnwritable()) }
                state.publish()
                if !running { break }
            }
            // The clock and the stop watcher; everything else has ended or is ending (a feeder
            // reporting to a loop that is over stops waiting, and returns from its lane's end).
            group.cancelAll()
            await group.waitForAll()
            state.flushToDisk()
            state.publish(final: true)

            for lane in lanes {
                state.attach(await lane.report(), of: lane.provider)
            }
            do throws(OutputFileError) {
                return .success(try state.close())
            } catch {
                return .failure(SinkError(message: error.description))
            }
        }
        return try report.get()
    }

    /// The one line that says the stop began: why, and what is still to settle.
    private func logStop(state: SendState, settlement: BatchSettlement, immediate: Bool) {
        logger.notice("stopping: reading no more; lines read are settled, in-flight requests \(immediate ? "are cancelled" : "may finish")", metadata: [
            "cause": "\(stop?.cause ?? "a stop request")", "lines": "\(state.counts.lines)",
            "in_lanes": "\(state.unsettledInLanes)", "retrying": "\(state.retrying)",
            "batches_in_flight": "\(settlement.inFlight)",
        ])
    }
}
