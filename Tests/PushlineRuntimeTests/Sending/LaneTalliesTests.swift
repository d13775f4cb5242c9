import PushlineCore
@testable import PushlineRuntime
import Testing

@Suite("Lane tallies: what the sink counts per lane")
struct LaneTalliesTests {
    @Test func handedAndSettledGiveWhatIsStillInTheLanes() {
        var tallies = LaneTallies(lanes: [.apns, .fcm])
        tallies.handed(lane: 0, count: 5)
        tallies.handed(lane: 1, count: 3)
        for _ in 0..<4 { tallies.settled(lane: 0) }
        tallies.settled(lane: 1)
        #expect(tallies.settled == [4, 1])
        #expect(tallies.unsettled == 3)
    }

    @Test func aLaneThatEndsWithRequestsUnsettledLosesThemAndIsNamedWhenEarly() {
        var tallies = LaneTallies(lanes: [.apns, .fcm])
        tallies.handed(lane: 1, count: 4)
        tallies.settled(lane: 1)
        tallies.handed(lane: 0, count: 2)
        #expect(tallies.unsettled == 5)
        #expect(tallies.ended(lane: 1, early: true) == 3)
        // What the ended lane lost is no longer in the lanes: the window's room comes back.
        #expect(tallies.unsettled == 2)
        tallies.settled(lane: 0)
        tallies.settled(lane: 0)
        #expect(tallies.ended(lane: 0, early: false) == 0)
        #expect(tallies.lost == 3)
        #expect(tallies.endedEarly == [.fcm])
        #expect(tallies.ended == [true, true])
    }

    @Test func moreSettledThanHandedIsNotCountedAsLost() {
        // A lane that settles a request twice is counted by the unknown tags, not here.
        var tallies = LaneTallies(lanes: [.apns])
        tallies.handed(lane: 0, count: 1)
        tallies.settled(lane: 0)
        tallies.settled(lane: 0)
        #expect(tallies.ended(lane: 0, early: false) == 0)
        #expect(tallies.lost == 0)
    }
}
