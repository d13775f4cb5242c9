@testable import PushlineRuntime
import PushlineCore
import Testing

@Suite("Latency histogram")
struct LatencyHistogramTests {
    @Test func smallValuesAreExact() {
        var histogram = LatencyHistogram()
        for value: UInt64 in [3, 1, 2, 31] { histogram.record(microseconds: value) }
        // Sorted 1, 2, 3, 31: p50 is the 2nd value, p75 the 3rd, p100 the 4th.
        #expect(histogram.percentileMicroseconds(0.5) == 2)
        #expect(histogram.percentileMicroseconds(0.75) == 3)
        #expect(histogram.percentileMicroseconds(1) == 31)
        #expect(histogram.percentileMicroseconds(0) == 1, "p0 is the smallest value")
        #expect(histogram.count == 4 && histogram.maxMicroseconds == 31)
    }

    /// Above 32 µs, each power of two has 32 buckets: 1000 µs lies in 992…1007 (2^9 = 512 wide
    /// → 16 µs buckets), 100,000 µs in 98,304…100,351 (2^16 → 2048 µs buckets).
    @Test func largerValuesReportTheirBucketsUpperEnd() {
        var histogram = LatencyHistogram()
        histogram.record(.milliseconds(1))
        histogram.record(.milliseconds(100))
        histogram.record(.milliseconds(250))
        #expect(histogram.percentileMicroseconds(0.3) == 1007)
        #expect(histogram.percentileMicroseconds(0.5) == 100_351)
        #expect(histogram.percentileMicroseconds(0.99) == 250_000, "capped at the largest value seen")
        #expect(histogram.maxMicroseconds == 250_000)
    }

    @Test func hostileDurationsNeitherTrapNorGrow() {
        var histogram = LatencyHistogram()
        histogram.record(.seconds(-5))
        histogram.record(.seconds(Int64.max))
        histogram.record(microseconds: .max)
        #expect(histogram.count == 3)
        #expect(histogram.percentileMicroseconds(0.1) == 0)
        #expect(histogram.percentileMicroseconds(1) == .max)
        #expect(histogram.percentileMicroseconds(.nan) == .max)
        #expect(histogram.percentileMicroseconds(-3) == 0)
        #expect(LatencyHistogram().percentileMicroseconds(0.5) == nil)
    }

    @Test func everyBucketsUpperEndMapsBackToItself() {
        for bucket in 0..<LatencyHistogram.bucketCount {
            let upper = LatencyHistogram.upperEnd(of: bucket)
            #expect(LatencyHistogram.bucket(of: upper) == bucket)
            if upper < .max { #expect(LatencyHistogram.bucket(of: upper + 1) == bucket + 1) }
        }
    }
}

@Suite("Batch ledger")
struct BatchLedgerTests {
    @Test func aBatchIsDoneWhenItsLastRequestCompletes() {
        var ledger = BatchLedger()
        let a = ledger.open(sequence: 0, lastLine: 10, requests: 3)
        let b = ledger.open(sequence: 1, lastLine: 20, requests: 2)
        #expect(a == 0 && b == 3)
        // Out of order, across batches.
        #expect(ledger.complete(tag: 4) == .pending)
        #expect(ledger.complete(tag: 0) == .pending)
        #expect(ledger.complete(tag: 3) == .batchDone(sequence: 1, lastLine: 20))
        #expect(ledger.complete(tag: 2) == .pending)
        #expect(ledger.complete(tag: 1) == .batchDone(sequence: 0, lastLine: 10))
        #expect(ledger.openBatches == 0 && ledger.outstanding == 0)
    }

    @Test func tagsOfNoOpenBatchAreUnknown() {
        var ledger = BatchLedger()
        _ = ledger.open(sequence: 0, lastLine: 1, requests: 1)
        #expect(ledger.complete(tag: 0) == .batchDone(sequence: 0, lastLine: 1))
        #expect(ledger.complete(tag: 0) == .unknown, "completed already")
        #expect(ledger.complete(tag: 1) == .unknown, "never given")
        #expect(ledger.complete(tag: .max) == .unknown)
    }
}
