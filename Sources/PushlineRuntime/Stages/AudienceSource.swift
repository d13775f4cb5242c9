public import PushlineIO
public import AsyncAlgorithms

/// A batch of audience lines with its position in the input.
public struct NumberedBatch: Sendable {
    public var sequence: Int
    public var lines: LineBatch
}

/// What the source stage saw of the input.
public struct SourceReport: Sendable {
    public var path: String
    public var isGzip = false
    public var compressedBytes = 0
    public var uncompressedBytes = 0
    /// Physical lines, blank ones included.
    public var physicalLines = 0
    public var batches = 0
    /// Set when the audience could not be read to its end.
    public var error: AudienceReadError?
    /// The run was stopped before the input's end: `physicalLines` are the lines read.
    public var stoppedEarly = false
}

/// Stage 1: reads and inflates the audience on its own thread and sends line batches on.
///
/// `AudienceReader` blocks in `read(2)` and zlib, so this actor runs on a dedicated thread, not on
/// the cooperative pool; the channel's back-pressure (a send waits for a worker) keeps at most a
/// few batches in memory whatever the audience size.
public actor AudienceSource {
    private enum State {
        case idle
        case reading
        case finished(SourceReport)
    }

    private let executor: DedicatedThreadExecutor
    private var state = State.idle
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Bytes split (after decompression) between two looks at a stop request while no batch
    /// fills: a few milliseconds of work. Real batches fill at `maxBatchBytes` long before.
    static let stepBytes = 16 << 20

    public init(executor: DedicatedThreadExecutor) {
        self.executor = executor
    }

    /// Reads `path` to its end (or first error) into `output`, then finishes the channel. With
    /// `settlement`, each batch is read only once the batch window admits it, so batches in
    /// flight stay bounded however slowly one of them settles. Once `stop` is stopping (or the
    /// settlement closed), it reads no further batch: the lines read so far are all sent on, and
    /// the report counts exactly those. `observer` gets the input offset after every batch.
    public func run(
        path: String, options: AudienceReader.Options, settlement: BatchSettlement? = nil, stop: RunStop? = nil,
        observer: RunObserver? = nil, into output: AsyncChannel<NumberedBatch>
    ) async -> SourceReport {
        precondition({ if case .idle = state { true } else { false } }(), "an AudienceSource runs once")
        state = .reading
        var report = SourceReport(path: path)
        defer { output.finish() }
        var reader: AudienceReader
        do {
            reader = try AudienceReader(path: path, options: options)
        } catch {
            report.error = error
            state = .finished(report)
            return report
        }
        while true {
            if let settlement, !(await settlement.waitForAdmission()) {
                report.stoppedEarly = true
                break
            }
            if stop?.isStopping == true {
                report.stoppedEarly = true
                break
            }
            do {
                // A line that never ends (or blank lines, or a stalled pipe): the offset is reported
                // and a stop request heard every step, not only once a batch fills.
                var step = AudienceReader.Step.inProgress
                while case .inProgress = step, stop?.isStopping != true {
                    step = try reader.nextStep(splittingAtMost: Self.stepBytes)
                    observer?.readerAt(reader.bytesRead)
                }
                guard case .batch(let batch) = step else {
                    if case .inProgress = step { report.stoppedEarly = true }
                    break
                }
                await output.send(NumberedBatch(sequence: report.batches, lines: batch))
                report.batches += 1
            } catch {
                report.error = error
                break
            }
        }
        report.isGzip = reader.isGzip
        report.compressedBytes = reader.bytesRead
        report.uncompressedBytes = reader.uncompressedBytes
        report.physicalLines = reader.lineCount
        state = .finished(report)
        return report
    }
}
