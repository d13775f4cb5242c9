import PushlineCore
import PushlineDelivery
@testable import PushlineRuntime
import Testing

/// The parts of a sending run's state that come from the journal: what a resume knows of the
/// runs before it, and the horizons it records.
@Suite("Resume marks and journal horizons")
struct ResumeMarksTests {
    /// One request per `(line, device)`, nothing in it but its place in the audience.
    private static func requests(_ places: [(line: Int, device: UInt32)]) -> [OutgoingRequest] {
        var index = RequestIndex()
        let empty = ByteRange(offset: 0, length: 0)
        for place in places {
            index.append(RequestEntry(line: place.line, device: place.device, route: RouteID(0), flags: [], recipient: empty, target: empty, body: empty, headers: empty))
        }
        let bytes = RequestBytes.arena(of: index)
        return (0..<index.count).map { OutgoingRequest(tag: UInt64($0), index: index, at: $0, bytes: bytes) }
    }

    /// A resumed send whose journal has its watermark at line 100 and APNs' horizon at 250.
    private static func resumedPlan(records: ResumeRecords?) -> CheckpointPlan {
        var journal = CheckpointJournalTests.sample()
        journal.mode = "send"
        journal.settledThroughLine = 100
        journal.horizonLines = [.apns: 250]
        var plan = CheckpointPlan(journal: journal, folder: "/nonexistent", interval: .seconds(2), duplicateWindow: 10_000, resumed: true)
        plan.records = records
        return plan
    }

    @Test("a first run knows nothing and marks nothing")
    func aFirstRunMarksNothing() {
        let marks = ResumeMarks(plan: nil)
        let request = Self.requests([(150, 0)])[0]
        #expect(marks.settledEarlier(request) == nil)
        #expect(!marks.marked(.sent(providerID: "x", attempts: 1), of: request, provider: .apns).possibleDuplicate)
        #expect(marks.settledFromRecords == 0)
    }

    @Test("a resume: devices settled before are known and counted; between watermark and horizon a device is marked unless it was never attempted")
    func aResumeMarksWhatAKilledRunMayHaveSent() {
        var records = ResumeRecords()
        records.settled[DeviceKey(line: 120, device: 1)] = (.apns, .sent(providerID: "earlier", attempts: 1))
        records.neverAttempted.insert(DeviceKey(line: 130, device: 0))
        let marks = ResumeMarks(plan: Self.resumedPlan(records: records))
        let requests = Self.requests([(120, 1), (120, 0), (130, 0), (150, 0), (250, 0), (251, 0), (100, 0)])
        let settled = marks.settledEarlier(requests[0])
        #expect(settled?.provider == .apns && settled?.outcome.kind == .sent)
        #expect(marks.settledEarlier(requests[1]) == nil, "another device of the same line")
        #expect(marks.settledFromRecords == 1)

        let sent = DeliveryOutcome.sent(providerID: "now", attempts: 1)
        let markedLines = requests.filter { marks.marked(sent, of: $0, provider: .apns).possibleDuplicate }.map(\.entry.line)
        // 130 was listed as never attempted; 251 is past the horizon; 100 is the watermark itself.
        // (The sink asks only of devices not settled before; line 120's device 1 is here for the rule.)
        #expect(markedLines == [120, 120, 150, 250])
        // FCM has no horizon in the journal: nothing of it may have been on the wire.
        #expect(!requests.contains { marks.marked(sent, of: $0, provider: .fcm).possibleDuplicate })
    }

    @Test("horizons: none without a checkpoint, none recorded before the first move, a resume starts from the journal's")
    func horizons() {
        let unlimited = JournalHorizons(plan: nil)
        #expect(Provider.allCases.allSatisfy { unlimited[$0] == Int.max })
        #expect(unlimited.recorded.isEmpty)

        var fresh = JournalHorizons(plan: CheckpointPlan(
            journal: CheckpointJournalTests.sample(), folder: "/nonexistent", interval: .seconds(2), duplicateWindow: 10, resumed: false
        ))
        #expect(Provider.allCases.allSatisfy { fresh[$0] == 0 })
        #expect(fresh.recorded.isEmpty)
        fresh[.fcm] = 500
        #expect(fresh.recorded == [.fcm: 500])

        let resumed = JournalHorizons(plan: Self.resumedPlan(records: nil))
        // APNs keeps the horizon it read; every other provider starts at the watermark.
        #expect(resumed[.apns] == 250)
        #expect(Provider.allCases.filter { $0 != .apns }.allSatisfy { resumed[$0] == 100 })
    }
}
