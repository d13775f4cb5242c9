public import PushlineCore
import PushlineEncoding
public import PushlineIO
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
    /// Every input line up to here is settled (the settled-line low-water mark; a resume
    /// checkpoint is written from it).
    public var settledThroughLine = 0
    /// The most batches in flight at once (bounded by the batch window).
    public var peakBatchesInFlight = 0
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

    public init(pipeline: LoadedPipeline, audiencePath: String, outputFolder: String, workers: Int? = nil, logger: Logger) {
        self.pipeline = pipeline
        self.audiencePath = audiencePath
        self.outputFolder = outputFolder
        let requested = workers ?? ProcessInfo.processInfo.activeProcessorCount
        self.workers = min(max(requested, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        self.readerOptions = AudienceReader.Options(maxLineBytes: pipeline.campaign.maxLineBytes)
        self.logger = logger
    }

    /// Batches admitted and not settled at most: one per worker, one in each channel hand-off,
    /// a few held by the sink for reordering.
    public static func batchWindow(workers: Int) -> Int { 2 * workers + 4 }

    public func run() async -> RunReport {
        await run(encoder: CampaignEncoder(campaign: pipeline.campaign))
    }

    /// Runs with `encoder` in place of the campaign's own (the seam tests use to inject failures).
    public func run<Encoder: LineEncoding>(encoder: Encoder) async -> RunReport {
        let campaign = pipeline.campaign
        let started = ContinuousClock.now
        let startedAt = Date()
        logger.info("run started", metadata: [
            "campaign": "\(campaign.name)", "audience": "\(audiencePath)", "output": "\(outputFolder)",
            "workers": "\(workers)", "mode": "dry-run",
        ])

        // The folder belongs to this run until the summary is written: a second run is refused
        // before it reads anything, and the previous run's results go before any of ours appear.
        let lock: OutputFolderLock
        do {
            lock = try OutputFolderLock.acquire(outputFolder, startedAt: ISO8601DateFormatter().string(from: startedAt))
            let removed = try lock.removeStaleResults()
            if !removed.isEmpty {
                logger.info("removed the previous run's results", metadata: ["files": "\(removed.joined(separator: ", "))"])
            }
        } catch {
            var report = RunReport(status: .failed, counts: RunCounts(), source: SourceReport(path: audiencePath), files: [], outputFolder: outputFolder, seconds: 0)
            report.failure = error.description
            log(report)
            return report
        }
        // The flock lives as long as `lock`: this use at the very end keeps it until the summary
        // is written.
        defer { _ = lock.folder }

        let readThread = DedicatedThreadExecutor(name: "pushline-read")
        let writeThread = DedicatedThreadExecutor(name: "pushline-write")
        defer {
            readThread.shutdown()
            writeThread.shutdown()
        }
        let lines = AsyncChannel<NumberedBatch>()
        let encoded = AsyncChannel<EncodedBatch>()
        let source = AudienceSource(executor: readThread)
        let sink = DryRunSink(executor: writeThread, routes: campaign.routeTable, folder: outputFolder, gzip: campaign.gzipOutput, logger: logger)
        // `workers` is a public var: clamp again here, where it sizes tasks, the window and the pool.
        let workers = min(max(workers, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        // Batches in flight, bounded by construction: one per worker, one in each channel
        // hand-off, a few held by the sink for reordering; the reader waits beyond that.
        let settlement = BatchSettlement(window: Self.batchWindow(workers: workers))
        let pool = BatchPool(limit: Self.batchWindow(workers: workers))

        async let sourceReport = source.run(path: audiencePath, options: readerOptions, settlement: settlement, into: lines)
        async let encodeDone: Void = EncodeStage.run(encoder: encoder, workers: workers, pool: pool, sink: sink, input: lines, output: encoded)
        let sinkResult: Result<SinkReport, SinkError>
        do throws(SinkError) {
            sinkResult = .success(try await sink.run(input: encoded, settlement: settlement, recycle: pool))
        } catch {
            sinkResult = .failure(error)
            // Keep draining so the other stages can finish; nothing more is written, and the
            // window no longer bounds the reader (nothing settles now).
            settlement.open()
            for await _ in encoded {}
        }
        let sourceOutcome = await sourceReport
        await encodeDone
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

        var report = RunReport(status: .completed, counts: RunCounts(), source: sourceOutcome, files: [], outputFolder: outputFolder, seconds: seconds)
        switch sinkResult {
        case .success(let sinkReport):
            report.counts = sinkReport.counts
            report.files = sinkReport.files
        case .failure(let error):
            report.failure = "writing results failed: \(error.description)"
        }
        report.settledThroughLine = settlement.lowWaterMark
        report.peakBatchesInFlight = settlement.peakInFlight
        if report.failure == nil && !report.counts.reconciles {
            let c = report.counts
            // Sending outcomes are named when there are any (a dry run has none).
            var sending = ""
            if c.sentTotal > 0 { sending += " + \(c.sentTotal) sent" }
            if c.invalidTokenTotal > 0 { sending += " + \(c.invalidTokenTotal) invalid token" }
            if c.failedTotal > 0 { sending += " + \(c.failedTotal) failed" }
            report.failure = "counts do not reconcile: \(c.devices) devices read, \(c.writtenTotal) written\(sending) + \(c.rejectedTotal) rejected + \(c.skippedTotal) skipped"
        }
        if report.failure == nil && !report.counts.reconcilesByProvider {
            report.failure = "counts do not reconcile per provider: \(ProviderReconciliation.describe(report.counts))"
        }
        if report.failure == nil, sourceOutcome.error == nil {
            // Every line the reader completed must have reached the sink, as a recipient or as blank.
            let expected = sourceOutcome.physicalLines
            if report.counts.lines + report.counts.blankLines != expected {
                report.failure = "counts do not reconcile: \(expected) lines read, \(report.counts.lines) processed + \(report.counts.blankLines) blank"
            }
        }
        if report.failure != nil {
            report.status = .failed
        } else if sourceOutcome.error != nil {
            report.status = .inputError
        } else if report.counts.rejectedTotal + report.counts.linesRejected > 0 {
            report.status = .completedWithRejects
        }

        do {
            try RunSummary.write(report, campaign: campaign, pipelinePath: pipeline.path, startedAt: startedAt, to: outputFolder + "/summary.json")
        } catch {
            report.failure = "cannot write summary.json: \(error)"
            report.status = .failed
        }
        log(report)
        return report
    }

    private func log(_ report: RunReport) {
        var metadata: Logger.Metadata = [
            "status": "\(report.status.rawValue)", "lines": "\(report.counts.lines)",
            "devices": "\(report.counts.devices)", "written": "\(report.counts.writtenTotal)",
            "rejected": "\(report.counts.rejectedTotal + report.counts.linesRejected)",
            "skipped": "\(report.counts.skippedTotal)", "seconds": "\(String(format: "%.2f", report.seconds))",
        ]
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
