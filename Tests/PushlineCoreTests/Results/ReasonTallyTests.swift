import PushlineCore
import Testing

/// Provider reasons come off the wire: a server that answers a new reason per request must not
/// grow the counts (and summary.json) by a key per device, and nothing may go uncounted.
@Suite("Reason tallies stay bounded")
struct ReasonTallyTests {
    @Test func aNewReasonPerDeviceFillsTheTallyThenCountsAsOther() {
        var counts = RunCounts()
        for n in 0..<1_000 {
            counts.countDevice(provider: .apns)
            counts.record(.failed(reason: "Reason\(n)", httpStatus: 400, attempts: 1), provider: .apns)
        }
        // 256 reasons kept as given, the other 744 devices under `other`.
        #expect(counts.failed.count == 257)
        #expect(counts.failed["Reason0"] == 1 && counts.failed["Reason255"] == 1 && counts.failed["Reason256"] == nil)
        #expect(counts.failed["other"] == 744)
        #expect(counts.failedTotal == 1_000)
        #expect(counts.reconciles && counts.reconcilesByProvider)
    }

    @Test func mergingBatchesKeepsTheBoundAndTheTotal() {
        var total = RunCounts()
        for batch in 0..<10 {
            var counts = RunCounts()
            for n in 0..<100 {
                counts.countDevice(provider: .fcm)
                counts.record(.invalidToken(reason: "R\(batch)-\(n)"), provider: .fcm)
            }
            total.add(counts)
        }
        #expect(total.invalidTokens.count == 257)
        #expect(total.invalidTokenTotal == 1_000)
        #expect(total.invalidTokens["other"] == 744)
        #expect(total.reconciles && total.reconcilesByProvider)
    }

    @Test func knownReasonsAlreadyCountedStillCountUnderTheirName() {
        var tally: [String: Int] = [:]
        for n in 0..<ReasonTally.maxDistinct { ReasonTally.add(1, to: "r\(n)", in: &tally) }
        ReasonTally.add(5, to: "r7", in: &tally)
        ReasonTally.add(2, to: "new", in: &tally)
        #expect(tally["r7"] == 6 && tally["new"] == nil && tally["other"] == 2)
    }
}
