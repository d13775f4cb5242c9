public import PushlineEncoding
import PushlineCore
import PushlineIO
public import AsyncAlgorithms

/// Stage 2: parse, route and encode, as `workers` parallel tasks over whole batches.
///
/// This is the CPU-heavy stage, so it runs on the cooperative pool, one worker per core, or, in a
/// sending run, on threads of its own that give way to the transfer threads (`workerExecutors`).
/// A worker takes a batch of lines, and sends on one `EncodedBatch`: one actor hop per few
/// thousand lines.
///
/// Every batch taken is sent on, whatever the encoder does: a line whose encoding throws is
/// accounted as `internal_error` rejects (see `LineFailure`) and the batch goes on, so the sink
/// always gets every sequence number and the run reconciles.
public enum EncodeStage {
    /// `sink.prepare` runs on the worker once a batch is encoded (the dry run renders its lines there).
    /// `dedupe`: when set, each encoded batch is checked against the tokens of earlier batches in
    /// input order (`TokenDedupe`) before `prepare`.
    /// `workerExecutors`: when not empty, worker `i` runs on `workerExecutors[i % count]`
    /// (the executors' threads, lowered below the transfer threads, and never the pool's).
    public static func run<Encoder: LineEncoding, Sink: RequestSink>(
        encoder: Encoder, workers: Int, pool: BatchPool, maxJSONDepth: Int = 64, sink: Sink,
        dedupe: TokenDedupe? = nil, resumeAfterLine: Int = 0, workerExecutors: [DedicatedThreadExecutor] = [],
        input: AsyncChannel<NumberedBatch>, output: AsyncChannel<EncodedBatch>
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<max(1, workers) {
                // Each worker its own compiled copy: see `CampaignEncoder.forAnotherWorker`.
                let encoder = worker == 0 ? encoder : encoder.forAnotherWorker()
                let executor: (any TaskExecutor)? = workerExecutors.isEmpty ? nil : workerExecutors[worker % workerExecutors.count]
                group.addTask(executorPreference: executor) {
                    var context = encoder.makeContext()
                    var digests: [UInt64] = []
                    var settledDigests: [UInt64] = []
                    for await numbered in input {
                        var encoded = pool.take(sequence: numbered.sequence)
                        // A resume: lines through `resumeAfterLine` were settled by the run it
                        // continues. They are skipped, but with dedupe their tokens still come
                        // first in input order: encoded aside, only for their digests.
                        let (settled, open) = numbered.lines.split(after: resumeAfterLine)
                        if let settled, let dedupe {
                            var aside = EncodedBatch(sequence: numbered.sequence)
                            encodeGuarded(settled, with: encoder, context: &context, maxJSONDepth: maxJSONDepth, sink: sink, into: &aside)
                            dedupe.digests(of: aside, into: &settledDigests)
                        } else {
                            settledDigests.removeAll(keepingCapacity: true)
                        }
                        if let open {
                            do {
                                try encode(open, with: encoder, context: &context, sink: sink, into: &encoded)
                            } catch {
                                // Slow path, only after a failure: start the batch again, guarding
                                // each line so the failing ones are accounted and the rest written.
                                encoded.removeAll(sequence: numbered.sequence)
                                encodeGuarded(open, with: encoder, context: &context, maxJSONDepth: maxJSONDepth, sink: sink, into: &encoded)
                            }
                        } else {
                            // Every line of it was settled before: an empty batch keeps the
                            // sequence (the sink settles it at once).
                            encoded.firstLine = numbered.lines.lineNumbers.upperBound
                            encoded.lastLine = numbered.lines.lineNumbers.upperBound - 1
                        }
                        if let dedupe {
                            dedupe.digests(of: encoded, into: &digests)
                            await dedupe.check(&encoded, digests: digests, after: settledDigests)
                        }
                        sink.prepare(&encoded)
                        await output.send(encoded)
                    }
                }
            }
        }
        output.finish()
    }

    /// Prepares `encoded` for `batch`: line range, blank lines, oversize rejects, capacity.
    private static func begin<Encoder: LineEncoding>(_ batch: LineBatch, with encoder: Encoder, into encoded: inout EncodedBatch) {
        encoded.firstLine = batch.lineNumbers.lowerBound
        encoded.lastLine = batch.lineNumbers.upperBound - 1
        var counts = RunCounts()
        counts.blankLines = batch.lineNumbers.count - batch.lines.count - batch.oversizeLines.count
        if counts.blankLines != 0 { encoded.encodeCounts = counts }
        // Request bytes per batch are roughly the line bytes: reserve once.
        encoded.index.reserve(requests: batch.lines.count * 2, bytes: batch.buffer.count + batch.buffer.count / 2)
        for oversize in batch.oversizeLines {
            encoder.rejectOversizeLine(oversize.lineNumber, length: oversize.byteLength, into: &encoded)
        }
    }

    /// The fast path: every line straight into the batch.
    private static func encode<Encoder: LineEncoding, Sink: RequestSink>(
        _ batch: LineBatch, with encoder: Encoder, context: inout Encoder.Context, sink: Sink, into encoded: inout EncodedBatch
    ) throws {
        begin(batch, with: encoder, into: &encoded)
        for line in batch.lines {
            try encoder.encodeLine(buffer: batch.buffer, line: AudienceLine(number: line.lineNumber, range: line.range), into: &encoded, context: &context)
        }
    }

    /// Each line guarded: a failing line's partial output and counts are rolled back, and its
    /// devices become `internal_error` rejects.
    private static func encodeGuarded<Encoder: LineEncoding, Sink: RequestSink>(
        _ batch: LineBatch, with encoder: Encoder, context: inout Encoder.Context, maxJSONDepth: Int, sink: Sink, into encoded: inout EncodedBatch
    ) {
        begin(batch, with: encoder, into: &encoded)
        for line in batch.lines {
            let audienceLine = AudienceLine(number: line.lineNumber, range: line.range)
            let mark = encoded.mark
            do {
                try encoder.encodeLine(buffer: batch.buffer, line: audienceLine, into: &encoded, context: &context)
            } catch {
                encoded.rollBack(to: mark)
                LineFailure.account(audienceLine, buffer: batch.buffer, error: error, maxJSONDepth: maxJSONDepth, experiment: encoder.campaign.experiment, into: &encoded)
            }
        }
    }
}
