public import PushlineEncoding
import PushlineCore
public import AsyncAlgorithms

/// Stage 2: parse, route and encode, as `workers` parallel tasks over whole batches.
///
/// This is the CPU-heavy stage, so it runs on the cooperative pool, one worker per core. A worker
/// takes a batch of lines, and sends on one `EncodedBatch`: one actor hop per few thousand lines.
public enum EncodeStage {
    public static func run(
        encoder: CampaignEncoder, workers: Int, pool: BatchPool,
        input: AsyncChannel<NumberedBatch>, output: AsyncChannel<EncodedBatch>
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, workers) {
                group.addTask {
                    var context = encoder.makeContext()
                    for await numbered in input {
                        let batch = numbered.lines
                        var encoded = pool.take(sequence: numbered.sequence)
                        encoded.firstLine = batch.lineNumbers.lowerBound
                        encoded.lastLine = batch.lineNumbers.upperBound - 1
                        encoded.counts.blankLines = batch.lineNumbers.count - batch.lines.count - batch.oversizeLines.count
                        // Request bytes per batch are roughly the line bytes: reserve once.
                        let estimate = batch.buffer.count + batch.buffer.count / 2
                        for provider in Provider.allCases where encoder.campaign.encodes(provider) {
                            encoded.requests[provider.ordinal].reserveCapacity(estimate)
                        }
                        for oversize in batch.oversizeLines {
                            encoder.rejectOversizeLine(oversize.lineNumber, length: oversize.byteLength, into: &encoded)
                        }
                        for line in batch.lines {
                            encoder.encodeLine(buffer: batch.buffer, line: AudienceLine(number: line.lineNumber, range: line.range), into: &encoded, context: &context)
                        }
                        await output.send(encoded)
                    }
                }
            }
        }
        output.finish()
    }
}
