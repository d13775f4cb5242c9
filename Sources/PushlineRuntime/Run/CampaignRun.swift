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
        let sink = DryRunSink(executor: writeThread, folder: outputFolder, gzip: campaign.gzipOutput, logger: logger)
        let providers = Provider.allCases.filter { campaign.encodes($0) }
        // Batches in flight: one per worker, one in each channel hand-off, a few held for reordering.
        // `workers` is a public var: clamp again here, where it sizes tasks and the pool.
        let workers = min(max(workers, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        let pool = BatchPool(limit: workers + 4)

        async let sourceReport = source.run(path: audiencePath, options: readerOptions, into: lines)
        async let encodeDone: Void = EncodeStage.run(encoder: encoder, workers: workers, pool: pool, input: lines, output: encoded)
        let sinkResult: Result<SinkReport, SinkError>
        do {
            sinkResult = .success(try await sink.run(providers: providers, input: encoded, recycle: pool))
        } catch {
            sinkResult = .failure(error)
            // Keep draining so the other stages can finish; nothing more is written.
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
        if report.failure == nil && !report.counts.reconciles {
            report.failure = "counts do not reconcile: \(report.counts.devices) devices read, \(report.counts.writtenTotal) written + \(report.counts.rejectedTotal) rejected + \(report.counts.skippedTotal) skipped"
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

/// Devices per second as an integer, for logs and the summary: 0 when no time passed, and clamped
/// rather than trapping when a tiny duration makes the quotient huge.
func devicesPerSecond(_ devices: Int, seconds: Double) -> Int {
    guard seconds > 0 else { return 0 }
    let rate = Double(devices) / seconds
    guard rate.isFinite else { return 0 }
    return rate >= Double(Int.max) ? Int.max : Int(rate)
}
