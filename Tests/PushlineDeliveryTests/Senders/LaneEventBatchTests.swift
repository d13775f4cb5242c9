import Crypto
import PushlineCore
@testable import PushlineDelivery
import Testing

/// A lane holds its settlements back for a few turns while transfers are in flight (each
/// hand-over wakes the reading task on another thread), but never longer than
/// `LaneHost.eventsHoldNanoseconds`: a settlement does not wait for the next answer. The host is
/// driven turn by turn as its transfer loop drives it, with the lane's and the hold's time on a
/// test clock, so no verdict depends on how fast the machine is.
@Suite("Lane events: held briefly, never until the next answer")
struct LaneEventBatchTests {
    /// A lane with `streams` streams on one connection, on a test clock that also times the
    /// hold, given `requests` requests and turned once: a fresh lane starts one (returned) until
    /// its first answer. No transport: the test plays the loop, so nothing is sent.
    static func startedLane(streams: Int, requests: Int) async throws -> (host: LaneHost, output: LaneEvents, clock: TestClock, first: TransportRequest) {
        let clock = TestClock()
        let output = LaneEvents()
        let host = try LaneHost.apnsForTests(streams: streams, clock: clock, output: output)
        await host.offer(TestCampaign.requests(provider: .apns, tokens: (0..<requests).map(TestCampaign.apnsToken)))
        let first = host.turn([], transportCancelled: false)
        #expect(first.start.count == 1, "one request until the first answer")
        return (host, output, clock, try #require(first.start.first))
    }

    /// A 200 with no body for the transfer in `slot`.
    static func answered(_ slot: UInt64) -> TransportResponse {
        TransportResponse(
            slot: slot, result: .response, status: 200, headers: .none([]), body: [], bodyTruncated: false, curlCode: 0,
            mayHaveBeenDelivered: true, httpVersion: 3, wireSends: 1, provenUnprocessed: false, curlErrorDetail: nil
        )
    }

    @Test func aSettlementWaitsForTheHoldsDeadlineNotForTheNextAnswer() async throws {
        let (host, output, clock, first) = try await Self.startedLane(streams: 10, requests: 3)
        // The answer to the first request settles it and starts the other two: with them in flight its settlement is
        // held, and the loop is told to wake by the hold's deadline (2 ms) even if the network
        // stays quiet.
        let second = host.turn([Self.answered(first.slot)], transportCancelled: false)
        #expect(second.start.count == 2)
        #expect(output.pendingCount == 0, "held while requests are in flight")
        #expect(second.timeoutMilliseconds == 2)

        clock.advance(nanoseconds: 1_000_000)
        let third = host.turn([], transportCancelled: false)
        #expect(output.pendingCount == 0, "1 ms into the hold: still held")
        #expect(third.timeoutMilliseconds == 1)

        // At the deadline it goes, although both requests are still unanswered.
        clock.advance(nanoseconds: 1_000_000)
        _ = host.turn([], transportCancelled: false)
        #expect(output.pendingCount == 1)

        // Nothing left in flight: the last two go in the turn that settled them.
        _ = host.turn(second.start.map { Self.answered($0.slot) }, transportCancelled: false)
        #expect(output.pendingCount == 3)
    }

    /// The hold never keeps more settlements than the lane can have in flight
    /// (docs/resume.md, "The bound"): with one stream, each goes in the turn that made it.
    @Test func aLaneWithOneStreamHoldsNothing() async throws {
        let (host, output, _, first) = try await Self.startedLane(streams: 1, requests: 2)
        let second = host.turn([Self.answered(first.slot)], transportCancelled: false)
        #expect(second.start.count == 1, "the next request is in flight")
        #expect(output.pendingCount == 1, "and the settlement went at once")
    }
}
