import Crypto
import PushlineCore
@testable import PushlineDelivery
import Testing

/// The lane's host on a real transport (a curl loop on its own thread, no request sent).
@Suite("Lane host: waking the transfer thread")
struct LaneHostTests {
    /// Every offer wakes the transfer thread, so a long send wakes it millions of times. The host
    /// once kept its wake-up as a closure in a `Mutex` and read it out per wake, which wrapped it
    /// in one more reabstraction thunk each time: a 20-million-customer send grew by a thunk per
    /// wake and died with SIGSEGV releasing the chain. Waking must hold no state per call.
    @Test func millionsOfWakeUpsLeaveNothingBehind() throws {
        let output = LaneEvents()
        do {
            let host = try LaneHost.apnsForTests(streams: 10, clock: SystemDeliveryClock(), output: output)
            let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 10), host: host)
            host.attach(transport)
            // Past the depth at which releasing (or calling) a chain of thunks overflows a stack.
            for _ in 0..<2_000_000 { host.wake() }
            #expect(host.report().connectionsOpened == 0)
        }
        // Reaching here is the test: the host and transport were released without a crash.
    }
}

extension LaneHost {
    /// An APNs lane's host, `streams` streams on one connection to a closed port, a generous
    /// rate, on `clock` (which also times the events' hold), with no transport: a test plays the
    /// transfer loop (`turn`) or attaches one.
    static func apnsForTests(streams: Int, clock: any DeliveryClock, output: LaneEvents) throws -> LaneHost {
        let settings = SenderSettings(
            endpoint: "https://127.0.0.1:9", connections: 1, streamsPerConnection: streams,
            rate: try SendRate(parsing: "1000000/s"), requestTimeout: .seconds(30), retry: RetryPolicy()
        )
        let key = try APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "TEAM123456")
        let machine = LaneStateMachine(
            provider: .apns, settings: settings,
            routes: LaneRoutes(table: TestCampaign.routes, provider: .apns, endpoint: settings.endpoint),
            identity: "key id KEY1234567, team id TEAM123456", seed: 1, now: clock.now()
        )
        return LaneHost(
            machine: machine, authenticator: .apns(APNsProviderTokenSource(key: key, clock: clock), keyID: key.keyID, teamID: key.teamID),
            clock: clock, output: output, logger: nil, ended: LaneEventsEnd(hosts: 1, output: output), holdClock: clock
        )
    }
}
