public import PushlineCore
public import PushlineEncoding
import PushlineIO
public import AsyncAlgorithms
import Foundation
public import Logging

/// What the sink wrote or sent.
public struct SinkReport: Sendable {
    /// Encode counts of every batch with every request's outcome recorded.
    public var counts = RunCounts()
    /// Files written, by name, with their sizes in bytes.
    public var files: [(name: String, bytes: Int)] = []
    /// Sending runs: per provider with a lane or an outcome, in `Provider` order.
    public var delivery: [ProviderDeliveryReport] = []
    /// Sending runs: events whose tag matched no outstanding request (a lane settled one twice).
    public var unknownTags = 0
    /// Sending runs: requests a lane never settled before its events ended.
    public var lostRequests = 0
    /// Sending runs: providers whose lane ended its events before it was finished or cancelled.
    public var lanesEndedEarly: [Provider] = []
    /// Resumed sending runs: devices settled from the previous runs' result lines.
    public var settledFromRecords = 0
}

/// Why the sink could not write its files.
public struct SinkError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Stage 3 (dry run): appends each batch's request lines to `requests-<provider>.ndjson[.gz]`
/// and its rejects to `rejects.ndjson`, in input order. The first `RequestSink`: the lines are
/// rendered from the request index on the encode workers (`prepare`), every request's outcome is
/// `written`, and a batch settles when its bytes are written.
///
/// Workers finish batches out of order; the sink holds the few that arrive early and writes in
/// sequence, so a dry run's files are the same on every run (diffable between campaigns). Files
/// are written under a temporary name and renamed on close, so a crashed run never leaves a
/// complete-looking file. Runs on its own thread: `write(2)` and deflate block.
public actor DryRunSink: RequestSink {
    private enum State {
        case idle
        case writing
        case closed
    }

    /// One open output file (a class, so the noncopyable file can live in a dictionary).
    private final class OpenFile {
        let name: String
        var file: OutputFile?
        init(name: String, file: consuming OutputFile) {
            self.name = name
            self.file = consume file
        }
    }

    private let executor: DedicatedThreadExecutor
    private let renderer: DryRunRenderer
    /// `--dry-run-encrypt`: Web Push bodies as a sending run sends them.
    private let sealing: WebPushSealing?
    private let providers: [Provider]
    private let folder: String
    private let gzip: Bool
    private let logger: Logger
    /// Quiet hours are on: deferred lines go to `deferred.ndjson`.
    private let writesDeferred: Bool
    /// An experiment with a holdout: control recipients' lines go to `holdout.ndjson`.
    private let writesHoldout: Bool
    /// Gets the counts at most every `RunObserver.publishInterval` (progress, metrics).
    private let observer: RunObserver?
    /// Checkpoints (and, resuming, where to continue): nil for an audience from standard input.
    private let checkpointPlan: CheckpointPlan?
    private var state = State.idle
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// `routes`: the campaign's route table; one `requests-<provider>` file per provider it reaches.
    public init(executor: DedicatedThreadExecutor, routes: RouteTable, folder: String, gzip: Bool, writesDeferred: Bool = false, logger: Logger, observer: RunObserver? = nil) {
        self.init(executor: executor, routes: routes, folder: folder, gzip: gzip, writesDeferred: writesDeferred, checkpoint: nil, logger: logger, observer: observer)
    }

    init(
        executor: DedicatedThreadExecutor, routes: RouteTable, folder: String, gzip: Bool, writesDeferred: Bool = false, writesHoldout: Bool = false,
        checkpoint: CheckpointPlan?, sealing: WebPushSealing? = nil, logger: Logger, observer: RunObserver? = nil
    ) {
        self.writesHoldout = writesHoldout
        self.sealing = sealing
        self.checkpointPlan = checkpoint
        self.writesDeferred = writesDeferred
        self.executor = executor
        self.renderer = DryRunRenderer(routes: routes)
        self.providers = routes.providers
        self.folder = folder
        self.gzip = gzip
        self.logger = logger
        self.observer = observer
    }

    /// Renders the batch's request lines from its index, on the encode worker (docs/benchmarks.md);
    /// with `--dry-run-encrypt`, Web Push bodies are encrypted first.
    public nonisolated func prepare(_ batch: inout EncodedBatch) {
        sealing?.seal(&batch.index)
        renderer.render(&batch)
        guard gzip else { return }
        // Compressed here, on the worker, one member per provider and batch (`GzipMember`).
        // A member zlib could not start is left empty: `OutputFile.writeMember` compresses it
        // again on the writer's thread and, failing again, ends the run with zlib's status.
        for provider in providers {
            let lines = batch.dryRunLines[provider.ordinal]
            guard lines.count > 0 else { continue }
            let compressed = lines.bytes.withUnsafeBytes { bytes in
                Result { () throws(GzipMemberFailure) in
                    try GzipMember.compress(bytes, level: Self.gzipLevel, into: &batch.dryRunMembers[provider.ordinal])
                }
            }
            if case .failure = compressed { batch.dryRunMembers[provider.ordinal].removeAll() }
        }
    }

    /// gzip's own default: about 8× smaller request files at a fraction of level 9's time.
    static let gzipLevel = 6

    public func run(input: AsyncChannel<EncodedBatch>, settlement: BatchSettlement, recycle pool: BatchPool? = nil) async throws(SinkError) -> SinkReport {
        guard case .idle = state else { throw SinkError(message: "a DryRunSink runs once") }
        state = .writing
        defer { state = .closed }
        var report = SinkReport()
        let background = checkpointPlan.map { BackgroundCheckpoint(plan: $0) }
        // A resume continues the counts of the lines before its watermark.
        var settledThrough = 0
        if let plan = checkpointPlan, plan.resumed {
            report.counts = plan.journal.counts
            settledThrough = plan.journal.settledThroughLine
        }
        var requestFiles: [Provider: OpenFile] = [:]
        let rejects: OpenFile
        var deferred: OpenFile?
        var holdout: OpenFile?
        do throws(OutputFileError) {
            if writesDeferred { deferred = OpenFile(name: "deferred.ndjson", file: try open("deferred.ndjson", compressed: false)) }
            if writesHoldout { holdout = OpenFile(name: "holdout.ndjson", file: try open("holdout.ndjson", compressed: false)) }
            for provider in providers {
                let name = "requests-\(provider.rawValue).ndjson" + (gzip ? ".gz" : "")
                requestFiles[provider] = OpenFile(name: name, file: try open(name, compressed: gzip, bulk: true, flushes: background?.flushes))
            }
            rejects = OpenFile(name: "rejects.ndjson", file: try open("rejects.ndjson", compressed: false))
        } catch {
            throw SinkError(message: error.description)
        }

        var pending: [Int: EncodedBatch] = [:]
        var next = 0
        var publish = PublishGate()
        let allFiles = Array(requestFiles.values) + [rejects] + [deferred, holdout].compactMap { $0 }
        /// Every file ends a line (and a gzip member) here; the journal says so once the files
        /// are fsynced: in the background while the run goes on, or now (`final`: the first and
        /// the last checkpoint).
        var lastCheckpoint = ContinuousClock.now
        func checkpoint(now: Bool) throws(OutputFileError) {
            guard let background else { return }
            lastCheckpoint = .now
            var marks: [CheckpointJournal.FileMark] = []
            var handles: [FileSyncHandle] = []
            for file in allFiles {
                let bytes = try file.file!.checkpoint(sync: now)
                if !now, let handle = file.file?.syncHandle() { handles.append(handle) }
                marks.append(.init(name: file.name, temporaryName: Self.baseName(file.file?.temporaryPath ?? ""), bytes: bytes, cutAtMark: true))
            }
            let failure = now
                ? background.writeNow(watermark: settledThrough, counts: report.counts, files: marks)
                : { background.submit(handles: handles, watermark: settledThrough, counts: report.counts, files: marks); return background.failure }()
            if let failure { throw OutputFileError.checkpointFailed(failure) }
        }
        do throws(OutputFileError) {
            try checkpoint(now: true)
            for await batch in input {
                pending[batch.sequence] = batch
                while let ready = pending.removeValue(forKey: next) {
                    for (provider, file) in requestFiles {
                        let bytes = ready.dryRunLines[provider.ordinal].bytes
                        guard !bytes.isEmpty else { continue }
                        if gzip {
                            let written = ready.dryRunMembers[provider.ordinal].withUnsafeBytes { member in
                                bytes.withUnsafeBytes { lines in
                                    Result { () throws(OutputFileError) in try file.file!.writeMember(member, of: lines, level: Self.gzipLevel) }
                                }
                            }
                            try written.get()
                        } else {
                            try file.file!.write(bytes)
                        }
                    }
                    if ready.rejects.count > 0 {
                        try rejects.file!.write(ready.rejects.bytes)
                    }
                    if ready.deferred.count > 0, let deferred {
                        try deferred.file!.write(ready.deferred.bytes)
                    }
                    if ready.holdout.count > 0, let holdout {
                        try holdout.file!.write(ready.holdout.bytes)
                    }
                    // Every request of the batch is written: its outcome, per provider.
                    report.counts.add(ready.counts)
                    settlement.settle(sequence: ready.sequence, lastLine: ready.lastLine)
                    settledThrough = max(settledThrough, ready.lastLine)
                    pool?.give(ready)
                    next += 1
                }
                if let background, ContinuousClock.now - lastCheckpoint >= background.interval { try checkpoint(now: false) }
                if let observer, publish.due() {
                    var live = RunObserver.LiveCounts()
                    live.counts = report.counts
                    observer.publish(live)
                }
            }
            if let observer {
                var live = RunObserver.LiveCounts()
                live.counts = report.counts
                observer.publish(live)
            }
            // The last checkpoint, before the files take their final names: a stopped run
            // resumes from it (a finished one's is marked complete after the summary).
            try checkpoint(now: true)
            for file in allFiles {
                guard let open = file.file.take() else { continue }
                // Bytes on disk (compressed for .gz), as `ls -l` shows them.
                let bytes = try open.close()
                report.files.append((file.name, bytes))
            }
        } catch {
            throw SinkError(message: error.description)
        }
        report.files.sort { $0.name < $1.name }
        return report
    }

    /// `bulk`: the request files, most of the bytes a dry run writes, go around the page cache
    /// (the kernel's copy of every byte into it was a fifth of the demo's CPU on two cores;
    /// `OutputFile` does it for plain files only), except while one of `flushes` runs.
    private func open(_ name: String, compressed: Bool, bulk: Bool = false, flushes: DeviceFlushes? = nil) throws(OutputFileError) -> OutputFile {
        // With a checkpoint the files are what a resume continues: kept when a write fails.
        let options = OutputFile.Options(
            compression: compressed ? .gzipMembers : .none, bypassPageCache: bulk, flushes: flushes, keepsRecord: checkpointPlan != nil
        )
        if let resumed = checkpointPlan?.resumedPath(of: name) {
            return try OutputFile(resuming: resumed.path, path: folder + "/" + name, cut: .at(resumed.mark.bytes), options: options)
        }
        return try OutputFile(path: folder + "/" + name, options: options)
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }
}
