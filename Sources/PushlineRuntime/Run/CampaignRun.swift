public import PushlineCore
import PushlineEncoding
public import PushlineIO
public import PushlineDelivery
public import Logging
import AsyncAlgorithms
import Foundation

/// The result of a run: its status, the counts, and what the summary file says.
public struct RunReport: Sendable {
    public var status: RunStatus
    public var counts: RunCounts
    public var source: SourceReport
    public var files: [(name: String, bytes: Int)]
    public var outputFolder: String
    public var seconds: Double
    /// Set when the run failed for a reason other than the input (output, reconciliation).
    public var failure: String?
    /// Why a `failed` run failed, as its exit code (output, a provider, the folder, a bug).
    public var failureExit: PushlineExit?
    /// The process exit code: the status's, or for a failed run its cause's.
    public var exit: PushlineExit { status == .failed ? failureExit ?? .outputError : status.exit }
    /// Every input line up to here is settled (the settled-line low-water mark; a resume
    /// checkpoint is written from it).
    public var settledThroughLine = 0
    /// The most batches in flight at once (bounded by the batch window).
    public var peakBatchesInFlight = 0
    /// `dry_run` or `send`, as `summary.json` says.
    public var mode = "dry_run"
    /// A sending run under `--validate-only`.
    public var validateOnly = false
    /// Sending runs: per provider, what was sent and measured (`summary.json`'s `delivery`).
    public var delivery: [ProviderDeliveryReport] = []
    /// Every device has exactly one outcome, in total and per provider (also true for a run that
    /// failed for another reason, such as a stopped provider, when its counts add up).
    public var reconciled = false
    /// Set when the run was stopped (SIGTERM / SIGINT) before its stages ended.
    public var stop: StopReport?
    /// Set when the run continued a checkpoint (`--resume`).
    public var resume: ResumeReport?
    /// The folder's run had already finished this campaign (a scheduler's retry of its command):
    /// nothing was read, sent or written; `status` and `counts` are the finished run's.
    public var repeatOfFinishedRun = false
    /// An experiment's arms in `counts.byArm`'s order: the variants' names, then `control`.
    public var experimentArms: [String]?
}

/// What a resumed run continued (`summary.json`'s `resume`, docs/resume.md).
public struct ResumeReport: Sendable {
    /// Runs that made up the campaign so far, this one included.
    public var runs: Int
    /// Every line through here was settled before this run: skipped, its counts carried over.
    public var afterLine: Int
    /// Lines after `afterLine` through here may have been on the wire when the previous run
    /// ended: their devices sent again are marked `possible_duplicate`.
    public var horizonLine: Int
    /// Devices after `afterLine` that the previous runs' result files already settled.
    public var settledFromRecords: Int
}

/// How a run was stopped (`summary.json`'s `stop`).
public struct StopReport: Sendable {
    /// What began the stop: `SIGTERM`, `SIGINT`, `a graceful shutdown request`.
    public var cause: String
    /// Set when in-flight requests were cancelled: a second signal, or the drain deadline.
    public var immediateCause: String?
    /// The reader had reached the input's end before the stop.
    public var inputReadToEnd: Bool
    /// The `--drain-timeout` the run had, in seconds.
    public var drainTimeoutSeconds: Int?
}

/// Runs a compiled campaign over an audience: Read → Parse, route and encode (N workers) → Sink,
/// joined by bounded channels that pass batches, then writes `summary.json` and reconciles.
public struct CampaignRun: Sendable {
    public var pipeline: LoadedPipeline
    public var audiencePath: String
    public var outputFolder: String
    /// Encode workers, clamped to `workerRange` (the CLI rejects values outside it).
    public var workers: Int
    public static let workerRange = 1...256
    public var readerOptions: AudienceReader.Options
    public var logger: Logger
    /// Dry run, or send with the providers' configurations.
    public var mode: RunMode
    /// Builds one provider's lane when sending.
    public var laneFactory: LaneFactory
    /// A previous run's unfinished results in the folder (`UnfinishedRun`) are moved into an
    /// `interrupted-<UTC time>/` subfolder (`--force`); without it the run refuses to start.
    public var moveUnfinishedRunAside = false
    /// `--resend`: with `moveUnfinishedRunAside`, a sending run's record (finished or not) may be
    /// moved aside and the campaign sent again, its notified devices included; without it
    /// `--force` over a sending record is refused (exit 9), naming how many it sent.
    public var resendAcknowledged = false
    /// `--auto-resume`: continue the folder's unfinished run, report a finished run of this
    /// campaign without running it again, else start anew (docs/resume.md).
    public var autoResume = false
    /// How long lanes may finish in-flight requests after a stop (`--drain-timeout`): enforced by
    /// `CampaignRunService`'s service group, reported in the summary.
    public var drainTimeout: Duration = .seconds(30)
    /// A dry run writes each Web Push body encrypted (base64url) with the `authorization` and
    /// `content-length` it would be sent with (`--dry-run-encrypt`).
    public var dryRunEncryptsWebPush = false
    /// Gets the run's counts, input offset and lanes while it runs (progress line, metrics file:
    /// `RunObservation`).
    public var observer: RunObserver?
    /// Continue the folder's checkpoint (`--resume`, docs/resume.md) instead of starting anew.
    public var resume = false
    /// Sending: how the reader, the writer and the encode workers give way to the transfer
    /// threads (`--background-priority`; docs/delivery.md, "Background threads give way"). A dry
    /// run changes no priority.
    public var backgroundPriority: ThreadPriority.Background = .idle
    /// The most time between durable checkpoints (`--checkpoint-interval`); nil: no checkpoint.
    public var checkpointInterval: Duration? = .seconds(2)
    /// Sending: the most requests in the lanes without a durable record (`--duplicate-window`),
    /// the most a kill can send twice; nil: `defaultDuplicateWindow`.
    public var duplicateWindow: Int?
    public static let duplicateWindowRange = 1...10_000_000

    /// Four times what the lanes can have on the wire (connections × streams), at least 10,000:
    /// room for every stream plus the queue that keeps them busy, so the window never throttles
    /// a lane.
    public static func defaultDuplicateWindow(_ configurations: [ProviderSendConfiguration]) -> Int {
        // Saturating: the schema bounds connections and streams, but a window is never worth
        // trapping over.
        let cap = duplicateWindowRange.upperBound
        let wire = configurations.reduce(0) { total, c in
            let product = c.settings.connections.multipliedReportingOverflow(by: c.settings.streamsPerConnection)
            return min(cap, total + (product.overflow ? cap : min(cap, max(0, product.partialValue))))
        }
        return min(max(10_000, 4 * wire), cap)
    }

    /// How a sending run gets a provider's lane: from its configuration and the campaign's routes.
    public typealias LaneFactory = @Sendable (ProviderSendConfiguration, RouteTable) throws -> any DeliveryLane

    /// The cores this process may use (a cgroup's quota counted): the default number of encode
    /// workers, and the most encode threads a sending run makes.
    static var cores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    public init(
        pipeline: LoadedPipeline, audiencePath: String, outputFolder: String, workers: Int? = nil,
        mode: RunMode = .dryRun, laneFactory: LaneFactory? = nil, logger: Logger
    ) {
        self.pipeline = pipeline
        self.audiencePath = audiencePath
        self.outputFolder = outputFolder
        let requested = workers ?? Self.cores
        self.workers = min(max(requested, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        self.readerOptions = AudienceReader.Options(maxBatchBytes: Self.batchBytes, maxLineBytes: pipeline.campaign.maxLineBytes)
        self.mode = mode
        self.laneFactory = laneFactory ?? Self.senderLaneFactory(logger: logger)
        self.logger = logger
    }

    /// The real senders (the default): one `ProviderSenders` lane per provider (docs/delivery.md),
    /// whose notices (a provider stopped, the token endpoint retried) go to `logger` as warnings.
    /// Tests pass their own factory to script outcomes.
    public static func senderLaneFactory(logger: Logger) -> LaneFactory {
        { configuration, routes in
            try ProviderSenders.make(configuration, routes: routes, logger: { message in logger.warning("\(message)") })
        }
    }

    /// Why a provider's lane could not be built.
    public struct LaneFactoryError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    /// What a sending run does with the devices of providers it does not send to: APNs has no
    /// validate-only mode, so under `--validate-only` its devices are skipped (counted, reconciled).
    public static func skipReasons(validateOnly: Bool) -> [Provider: SkipReason] {
        guard validateOnly else { return [:] }
        return [.apns: .validateOnly]
    }

    /// Batches admitted and not settled at most: one per worker, one in each channel hand-off,
    /// those the stage buffers hold, a few held by the sink for reordering.
    public static func batchWindow(workers: Int) -> Int { 2 * workers + 4 + StageBuffer.readAhead + StageBuffer.writeBehind }

    /// Audience bytes per batch. The window is in batches, so this sizes the memory in flight:
    /// with the stage buffers the window fills (13 batches on two cores), and 1 MiB batches put
    /// the demo's peak RSS near 150 MB; 512 KiB ones keep it near 130 MB at the same speed.
    static let batchBytes = 512 << 10

    /// Runs the campaign. `stop`: when it starts stopping, the reader reads no more, every device
    /// read is settled (sending: lanes drained, then cancelled at an immediate stop), and the run
    /// ends with status `stopped` (see `CampaignRunService`, which stops it on SIGTERM / SIGINT).
    public func run(stop: RunStop? = nil) async -> RunReport {
        var campaign = pipeline.campaign
        // FCM's requests carry `validate_only: true` from the encoder on (its body prefix).
        if case .send(_, validateOnly: true) = mode { campaign.fcmValidateOnly = true }
        return await run(encoder: CampaignEncoder(campaign: campaign), stop: stop)
    }

    /// Runs with `encoder` in place of the campaign's own (the seam tests use to inject failures).
    public func run<Encoder: LineEncoding>(encoder: Encoder, stop: RunStop? = nil) async -> RunReport {
        let campaign = pipeline.campaign
        observer?.identify(campaign: campaign.name, shard: campaign.shard, arms: campaign.experiment?.armNames)
        let started = ContinuousClock.now
        let startedAt = Date()
        let sending: (configurations: [ProviderSendConfiguration], validateOnly: Bool)?
        switch mode {
        case .dryRun: sending = nil
        case .send(let configurations, let validateOnly): sending = (configurations, validateOnly)
        }
        var startMetadata: Logger.Metadata = [
            "campaign": "\(campaign.name)", "audience": "\(audiencePath)", "output": "\(outputFolder)",
            "workers": "\(workers)", "mode": "\(sending == nil ? "dry-run" : "send")",
        ]
        if let sending {
            startMetadata["providers"] = "\(sending.configurations.map(\.provider.rawValue).joined(separator: ","))"
            if sending.validateOnly { startMetadata["validate_only"] = "true" }
        }
        logger.info("run started", metadata: startMetadata)
        func emptyReport() -> RunReport {
            var report = RunReport(status: .failed, counts: RunCounts(), source: SourceReport(path: audiencePath), files: [], outputFolder: outputFolder, seconds: 0)
            if let sending {
                report.mode = "send"
                report.validateOnly = sending.validateOnly
            }
            return report
        }

        let lock: OutputFolderLock
        switch claimOutputFolder(startedAt: startedAt, sending: sending != nil) {
        case .claimed(let claimed):
            lock = claimed
        case .refused(let failure, let exit):
            var report = emptyReport()
            report.failure = failure
            report.failureExit = exit
            log(report)
            return report
        case .finished(let repeated):
            var report = emptyReport()
            report.status = repeated.status
            report.counts = repeated.journal.counts
            report.settledThroughLine = repeated.journal.settledThroughLine
            report.reconciled = repeated.journal.counts.reconciles
            report.repeatOfFinishedRun = true
            logger.notice("the run in \(outputFolder) already finished this campaign (\(repeated.countsLine)); nothing was read, sent or written: its summary.json is the record", metadata: [
                "runs": "\(repeated.journal.runs)", "first_started_at": "\(repeated.journal.firstStartedAt)", "exit": "\(report.exit.rawValue)",
            ])
            return report
        }
        // Held until the summary is written, then released here, not whenever the last
        // reference to `lock` happens to go.
        defer { lock.release() }

        let checkpoint: CheckpointPlan?
        switch checkpointPlan(sending: sending?.configurations, startedAt: startedAt) {
        case .success(let plan): checkpoint = plan
        case .failure(let refusal):
            var report = emptyReport()
            report.failure = refusal.description
            report.failureExit = .cannotResume
            log(report)
            return report
        }
        if let checkpoint, checkpoint.resumed {
            let journal = checkpoint.journal
            logger.notice("resuming after line \(journal.settledThroughLine): \(journal.counts.settledTotal) devices settled by \(journal.runs - 1) earlier run\(journal.runs == 2 ? "" : "s")", metadata: [
                "horizon_line": "\(journal.horizonLine)", "checkpoint_written_at": "\(journal.writtenAt)",
                "recorded_after_watermark": "\(checkpoint.records?.settled.count ?? 0)",
            ])
        }

        // Sending: every lane is built before anything is read, so a provider that cannot start
        // fails the run with nothing read or sent.
        var lanes: [any DeliveryLane] = []
        if let sending {
            switch await buildLanes(sending.configurations, checkpoint: checkpoint, startedAt: startedAt) {
            case .success(let built): lanes = built
            case .failure(let failure):
                var report = emptyReport()
                report.failure = failure.message
                report.failureExit = .providerStopped
                writeSummary(&report, campaign: campaign, startedAt: startedAt)
                log(report)
                return report
            }
        }
        observer?.attach(lanes: lanes)
        // `workers` is a public var: clamp again here, where it sizes tasks, the window and the pool.
        let workers = min(max(workers, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        // Sending: the reader, the writer and the encode workers run below the transfer threads
        // (`ThreadPriority`), the workers on threads of their own so that no pool thread is
        // lowered; a dry run has no thread to give way to, and encodes on the pool.
        let lowering = sending != nil ? backgroundPriority.lowering : nil
        let readThread = DedicatedThreadExecutor(name: "pushline-read", lowering: lowering)
        let writeThread = DedicatedThreadExecutor(name: "pushline-write", lowering: lowering)
        // At most one a core, as the pool has: more workers share them (`--workers 256` is not
        // 256 threads).
        let encodeThreads = lowering.map { lowering in
            (0..<min(workers, Self.cores)).map { _ in
                DedicatedThreadExecutor(name: "pushline-encode", lowering: lowering)
            }
        } ?? []
        defer {
            readThread.shutdown()
            writeThread.shutdown()
            for thread in encodeThreads { thread.shutdown() }
        }
        // Batches in flight, bounded by construction: one per worker, one in each channel
        // hand-off, a few held by the sink for reordering (dry run) or waiting for their
        // requests' outcomes (send); the reader waits beyond that.
        let resumeAfterLine = checkpoint.flatMap { $0.resumed ? $0.journal.settledThroughLine : nil } ?? 0
        let settlement = BatchSettlement(window: Self.batchWindow(workers: workers), afterLine: resumeAfterLine)
        // A stop closes the window: the reader, if it waits for admission, ends at once.
        stop?.observe { _ in settlement.close() }
        let stages: StageResult
        if let sending {
            let sink = DeliverySink(
                executor: writeThread, routes: campaign.routeTable, lanes: lanes,
                skip: Self.skipReasons(validateOnly: sending.validateOnly), folder: outputFolder, stop: stop,
                writesDeferred: campaign.quietHours != nil, writesHoldout: campaign.experiment?.holdsOut ?? false,
                checkpoint: checkpoint, logger: logger, observer: observer
            )
            stages = await runStages(encoder: encoder, sink: sink, readThread: readThread, workers: workers, settlement: settlement, stop: stop, resumeAfterLine: resumeAfterLine, encodeThreads: encodeThreads)
        } else {
            // The delivery sink logs the stop with what its lanes hold; a dry run has nothing in flight.
            let logger = self.logger
            stop?.observe { [weak stop] phase in
                logger.notice(phase == .immediate ? "stopping now: a dry run has nothing in flight; writing what was read" : "stopping: reading no more; the lines read are written", metadata: [
                    "cause": "\((phase == .immediate ? stop?.immediateCause : stop?.cause) ?? "a stop request")",
                ])
            }
            let sink = DryRunSink(
                executor: writeThread, routes: campaign.routeTable, folder: outputFolder, gzip: campaign.gzipOutput,
                writesDeferred: campaign.quietHours != nil, writesHoldout: campaign.experiment?.holdsOut ?? false,
                checkpoint: checkpoint, sealing: dryRunSealing(), logger: logger, observer: observer
            )
            stages = await runStages(encoder: encoder, sink: sink, readThread: readThread, workers: workers, settlement: settlement, stop: stop, resumeAfterLine: resumeAfterLine, encodeThreads: encodeThreads)
        }
        // Stopped when the stop came before the stages ended (a signal while the summary is
        // written changes nothing).
        let stopReport: StopReport? = stop.flatMap { stop in
            guard stop.isStopping else { return nil }
            return StopReport(
                cause: stop.cause ?? "a stop request", immediateCause: stop.immediateCause,
                inputReadToEnd: !stages.source.stoppedEarly,
                drainTimeoutSeconds: Int(drainTimeout.components.seconds)
            )
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let resumed = checkpoint.flatMap { plan in
            plan.resumed ? (runs: plan.journal.runs, afterLine: plan.journal.settledThroughLine, horizonLine: plan.journal.horizonLine) : nil
        }
        var report = RunReport.reconciling(
            StageReports(
                source: stages.source, sink: stages.sink, settledThroughLine: settlement.lowWaterMark,
                peakBatchesInFlight: settlement.peakInFlight, stop: stopReport, validateOnly: sending?.validateOnly,
                resumed: resumed, checkpointed: checkpoint != nil
            ),
            outputFolder: outputFolder, seconds: seconds
        )
        report.experimentArms = campaign.experiment?.armNames

        writeSummary(&report, campaign: campaign, startedAt: startedAt)
        if checkpoint != nil { finishCheckpoint(report) }
        log(report)
        return report
    }

    /// Why a provider's lane could not be built (the run fails with it, nothing read).
    struct LaneStartFailure: Error {
        var message: String
    }

    /// One lane per configured provider (the first configuration of a provider wins), each
    /// recording its wire sends when the run keeps a checkpoint. A lane that cannot be built
    /// cancels those built before it and fails the run.
    private func buildLanes(
        _ configurations: [ProviderSendConfiguration], checkpoint: CheckpointPlan?, startedAt: Date
    ) async -> Result<[any DeliveryLane], LaneStartFailure> {
        let campaign = pipeline.campaign
        var lanes: [any DeliveryLane] = []
        // Webhook ids repeat across a message's retries and a resumed run's resend only.
        let firstStart = checkpoint?.journal.firstStartedAt ?? ISO8601DateFormatter().string(from: startedAt)
        for var configuration in configurations where !lanes.contains(where: { $0.provider == configuration.provider }) {
            configuration.settings.webhookIDNamespace = "\(campaign.name)\n\(firstStart)"
            do {
                lanes.append(try laneFactory(configuration, campaign.routeTable))
            } catch {
                for lane in lanes { await lane.cancel() }
                return .failure(LaneStartFailure(message: "cannot start the \(configuration.provider.rawValue) sender: \(error)"))
            }
        }
        // A checkpointed sending run writes, per provider, which devices go on the wire: after a
        // kill, the resume marks only those (docs/resume.md, "Possible duplicates").
        if checkpoint != nil {
            for lane in lanes {
                guard let wireLog = WireLogFile(folder: outputFolder, provider: lane.provider) else {
                    logger.warning("cannot open \(WireLogFile.name(lane.provider)) in \(outputFolder): after a kill, a resume marks every device that may have left by the journal's horizon")
                    continue
                }
                if !lane.recordWireSends(to: wireLog) { wireLog.remove() }
            }
        }
        return .success(lanes)
    }

    private func writeSummary(_ report: inout RunReport, campaign: Campaign, startedAt: Date) {
        do {
            try RunSummary.write(report, campaign: campaign, pipelinePath: pipeline.path, startedAt: startedAt, to: outputFolder + "/summary.json")
        } catch {
            report.failure = "cannot write summary.json: \(error)"
            report.failureExit = .outputError
            report.status = .failed
        }
    }

    private struct StageResult {
        var source: SourceReport
        var sink: Result<SinkReport, SinkError>
    }

    /// Read → encode (N workers) → `sink`, joined by bounded channels; returns when all three ended.
    private func runStages<Encoder: LineEncoding, Sink: RequestSink>(
        encoder: Encoder, sink: Sink, readThread: DedicatedThreadExecutor, workers: Int, settlement: BatchSettlement, stop: RunStop?,
        resumeAfterLine: Int, encodeThreads: [DedicatedThreadExecutor]
    ) async -> StageResult {
        // Reader → buffer → workers → buffer → sink: the buffers keep either side of a hand-off
        // from waiting on the other (`StageBuffer`).
        let read = AsyncChannel<NumberedBatch>()
        let lines = AsyncChannel<NumberedBatch>()
        let encodedByWorkers = AsyncChannel<EncodedBatch>()
        let encoded = AsyncChannel<EncodedBatch>()
        let source = AudienceSource(executor: readThread)
        let pool = BatchPool(limit: Self.batchWindow(workers: workers))
        async let sourceReport = source.run(path: audiencePath, options: readerOptions, settlement: settlement, stop: stop, observer: observer, into: read)
        async let linesForwarded: Void = StageBuffer.forward(read, to: lines, holding: StageBuffer.readAhead)
        let dedupe = pipeline.campaign.dedupeTokens ? TokenDedupe(routes: pipeline.campaign.routeTable) : nil
        async let encodeDone: Void = EncodeStage.run(
            encoder: encoder, workers: workers, pool: pool, sink: sink, dedupe: dedupe, resumeAfterLine: resumeAfterLine, workerExecutors: encodeThreads, input: lines,
            output: encodedByWorkers
        )
        async let encodedForwarded: Void = StageBuffer.forward(encodedByWorkers, to: encoded, holding: StageBuffer.writeBehind)
        let sinkResult: Result<SinkReport, SinkError>
        do throws(SinkError) {
            sinkResult = .success(try await sink.run(input: encoded, settlement: settlement, recycle: pool))
        } catch {
            sinkResult = .failure(error)
            // Nothing more can be written: the reader stops at its next batch (the window is
            // closed), and what is still in the channels is drained so the other stages finish.
            settlement.close()
            for await _ in encoded {}
        }
        let sourceOutcome = await sourceReport
        await linesForwarded
        await encodeDone
        await encodedForwarded
        if let dedupe { DedupeLog.report(dedupe, logger: logger) }
        return StageResult(source: sourceOutcome, sink: sinkResult)
    }

    private func log(_ report: RunReport) {
        var metadata: Logger.Metadata = [
            "status": "\(report.status.rawValue)", "lines": "\(report.counts.lines)",
            "devices": "\(report.counts.devices)", "written": "\(report.counts.writtenTotal)",
            "rejected": "\(report.counts.rejectedTotal + report.counts.linesRejected)",
            "skipped": "\(report.counts.skippedTotal)", "seconds": "\(String(format: "%.2f", report.seconds))",
        ]
        if report.mode == "send" {
            metadata["sent"] = "\(report.counts.sentTotal)"
            metadata["invalid_token"] = "\(report.counts.invalidTokenTotal)"
            metadata["failed"] = "\(report.counts.failedTotal)"
            if report.stop != nil { metadata["unsent"] = "\(report.counts.unsentTotal)" }
        }
        if let stop = report.stop {
            metadata["stopped_by"] = "\(stop.cause)"
            if let cancel = stop.immediateCause { metadata["in_flight_cancelled_by"] = "\(cancel)" }
        }
        if let error = report.source.error { metadata["input_error"] = "\(error.description)" }
        if let failure = report.failure { metadata["failure"] = "\(failure)" }
        if report.status == .failed || report.status == .inputError {
            logger.error("run ended", metadata: metadata)
        } else {
            logger.info("run ended", metadata: metadata)
        }
    }
}

/// A short account of which provider's numbers disagree.
enum ProviderReconciliation {
    static func describe(_ counts: RunCounts) -> String {
        var parts: [String] = []
        for (provider, c) in counts.byProvider.sorted(by: { $0.key < $1.key }) where !c.reconciles {
            parts.append("\(provider.rawValue): \(c.devices) devices, \(c.settled) with an outcome")
        }
        if !counts.unrouted.reconciles { parts.append("unrouted: \(counts.unrouted.devices) devices, \(counts.unrouted.settled) with an outcome") }
        return parts.isEmpty ? "the providers' numbers do not add up to the totals" : parts.joined(separator: "; ")
    }
}

/// Devices per second as an integer, for logs and the summary: 0 when no time passed, and clamped
/// rather than trapping when a tiny duration makes the quotient huge.
func devicesPerSecond(_ devices: Int, seconds: Double) -> Int {
    guard seconds > 0 else { return 0 }
    let rate = Double(devices) / seconds
    guard rate.isFinite else { return 0 }
    return rate >= Double(Int.max) ? Int.max : Int(rate)
}

extension CampaignRun {
    /// `--dry-run-encrypt`: the sealing a dry run applies, with the pipeline's VAPID key when
    /// `providers.webpush` names one (else the lines show no `authorization`).
    func dryRunSealing() -> WebPushSealing? {
        guard dryRunEncryptsWebPush else { return nil }
        var key: VAPIDKey?
        for configuration in pipeline.delivery.configured {
            if case .webpush(let vapid) = configuration.credentials { key = vapid }
        }
        if key == nil, pipeline.campaign.routeTable.reaches(.webpush) {
            logger.notice("--dry-run-encrypt: providers.webpush names no vapid_private_key, so the Web Push lines show no authorization header")
        }
        return WebPushSealing(routes: pipeline.campaign.routeTable, dryRunWith: key)
    }
}
