import Foundation
import PushlineHostileServer
import Testing
@testable import PushlineDelivery

/// Every send libcurl makes, counted against a server that counts what it receives, while the
/// server misbehaves as a hostile network would (docs/delivery.md, "What libcurl 7.88 can tell").
@Suite(.timeLimit(.minutes(2)))
struct TransportWireTests {
    /// One connection whose streams the server collects before it acts, so the client cannot
    /// have written a request the server did not read.
    private func configuration(_ server: HostileHTTP2Server, streams: Int) -> TransportConfiguration {
        TransportConfiguration(connections: 1, streamsPerConnection: streams, caFile: server.certificatePath)
    }

    @Test func aGoawayInTheMiddleOfOpenStreamsIsCountedAndNothingAnsweredIsReportedUndelivered() async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .goaway(streams: 10, answered: 5), maxConcurrentStreams: 10))
        let paths = (0..<10).map { "/goaway/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 10))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        // Five answered on the first connection, five above the last-stream-id never processed.
        #expect(counts.unprocessed == 5)
        #expect(counts.answered == 5 + responses.filter { $0.wireSends > 1 && $0.status == 200 }.count)
        // libcurl resends the refused streams itself on a new connection, all but (in 7.88) the
        // last one, which ends CURLE_HTTP2 with no message: not provable, so not "proven".
        let resent = responses.filter(\.resentByLibcurl)
        #expect(!resent.isEmpty)
        #expect(resent.allSatisfy { $0.wireSends == 2 && $0.status == 200 })
        for response in responses where response.result != .response {
            #expect(response.result == .noResponse)
            #expect(response.mayHaveBeenDelivered)
            #expect(!response.provenUnprocessed)
        }
        #expect(counters.wireSends == UInt64(counts.received))
        #expect(counters.connectionsOpened == 2)
    }

    @Test func aConnectionDroppedAfterSomeAnswersIsCountedAndTheNextConnectionServes() async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .dropAfter(streams: 8, answered: 4), maxConcurrentStreams: 8))
        let first = (0..<8).map { "/drop/\($0)" }
        let (dropped, _) = try await sendWire(paths: first, to: server.baseURL, configuration: configuration(server, streams: 8))
        let afterDrop = try await serverCounts(server, reaching: dropped.reduce(0) { $0 + $1.wireSends })
        expectHonest(dropped, paths: first, counts: afterDrop)
        // The four the server never answered fail, flagged as possibly delivered: the server read them.
        for response in dropped where afterDrop.arrivalsByPath[first[Int(response.slot)]]?.last == .pending {
            #expect(response.result != .response)
            #expect(response.mayHaveBeenDelivered && !response.provenUnprocessed)
        }
        // The server answered four on the first connection, then dropped it (no TLS close): the
        // client may or may not have read those answers, and may resend a request the server
        // read but did not answer (libcurl does when a receive fails): each resend is counted.
        #expect(first.filter { afterDrop.arrivalsByPath[$0]?.first == .answered }.count == 4)

        let second = (0..<8).map { "/after-drop/\($0)" }
        let (served, _) = try await sendWire(paths: second, to: server.baseURL, configuration: configuration(server, streams: 8))
        let total = try await serverCounts(server, reaching: afterDrop.received + served.count)
        await server.stop()
        #expect(served.allSatisfy { $0.result == .response && $0.status == 200 && $0.wireSends == 1 })
        expectHonest(served, paths: second, counts: total, earlierReceived: afterDrop.received)
    }

    @Test func anOversizedResponseHeaderMakesLibcurlResendTheConnectionsOtherStreamsAndEachResendIsCounted() async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .oversizedHeader(streams: 8, answered: 4), maxConcurrentStreams: 8))
        let paths = (0..<8).map { "/oversized/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 8))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        // The server answered all eight on the first connection (one with the 100 KB header);
        // libcurl failed the connection (COMPRESSION_ERROR) and resent every stream it had not
        // finished reading, answers it never read included: those are second deliveries.
        let resent = responses.filter(\.resentByLibcurl)
        #expect(resent.count >= 1)
        for response in resent {
            #expect(response.mayHaveBeenDelivered)
            #expect(counts.arrivalsByPath[paths[Int(response.slot)]]?.first == .answered)
        }
        #expect(responses.allSatisfy { $0.result == .response && $0.status == 200 })
        #expect(counters.wireSends == UInt64(counts.received))
    }

    @Test func refusedStreamsAreResentByLibcurlAndCounted() async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .refuseEvery(3)))
        let paths = (0..<12).map { "/refuse-every/\($0)" }
        let (responses, _) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 100))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        #expect(counts.unprocessed >= 1)
        #expect(responses.allSatisfy { $0.result == .response && $0.status == 200 })
        #expect(responses.filter(\.resentByLibcurl).count == counts.unprocessed)
    }

    @Test func aStreamRefusedBeyondLibcurlsResendsIsProvenUnprocessedOnItsLastSend() async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = ["/refuse/99/always"]
        let (responses, _) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 1))
        let counts = try await serverCounts(server, reaching: 6)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        let response = try #require(responses.first)
        // libcurl 7.88: five resends (CONN_MAX_RETRIES), then CURLE_RECV_ERROR and its give-up text.
        #expect(response.wireSends == 6)
        #expect(response.curlCode == 56)
        #expect(response.curlErrorDetail == "Connection died, tried 5 times before giving up")
        #expect(response.result == .noResponse)
        #expect(response.provenUnprocessed)
        // The earlier five were resent silently, which 7.88 does not tell from a lost connection.
        #expect(response.mayHaveBeenDelivered)
        #expect(counts.arrivalsByPath[paths[0]] == Array(repeating: .refused, count: 6))
    }

    @Test func eachRequestGetsLibcurlsFullResendBudgetWhateverItsHandleDidBefore() async throws {
        let server = try await HostileHTTP2Server.start()
        // One stream, so both requests use the same easy handle in turn.
        let transport = try HTTP2Transport(configuration(server, streams: 1))
        var responses: [TransportResponse] = []
        for (slot, path) in ["/refuse/2/first", "/refuse/99/second"].enumerated() {
            async let completion = collect(transport, count: 1)
            try await transport.submit(TransportRequest(slot: UInt64(slot), method: .get, url: server.baseURL + path))
            responses += await completion
        }
        await transport.shutdown()
        await server.stop()
        #expect(responses.map(\.slot) == [0, 1])
        // Two refusals, then answered.
        #expect(responses[0].status == 200 && responses[0].wireSends == 3)
        // libcurl counts resends per easy handle and resets the count only on curl_easy_reset:
        // without a fresh handle the second request would get 3 resends, not 5.
        #expect(responses[1].wireSends == 6 && responses[1].provenUnprocessed)
    }

    @Test func unansweredStreamsTimeOutAloneAndAreCountedAsPossiblyDelivered() async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = ["/silent/0", "/ok/1", "/silent/2"] + (3..<20).map { "/ok/\($0)" }
        let (responses, _) = try await sendWire(
            paths: paths, to: server.baseURL, configuration: configuration(server, streams: 100),
            // Short for the requests that must time out; a hang guard for the others.
            timeoutMilliseconds: { $0.hasPrefix("/silent") ? 1_000 : 60_000 }, warmUpPath: "/ok/warm-up"
        )
        let counts = try await serverCounts(server, reaching: paths.count + 1)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, earlierReceived: 1)
        for response in responses {
            if paths[Int(response.slot)].hasPrefix("/silent") {
                #expect(response.result == .timedOut && response.curlCode == 28)
                // Written (the usual case on a connection already up), or timed out before a
                // byte was written on a very busy machine: either way said so.
                #expect(response.mayHaveBeenDelivered == (response.wireSends == 1) && !response.provenUnprocessed == (response.wireSends == 1))
            } else {
                #expect(response.result == .response && response.status == 200 && response.wireSends == 1)
            }
        }
        // The timeouts did not hold the other requests back.
        #expect(responses.filter { $0.result == .response }.count == 18)
    }

    /// A drop answers nothing here: a client that reads answers writes new requests into the
    /// freed streams, and a connection dropped before the server reads them loses requests the
    /// client did write (counted as sent, and as possibly delivered: it cannot know).
    static let repeatedFaults: [HostilePlan.ConnectionFault] = [
        .goaway(streams: 20, answered: 7), .dropAfter(streams: 20, answered: 0),
        .oversizedHeader(streams: 20, answered: 5), .refuseEvery(4),
    ]

    @Test(arguments: repeatedFaults)
    func theCountsHoldWhenTheFaultRepeatsOverManyConnections(fault: HostilePlan.ConnectionFault) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: fault, hostileConnections: 4, maxConcurrentStreams: 20))
        let paths = (0..<300).map { "/repeat/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 20))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        #expect(counters.wireSends == UInt64(counts.received))
        #expect(counts.connections >= 5)
        // At most the streams of the four hostile connections end without an answer.
        #expect(responses.filter { $0.result == .response }.count >= 300 - 4 * 20)
    }

    @Test func emptyBodiedAnswersAreResponsesSentOnce() async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = (0..<200).map { "/empty/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 50))
        let counts = try await serverCounts(server, reaching: paths.count)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts)
        #expect(responses.allSatisfy { $0.result == .response && $0.status == 200 && $0.body.isEmpty && $0.wireSends == 1 })
        #expect(responses.allSatisfy { $0.curlErrorDetail == nil && !$0.provenUnprocessed })
        #expect(counters.connectionsOpened == 1)
    }
}
