import Crypto
import PushlineCore
@testable import PushlineDelivery
import PushlineHostileServer
import Testing

/// A whole APNs lane on the nghttp2 engine against a server that misbehaves as a hostile network
/// would: it drops connections with streams open, sends GOAWAY in the middle of open streams,
/// answers one stream with a header no client can decode (which fails the whole connection), or
/// refuses streams. Whatever it does, the lane's account must match the server's: the attempts
/// reported for each device are the requests the server received for it, a device the server
/// answered 200 is never reported failed, and a device is marked a possible duplicate exactly
/// when the server may have processed two of its copies (a refused copy was not processed).
@Suite("Lane against a hostile HTTP/2 server", .timeLimit(.minutes(3)))
struct LaneHostileServerTests {
    static let key = try! APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "TEAM123456")

    static let faults: [HostilePlan.ConnectionFault] = [
        .dropAfter(streams: 40, answered: 15),
        .goaway(streams: 40, answered: 15),
        .oversizedHeader(streams: 40, answered: 15),
        .refuseEvery(7),
    ]

    @Test("each device's reported attempts are the requests the server received for it; no device answered 200 is failed", arguments: faults)
    func accountMatchesTheServer(fault: HostilePlan.ConnectionFault) async throws {
        // The first request of each connection is answered at once: the lane warms up on it.
        // One poisoned answer breaks one connection: a later connection that broke too would lose
        // answers no client could read, whatever it did (HostileScenarioTests poisons tokens).
        let hostile: Int
        if case .oversizedHeader = fault { hostile = 1 } else { hostile = 3 }
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: fault, hostileConnections: hostile, maxConcurrentStreams: 40, warmUp: 1))
        let settings = SenderSettings(
            endpoint: server.baseURL, caFile: server.certificatePath, connections: 1, streamsPerConnection: 40,
            rate: try SendRate(parsing: "100000/s"), requestTimeout: .seconds(60),
            retry: RetryPolicy(maximumAttempts: 5, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50), maximumTotalTime: .seconds(120))
        )
        var engineSettings = settings
        engineSettings.transport = .nghttp2
        let lane = try ProviderSenders.make(
            ProviderSendConfiguration(provider: .apns, credentials: .apns(Self.key), settings: engineSettings), routes: TestCampaign.routes
        )
        let tokens = (0..<400).map(TestCampaign.apnsToken)
        let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
        let counts = server.counts
        await server.stop()
        // A dropped connection is the one case the two sides cannot match: the client writes new
        // requests into the streams the server's last answers freed, and the server closes the
        // connection without reading them. Those count as attempts (possibly delivered, the
        // safe side), so the report may exceed what the server received, never fall below it.
        let exact: Bool
        if case .dropAfter = fault { exact = false } else { exact = true }

        #expect(run.violations.isEmpty)
        #expect(run.settled.count == tokens.count)
        var mismatches: [String] = []
        for (tag, token) in tokens.enumerated() {
            guard let outcome = run.outcome(tag) else { continue }
            let path = "/3/device/" + token
            let received = counts.receivedByPath[path] ?? 0
            let arrivals = counts.arrivalsByPath[path] ?? []
            if exact ? outcome.attempts != received : outcome.attempts < received {
                mismatches.append("\(tag): \(outcome.attempts) attempts reported, \(received) received")
            }
            // The one answer that broke its connection (HPACK) is the only answered device that may
            // fail: its answer could not be read, and it says why.
            if arrivals.contains(.answered), outcome.kind != .sent, outcome.reasonCode != "answer_broke_connection" {
                mismatches.append("\(tag): answered 200, reported \(outcome)")
            }
            // Two copies the server may have processed (answered, or left unanswered: not refused):
            // the lane says the device may have it twice; fewer, and it must not say so.
            let processable = arrivals.filter { $0 != .refused }.count
            if processable > 1, !outcome.possibleDuplicate { mismatches.append("\(tag): \(processable) processable copies, not marked") }
            if exact, processable < 2, outcome.possibleDuplicate, outcome.kind == .sent {
                mismatches.append("\(tag): marked, but \(processable) processable copies of \(received)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count): \(mismatches.prefix(5))")
        let report = try #require(run.report)
        if exact {
            #expect(report.attempts == counts.received)
        } else {
            #expect(report.attempts >= counts.received)
        }
        // A device the server never answered may still fail, but only after its one resend
        // (a copy may have been processed, so a third is never risked): never silently.
        let broken = run.settled.values.filter { $0.outcome.reasonCode == "answer_broke_connection" }
        if case .oversizedHeader = fault {
            #expect(broken.count == hostile)
        } else {
            #expect(broken.isEmpty)
        }
        #expect(run.settled.values.allSatisfy { $0.outcome.kind == .sent || ["no_response_after_resend", "answer_broke_connection"].contains($0.outcome.reasonCode) })
        #expect((run.counts[.sent] ?? 0) * 10 >= tokens.count * 9, "\(run.counts)")
    }
}
