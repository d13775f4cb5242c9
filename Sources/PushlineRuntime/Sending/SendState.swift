import PushlineCore
import PushlineEncoding
import PushlineDelivery
import PushlineIO
import Logging
import CoreMetrics

/// The delivery sink's bookkeeping, used only on the sink's thread: the ledger of outstanding
/// requests per batch, the counts, the result files, and per-provider measurements.
final class SendState {
    /// Per route id: its provider and platform name (looked up per request without copying a
    /// `RequestRoute`, whose strings and arrays would cost retains).
    private let routeProvider: [Provider]
    private let routePlatform: [String]
    /// Experiments: each route's arm and variant name (nil without an experiment).
    private let routeArm: [Int?]
    private let routeVariant: [String?]
    /// Lane index per provider ordinal (nil: no lane).
    private let laneOf: [Int?]
    private let laneProviders: [Provider]
    private let skip: [Provider: SkipReason]
    private let logger: Logger

    /// The result files and the first failure to write one.
    private let files: SendResultFiles
    var writeFailure: OutputFileError? { files.writeFailure }

    private(set) var counts = RunCounts()
    private var batches = BatchLedger()
    /// Tags of requests waiting in a lane's retry queue (their line is held).
    private var deferred = Set<UInt64>()
    /// Per lane: handed, settled, ended, lost.
    private var lanes: LaneTallies
    /// Per provider, by `Provider.ordinal`: nil until the provider has a lane or an outcome.
    /// An array mutated in place: a dictionary's `_modify` of a value this large allocates its
    /// coroutine frame, twice per settled request.
    private var delivery: [ProviderDeliveryReport?] = Array(repeating: nil, count: Provider.allCases.count)
    private var firstHanded: [ContinuousClock.Instant?] = Array(repeating: nil, count: Provider.allCases.count)
    /// Tags no open batch knew: a lane settled a request twice or invented one.
    private(set) var unknownTags = 0

    /// Checkpoints: the watermark and its counts, the journal (nil: an audience from stdin).
    private(set) var ledger: CheckpointLedger
    private let checkpointer: RunCheckpointer?
    /// Resuming: the devices earlier runs settled, and those a killed run may have sent.
    private let resume: ResumeMarks
    /// The highest line the journal allows each lane to be given.
    private var horizons: JournalHorizons

    private let observer: RunObserver?
    private var publishGate = PublishGate()
    /// Request latency per provider ordinal, when a metrics file is written.
    private let latencyTimers: [CoreMetrics.Timer?]

    init(
        folder: String, routes: RouteTable, lanes: [Provider], skip: [Provider: SkipReason], writesDeferred: Bool = false, writesHoldout: Bool = false,
        checkpoint: CheckpointPlan? = nil, logger: Logger, observer: RunObserver? = nil
    ) throws(OutputFileError) {
        files = try SendResultFiles(folder: folder, writesDeferred: writesDeferred, writesHoldout: writesHoldout, checkpoint: checkpoint)
        routeProvider = routes.routes.map(\.provider)
        routePlatform = routes.routes.map(\.platformName)
        routeArm = routes.routes.map(\.variant)
        routeVariant = routes.routes.map(\.variantName)
        var laneOf = [Int?](repeating: nil, count: Provider.allCases.count)
        for (i, provider) in lanes.enumerated() where laneOf[provider.ordinal] == nil { laneOf[provider.ordinal] = i }
        self.laneOf = laneOf
        self.laneProviders = lanes
        self.skip = skip
        self.logger = logger
        self.lanes = LaneTallies(lanes: lanes)
        for provider in lanes { delivery[provider.ordinal] = ProviderDeliveryReport(provider: provider) }
        self.observer = observer
        latencyTimers = Provider.allCases.map { provider in observer?.metrics?.latencyTimer(provider) }
        let resumed = checkpoint?.resumed == true ? checkpoint?.journal : nil
        counts = resumed?.counts ?? RunCounts()
        ledger = CheckpointLedger(watermark: resumed?.settledThroughLine ?? 0, counts: resumed?.counts ?? RunCounts(), marks: files.inOrderMarks)
        checkpointer = checkpoint.map(RunCheckpointer.init)
        resume = ResumeMarks(plan: checkpoint)
        horizons = JournalHorizons(plan: checkpoint)
    }

    // MARK: Batches

    /// Accounts for `batch`, cuts its requests per lane (returned by lane index) and gives the
    /// batch back to the pool. Requests that go to no lane settle here, and so do all of them
    /// once the run is `stopping` (unsent: never attempted).
    func accept(_ batch: EncodedBatch, bytes prepared: RequestBytes?, settlement: BatchSettlement, pool: BatchPool?, stopping: Bool = false) -> [[OutgoingRequest]] {
        counts.add(batch.encodeCounts)
        let n = batch.index.count
        ledger.accept(sequence: batch.sequence, lastLine: batch.lastLine, firstTag: batches.nextTag, requests: n, encodeCounts: batch.encodeCounts)
        writeInOrder(batch)
        guard n > 0 else {
            settlement.settle(sequence: batch.sequence, lastLine: batch.lastLine)
            pool?.give(batch)
            return []
        }
        let bytes = prepared ?? RequestBytes.arena(of: batch.index)
        let firstTag = batches.open(sequence: batch.sequence, lastLine: batch.lastLine, requests: n)
        var chunks = [[OutgoingRequest]](repeating: [], count: laneProviders.count)
        for i in 0..<n {
            let request = OutgoingRequest(tag: firstTag &+ UInt64(i), index: batch.index, at: i, bytes: bytes)
            let provider = provider(of: request)
            if let recorded = resume.settledEarlier(request) {
                // Settled by the run this one resumes (its result line is in the file).
                record(request, provider: recorded.provider, outcome: recorded.outcome, writeLine: false)
                complete(request.tag, settlement: settlement)
            } else if let provider, let reason = skip[provider] {
                settleHere(request, provider: provider, outcome: .skipped(reason), settlement: settlement)
            } else if stopping, let provider, laneOf[provider.ordinal] != nil {
                settleHere(request, provider: provider, outcome: .unsent(attempts: 0, possibleDuplicate: false), settlement: settlement)
            } else if let provider, let lane = laneOf[provider.ordinal], !lanes.ended[lane] {
                if chunks[lane].isEmpty { chunks[lane].reserveCapacity(batch.requestCount(for: provider)) }
                chunks[lane].append(request)
            } else {
                let reason = provider.flatMap { laneOf[$0.ordinal] } == nil ? DeliverySink.noLaneReason : DeliverySink.laneEndedReason
                settleHere(request, provider: provider, outcome: Self.neverReachedALane(reason), settlement: settlement)
            }
        }
        pool?.give(batch)
        return chunks
    }

    /// `count` requests went to lane `lane` (the sink releases chunks under the checkpoint's
    /// horizon and duplicate window).
    func handed(lane: Int, count: Int) {
        lanes.handed(lane: lane, count: count)
        let provider = laneProviders[lane]
        delivery[provider.ordinal]?.handed += count
        if firstHanded[provider.ordinal] == nil { firstHanded[provider.ordinal] = .now }
    }

    /// Requests the sink held back settle unsent: the run stopped before they reached a lane.
    func settleUnsent(_ requests: [OutgoingRequest], settlement: BatchSettlement) {
        for request in requests {
            settleHere(request, provider: provider(of: request), outcome: .unsent(attempts: 0, possibleDuplicate: false), settlement: settlement)
        }
    }

    /// Whether lane `lane`'s events have ended: it takes nothing more.
    func laneHasEnded(_ lane: Int) -> Bool { lanes.ended[lane] }

    /// Requests cut for a lane whose events ended before they were handed over: they fail
    /// `lane_ended` here, as the requests of later batches do in `accept`.
    func settleLaneEnded(_ requests: [OutgoingRequest], settlement: BatchSettlement) {
        for request in requests {
            settleHere(request, provider: provider(of: request), outcome: Self.neverReachedALane(DeliverySink.laneEndedReason), settlement: settlement)
        }
    }

    /// The provider of the request's route (nil for a route the table does not have: only from a
    /// corrupted entry; such a request fails as having no lane).
    private func provider(of request: OutgoingRequest) -> Provider? {
        let route = request.entry.route.index
        return route < routeProvider.count ? routeProvider[route] : nil
    }

    /// Failed without an attempt: no lane for its provider, or the lane's events had ended.
    private static func neverReachedALane(_ reason: String) -> DeliveryOutcome {
        .failed(reason: reason, httpStatus: 0, attempts: 0)
    }

    /// A request that never reaches a lane: its outcome is recorded and its tag completed now.
    private func settleHere(_ request: OutgoingRequest, provider: Provider?, outcome: DeliveryOutcome, settlement: BatchSettlement) {
        record(request, provider: provider, outcome: outcome)
        complete(request.tag, settlement: settlement)
    }

    // MARK: Events

    func handle(_ events: [SendEvent], lane: Int, settlement: BatchSettlement) {
        for event in events {
            switch event {
            case .deferred(let tag, let line):
                guard deferred.insert(tag).inserted else { continue }
                settlement.hold(line: line)
                complete(tag, settlement: settlement)
            case .settled(let settled):
                lanes.settled(lane: lane)
                let request = settled.request
                let provider = provider(of: request) ?? settled.provider
                record(request, provider: provider, outcome: settled.outcome)
                if let latency = settled.latency {
                    delivery[provider.ordinal]?.latency.record(latency)
                    latencyTimers[provider.ordinal]?.recordNanoseconds(RunMetrics.nanoseconds(latency))
                }
                if let first = firstHanded[provider.ordinal] { delivery[provider.ordinal]?.sendingTime = ContinuousClock.now - first }
                if deferred.remove(request.tag) != nil {
                    settlement.release(line: request.entry.line)
                } else {
                    complete(request.tag, settlement: settlement)
                }
            }
        }
        files.flush()
    }

    /// Lane `lane`'s events ended. Every request it was given should have settled; if not (a
    /// defect in the lane), the window is opened so the run can end, and the counts will not
    /// reconcile: the run fails rather than hangs.
    func laneEnded(_ lane: Int, early: Bool, settlement: BatchSettlement) {
        let missing = lanes.ended(lane: lane, early: early)
        if missing > 0 {
            logger.error("a sending lane ended before settling every request", metadata: [
                "provider": "\(laneProviders[lane].rawValue)", "unsettled": "\(missing)",
            ])
            settlement.open()
        }
    }

    private func complete(_ tag: UInt64, settlement: BatchSettlement) {
        switch batches.complete(tag: tag) {
        case .pending: break
        case .batchDone(let sequence, let lastLine): settlement.settle(sequence: sequence, lastLine: lastLine)
        case .unknown: unknownTags += 1
        }
    }

    /// Records `outcome` in the counts, the checkpoint's tally and the provider's measurements,
    /// and writes its result line (not for one read back from the previous runs' records).
    private func record(_ request: OutgoingRequest, provider: Provider?, outcome: DeliveryOutcome, writeLine: Bool = true) {
        var outcome = outcome
        // A killed run may have had this device on the wire without recording it.
        if writeLine, let provider { outcome = resume.marked(outcome, of: request, provider: provider) }
        let route = request.entry.route.index
        let arm = route < routeArm.count ? routeArm[route] : nil
        counts.record(outcome, provider: provider, arm: arm)
        ledger.record(tag: request.tag, outcome: outcome, provider: provider, arm: arm)
        guard writeLine else { return }
        guard let provider else { return }
        delivery[reportIndex(provider)]!.count(outcome)
        let variant = route < routeVariant.count ? routeVariant[route] : nil
        switch outcome.kind {
        case .sent:
            ResultLines.sent(request, variant: variant, provider: provider, outcome: outcome, into: &files.sent.buffer)
            if let replacement = outcome.replacementToken {
                // Delivered, and the device has a new token the CRM should store.
                ResultLines.replacedToken(request, variant: variant, provider: provider, platform: platform(of: request), replacement: replacement, into: &files.invalidTokens.buffer)
            }
        case .invalidToken:
            ResultLines.invalidToken(request, variant: variant, provider: provider, platform: platform(of: request), outcome: outcome, into: &files.invalidTokens.buffer)
        case .failed:
            ResultLines.failed(request, variant: variant, provider: provider, outcome: outcome, into: &files.failed.buffer)
        case .unsent:
            ResultLines.unsent(request, variant: variant, provider: provider, outcome: outcome, into: &files.unsent.buffer)
        case .skipped, .written, .rejected:
            // No result line (a lane produces neither written nor rejected).
            break
        }
    }

    private func platform(of request: OutgoingRequest) -> String {
        let route = request.entry.route.index
        return route < routePlatform.count ? routePlatform[route] : ""
    }

    // MARK: Checkpoints

    /// Writes the batch's rejects and deferred lines in input order (holding early ones), and
    /// tells the ledger how far the files go for each batch written.
    private func writeInOrder(_ batch: EncodedBatch) {
        files.writeInOrder(
            sequence: batch.sequence, rejects: batch.rejects.count > 0 ? batch.rejects.bytes : [],
            deferred: batch.deferred.count > 0 ? batch.deferred.bytes : [],
            holdout: batch.holdout.count > 0 ? batch.holdout.bytes : []
        ) { sequence, marks in
            ledger.written(sequence: sequence, marks: marks)
        }
    }


    /// The horizon the journal records for lane `lane`: no request of a later line may reach it.
    func horizon(lane: Int) -> Int { horizons[laneProviders[lane]] }
    var checkpointDue: Bool { checkpointer?.due ?? false }

    /// Moves lane `lane`'s horizon to `line` in the journal (written now, not synced); false
    /// when the journal could not be written (the lane gets nothing past the old horizon).
    func extendHorizon(lane: Int, to line: Int) -> Bool {
        let provider = laneProviders[lane]
        let previous = horizons[provider]
        guard line > previous else { return true }
        horizons[provider] = line
        checkpoint(sync: false)
        if writeFailure != nil {
            horizons[provider] = previous
            return false
        }
        return true
    }

    /// Writes the journal: results handed to the kernel (with `sync`, fsynced) first, so every
    /// outcome the journal counts is in a file, then the watermark, its counts and the horizons.
    func checkpoint(sync: Bool) {
        files.flush()
        guard files.writeFailure == nil, let checkpointer else { return }
        guard let marks = files.checkpointMarks(sync: sync, committedInOrder: ledger.committedMarks) else { return }
        checkpointer.write(watermark: ledger.watermark, horizons: horizons.recorded, counts: ledger.committed, files: marks, sync: sync)
        if let failure = checkpointer.failure { files.fail(.checkpointFailed(failure.description)) }
    }

    /// Writes what the files buffered to the kernel (`SendResultFiles.flushToDisk`).
    func flushToDisk() { files.flushToDisk() }

    /// Requests handed to the lanes and not settled yet (in their queues, retry heaps or in
    /// flight); a lane whose events ended holds none (what it never settled is lost).
    var unsettledInLanes: Int { lanes.unsettled }

    /// Requests waiting in a lane's retry queue.
    var retrying: Int { deferred.count }

    /// A lane's own account, for the provider's report.
    func attach(_ lane: LaneReport, of provider: Provider) {
        delivery[reportIndex(provider)]!.lane = lane
    }

    /// The index of `provider`'s report in `delivery`, made if it has none yet.
    private func reportIndex(_ provider: Provider) -> Int {
        if delivery[provider.ordinal] == nil { delivery[provider.ordinal] = ProviderDeliveryReport(provider: provider) }
        return provider.ordinal
    }

    /// Closes the files (renamed into place) and returns the sink's report.
    func close() throws(OutputFileError) -> SinkReport {
        // The last checkpoint, before the files take their final names: a stopped run resumes
        // from it (a finished one's is marked complete after the summary).
        checkpoint(sync: true)
        var report = SinkReport()
        report.files = try files.close()
        report.counts = counts
        report.delivery = delivery.compactMap { $0 }
        report.unknownTags = unknownTags
        report.lostRequests = lanes.lost
        report.lanesEndedEarly = lanes.endedEarly
        report.settledFromRecords = resume.settledFromRecords
        return report
    }

    // MARK: Progress

    /// Hands the counts to the observer, at most every `RunObserver.publishInterval` (always when
    /// `final`).
    func publish(final: Bool = false) {
        guard let observer, final || publishGate.due() else { return }
        var live = RunObserver.LiveCounts()
        live.counts = counts
        live.inLanes = unsettledInLanes
        live.retrying = deferred.count
        observer.publish(live)
    }
}
