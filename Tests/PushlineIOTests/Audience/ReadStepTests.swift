import Foundation
import PushlineIO
import Testing

/// `AudienceReader.nextStep(splittingAtMost:)`: it comes back after the budget however the input
/// goes on, and what it hands over across the steps is exactly what `nextBatch` gives.
@Suite struct ReadStepTests {
    /// One valid line, a 100,000-byte line (over the 1,000-byte limit), a blank line, 5,000 blank
    /// lines, and a last valid line.
    static let input: [UInt8] = Array(
        ("{\"a\":1}\n" + String(repeating: "x", count: 100_000) + "\n\n" + String(repeating: "  \n", count: 5_000) + "{\"b\":2}\n").utf8
    )

    /// A budget below one byte counts as one: every step reads, so a caller never spins.
    @Test(arguments: [Int.min, 0, 1, 4096, 20_000, Int.max])
    func stepsGiveWhatBatchesGive(budget: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write(Self.input, to: "a.ndjson")
        let options = AudienceReader.Options(maxLineBytes: 1_000, readBufferSize: 4096)

        var reader = try AudienceReader(path: path, options: options)
        var lines: [Int] = [], oversize: [LineBatch.OversizeLine] = [], covered: [Range<Int>] = []
        var inProgress = 0, steps = 0
        stepping: while steps < 1_000_000 {
            let before = reader.uncompressedBytes
            let step = try reader.nextStep(splittingAtMost: budget)
            steps += 1
            // Over the budget by at most one read (the check comes between reads).
            #expect(budget == .max || reader.uncompressedBytes - before <= max(budget, 1) + 4096)
            switch step {
            case .batch(let batch):
                lines += batch.lines.map(\.lineNumber)
                oversize += batch.oversizeLines
                covered.append(batch.lineNumbers)
            case .inProgress:
                inProgress += 1
            case .end:
                break stepping
            }
        }
        #expect(lines == [1, 5004])
        #expect(oversize == [LineBatch.OversizeLine(lineNumber: 2, byteLength: 100_000)])
        // The batches cover every physical line once, in order.
        #expect(covered.first?.lowerBound == 1 && covered.last?.upperBound == 5005)
        #expect(zip(covered, covered.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(reader.lineCount == 5004)
        if budget <= 4096 {
            // The long line alone took many steps that completed no line.
            #expect(inProgress >= 100_000 / 4096 - 3, "\(inProgress) steps in progress")
        } else if budget == .max {
            #expect(inProgress == 0 && steps == 2)
        }
    }
}
