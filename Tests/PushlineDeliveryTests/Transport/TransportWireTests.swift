import Foundation
import PushlineHostileServer
import Testing
@testable import PushlineDelivery

/// Every send an engine makes, counted against a server that counts what it receives, while the
/// server misbehaves as a hostile network would (docs/delivery.md). Each test runs on both
/// engines: what the server did is the expectation (`HostileCounts`); where the engines honestly
/// differ (libcurl resends refused and lost streams by itself, the nghttp2 engine never does and
/// reports each stream's end), each is held to its own.
@Suite(.timeLimit(.minutes(2)))
struct TransportWireTests {
    /// One connection whose streams the server collects before it acts, so the client cannot
    /// have written a request the server did not read.
    private func configuration(_ server: HostileHTTP2Server, streams: Int, engine: TransportEngine) -> TransportConfiguration {
        TransportConfiguration(connections: 1, streamsPerConnection: streams, caFile: server.certificatePath).on(engine)
    }

    @Test(arguments: TransportEngine.allCases)
    func aGoawayInTheMiddleOfOpenStreamsIsCountedAndNothingAnsweredIsReportedUndelivered(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .goaway(streams: 10, answered: 5), maxConcurrentStreams: 10))
        let paths = (0..<10).map { "/goaway/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 10, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        // Five answered on the first connection, five above the last-stream-id never processed.
        let refusedFirst = paths.filter { counts.arrivalsByPath[$0]?.first == .refused }
        #expect(refusedFirst.count == 5 && counts.unprocessed == 5)
        #expect(counters.wireSends == UInt64(counts.received))
        #expect(counters.connectionsOpened == counts.connections)
        switch engine {
        case .nghttp2:
            // Each stream above the last-stream-id is reported refused, once, and not resent.
            #expect(counts.received == paths.count)
            for path in refusedFirst {
                let response = try #require(responses.first { paths[Int($0.slot)] == path })
                #expect(response.end == .refused && response.result == .noResponse)
                #expect(response.provenUnprocessed && !response.mayHaveBeenDelivered && response.wireSends == 1)
            }
            #expect(responses.filter { $0.end == .answered }.count == 5)
            #expect(counts.connections == 1)
        case .curl:
            #expect(counts.answered == 5 + responses.filter { $0.wireSends > 1 && $0.status == 200 }.count)
            // libcurl resends the refused streams itself on a new connection, all but the last
            // one, which ends CURLE_HTTP2 with no message: not provable, so not "proven".
            let resent = responses.filter(\.resentByLibcurl)
            #expect(!resent.isEmpty)
            #expect(resent.allSatisfy { $0.wireSends == 2 && $0.status == 200 })
            for response in responses where response.result != .response {
                #expect(response.result == .noResponse)
                #expect(response.mayHaveBeenDelivered)
                #expect(!response.provenUnprocessed)
            }
            #expect(counts.connections == 2)
        }
    }

    @Test(arguments: TransportEngine.allCases)
    func aConnectionDroppedAfterSomeAnswersIsCountedAndTheNextConnectionServes(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .dropAfter(streams: 8, answered: 4), maxConcurrentStreams: 8))
        let first = (0..<8).map { "/drop/\($0)" }
        let (dropped, _) = try await sendWire(paths: first, to: server.baseURL, configuration: configuration(server, streams: 8, engine: engine))
        let afterDrop = try await serverCounts(server, reaching: dropped.reduce(0) { $0 + $1.wireSends })
        expectHonest(dropped, paths: first, counts: afterDrop, engine: engine)
        // The four the server never answered fail, flagged as possibly delivered: the server read them.
        for response in dropped where afterDrop.arrivalsByPath[first[Int(response.slot)]]?.last == .pending {
            #expect(response.result != .response)
            #expect(response.mayHaveBeenDelivered && !response.provenUnprocessed)
            if engine == .nghttp2 {
                #expect(response.end == .lost && response.failure?.kind == .connectionLost, "\(response.end) \(response.problemDescription)")
            }
        }
        // The server answered four on the first connection, then dropped it (no TLS close): the
        // client may or may not have read those answers. libcurl may resend a request the
        // server read but did not answer (when a receive fails): each resend is counted. The
        // nghttp2 engine resends nothing.
        #expect(first.filter { afterDrop.arrivalsByPath[$0]?.first == .answered }.count == 4)
        if engine == .nghttp2 { #expect(afterDrop.received == first.count) }

        let second = (0..<8).map { "/after-drop/\($0)" }
        let (served, _) = try await sendWire(paths: second, to: server.baseURL, configuration: configuration(server, streams: 8, engine: engine))
        let total = try await serverCounts(server, reaching: afterDrop.received + served.count)
        await server.stop()
        #expect(served.allSatisfy { $0.result == .response && $0.status == 200 && $0.wireSends == 1 })
        expectHonest(served, paths: second, counts: total, earlierReceived: afterDrop.received, engine: engine)
    }

    @Test(arguments: TransportEngine.allCases)
    func anOversizedResponseHeaderLosesTheConnectionsStreamsAndEachCopyIsCounted(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: .oversizedHeader(streams: 8, answered: 4), maxConcurrentStreams: 8))
        let paths = (0..<8).map { "/oversized/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 8, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(counters.wireSends == UInt64(counts.received))
        // The server answered all eight on the first connection: four readable, one with the
        // 100 KB header (HPACK cannot decode it: the client must fail the connection), three
        // after it that the client never reads.
        let firstAnswers = paths.map { counts.answersByPath[$0]?.first }
        #expect(firstAnswers.filter { $0 == .status(200) }.count == 4)
        #expect(firstAnswers.filter { $0 == .unreadable(.oversizedField) }.count == 1)
        switch engine {
        case .nghttp2:
            // No copy resent; each stream's end is what the server did with it.
            #expect(counts.received == paths.count)
            for response in responses {
                let path = paths[Int(response.slot)]
                switch counts.answersByPath[path]?.first {
                case .status(200)?:
                    #expect(response.end == .answered && response.status == 200, "\(path): \(response.end)")
                case .unreadable(.oversizedField)?:
                    #expect(response.end == .answerBrokeConnection && response.mayHaveBeenDelivered, "\(path): \(response.end)")
                case .afterBrokenConnection?:
                    #expect(response.end == .lost && response.mayHaveBeenDelivered && !response.provenUnprocessed, "\(path): \(response.end)")
                default:
                    Issue.record("\(path): unexpected server answer \(String(describing: counts.answersByPath[path]))")
                }
            }
        case .curl:
            // libcurl failed the connection (COMPRESSION_ERROR) and resent every stream it had
            // not finished reading, answers it never read included: those are second deliveries.
            let resent = responses.filter(\.resentByLibcurl)
            #expect(resent.count >= 1)
            for response in resent {
                #expect(response.mayHaveBeenDelivered)
                #expect(counts.arrivalsByPath[paths[Int(response.slot)]]?.first == .answered)
            }
            #expect(responses.allSatisfy { $0.result == .response && $0.status == 200 })
        }
    }

    /// Every third request is refused (RST_STREAM REFUSED_STREAM) on its first arrival, then
    /// answered.
    @Test(arguments: TransportEngine.allCases)
    func refusedStreamsAreReportedOnceByTheNGHTTP2EngineAndResentByLibcurl(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = (0..<12).map { $0 % 3 == 0 ? "/refuse/1/\($0)" : "/ok/\($0)" }
        let (responses, _) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 100, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        let refused = paths.filter { counts.arrivalsByPath[$0]?.first == .refused }
        #expect(refused.count == 4 && counts.unprocessed == 4)
        for response in responses {
            let path = paths[Int(response.slot)]
            guard refused.contains(path) else {
                #expect(response.result == .response && response.status == 200 && response.wireSends == 1)
                continue
            }
            switch engine {
            case .nghttp2:
                #expect(counts.arrivalsByPath[path] == [.refused])
                #expect(response.end == .refused && response.result == .noResponse && response.wireSends == 1)
                #expect(response.provenUnprocessed && !response.mayHaveBeenDelivered)
            case .curl:
                // Resent by libcurl on a new connection and answered there; libcurl cannot say
                // the first copy was refused, so the answer counts as a possible second delivery.
                #expect(counts.arrivalsByPath[path] == [.refused, .answered])
                #expect(response.result == .response && response.status == 200 && response.wireSends == 2)
                #expect(response.resentByLibcurl && response.mayHaveBeenDelivered)
            }
        }
    }

    /// A stream the server refuses on every arrival.
    @Test(arguments: TransportEngine.allCases)
    func aStreamRefusedOnEveryArrivalEndsProvenUnprocessed(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = ["/refuse/99/always"]
        let (responses, _) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 1, engine: engine))
        let response = try #require(responses.first)
        let counts = try await serverCounts(server, reaching: response.wireSends)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(counts.arrivalsByPath[paths[0]] == Array(repeating: .refused, count: response.wireSends))
        #expect(response.result == .noResponse && response.end == .refused && response.provenUnprocessed)
        switch engine {
        case .nghttp2:
            #expect(response.wireSends == 1 && !response.mayHaveBeenDelivered)
        case .curl:
            // Resent by libcurl until it gives up (Curl/CurlResendTests); the silent resends
            // cannot be told from resends after a lost connection, so: may have been delivered.
            #expect(response.wireSends > 1 && response.mayHaveBeenDelivered)
        }
    }

    /// A stream the server resets with INTERNAL_ERROR after reading it: it may have been
    /// processed; the connection's other streams go on.
    @Test(arguments: TransportEngine.allCases)
    func aStreamResetByTheServerMayHaveBeenProcessedAndTheConnectionGoesOn(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(rules: [HostileRule(.prefix("/reset/"), .reset(errorCode: 2))]))
        let paths = (0..<6).map { $0 == 2 ? "/reset/\($0)" : "/ok/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 10, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(counts.answersByPath["/reset/2"]?.first == .reset(errorCode: 2))
        for response in responses {
            if paths[Int(response.slot)] == "/reset/2" {
                #expect(response.result == .noResponse && response.status == 0)
                #expect(response.mayHaveBeenDelivered && !response.provenUnprocessed)
                if engine == .nghttp2 { #expect(response.end == .resetByPeer(errorCode: 2), "\(response.end)") }
            } else {
                #expect(response.result == .response && response.status == 200 && response.wireSends == 1)
            }
        }
        #expect(counters.connectionsOpened == counts.connections)
    }

    /// An answer whose header value holds a NUL is malformed (RFC 9113 §8.2.1): a stream error,
    /// the server processed the request, and the connection goes on.
    @Test(arguments: TransportEngine.allCases)
    func aMalformedAnswerFailsItsStreamAloneAndWasProcessed(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(rules: [HostileRule(.prefix("/malformed/"), .malformedHeader())]))
        let paths = (0..<6).map { $0 == 3 ? "/malformed/\($0)" : "/ok/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 10, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(counts.answersByPath["/malformed/3"]?.first == .unreadable(.malformedValue))
        for response in responses {
            if paths[Int(response.slot)] == "/malformed/3" {
                #expect(response.result != .response)
                #expect(response.mayHaveBeenDelivered && !response.provenUnprocessed)
                // libcurl may report the status it read before the bad field; the nghttp2 engine
                // reports a status only with a whole answer.
                if engine == .nghttp2 { #expect(response.end == .answerRejected(.badHeaderBytes) && response.status == 0, "\(response.end)") }
            } else {
                #expect(response.result == .response && response.status == 200)
            }
        }
        #expect(counts.connections == 1 && counters.connectionsOpened == 1)
    }

    @Test(arguments: TransportEngine.allCases)
    func unansweredStreamsTimeOutAloneAndAreCountedAsPossiblyDelivered(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = ["/silent/0", "/ok/1", "/silent/2"] + (3..<20).map { "/ok/\($0)" }
        let (responses, _) = try await sendWire(
            paths: paths, to: server.baseURL, configuration: configuration(server, streams: 100, engine: engine),
            // Short for the requests that must time out; a hang guard for the others.
            timeoutMilliseconds: { $0.hasPrefix("/silent") ? 1_000 : 60_000 }, warmUpPath: "/ok/warm-up"
        )
        let counts = try await serverCounts(server, reaching: paths.count + 1)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, earlierReceived: 1, engine: engine)
        for response in responses {
            if paths[Int(response.slot)].hasPrefix("/silent") {
                #expect(response.result == .timedOut && response.failure?.kind == .timeout)
                if engine == .curl { #expect(response.curlCode == 28) }
                // Written (the usual case on a connection already up), or timed out before a
                // byte was written on a very busy machine: either way said so.
                #expect(response.mayHaveBeenDelivered == (response.wireSends == 1) && !response.provenUnprocessed == (response.wireSends == 1))
                #expect(response.end == (response.wireSends == 1 ? .lost : .notSent))
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

    @Test(arguments: repeatedFaults, TransportEngine.allCases)
    func theCountsHoldWhenTheFaultRepeatsOverManyConnections(fault: HostilePlan.ConnectionFault, engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(fault: fault, hostileConnections: 4, maxConcurrentStreams: 20))
        let paths = (0..<300).map { "/repeat/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 20, engine: engine))
        let counts = try await serverCounts(server, reaching: responses.reduce(0) { $0 + $1.wireSends })
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(counters.wireSends == UInt64(counts.received))
        #expect(counters.connectionsOpened == counts.connections)
        if case .refuseEvery = fault, engine == .nghttp2 {
            // A refused stream is a stream's end, not the connection's.
            #expect(counts.connections == 1)
        } else {
            // The fault ends (or, for libcurl, a refusal retires) each hostile connection.
            #expect(counts.connections >= 5)
        }
        switch engine {
        case .nghttp2:
            // Nothing resent: every request reached the server once, except those whose
            // connection died before their bytes reached the socket (not sent, said so);
            // answered exactly where the server's answer could be read, refused exactly where
            // the server refused.
            let unsent = responses.filter { $0.end == .notSent }
            #expect(unsent.allSatisfy { $0.wireSends == 0 && $0.provenUnprocessed })
            #expect(counts.received == paths.count - unsent.count)
            for response in responses {
                let path = paths[Int(response.slot)]
                #expect((response.result == .response) == readableStatus(counts, path), "\(path): \(response.end), server \(counts.answersByPath[path] ?? [])")
            }
            #expect(responses.filter { $0.end == .refused }.count == counts.unprocessed)
        case .curl:
            // At most the streams of the four hostile connections end without an answer.
            #expect(responses.filter { $0.result == .response }.count >= 300 - 4 * 20)
        }
    }

    @Test(arguments: TransportEngine.allCases)
    func emptyBodiedAnswersAreResponsesSentOnce(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start()
        let paths = (0..<200).map { "/empty/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration(server, streams: 50, engine: engine))
        let counts = try await serverCounts(server, reaching: paths.count)
        await server.stop()

        expectHonest(responses, paths: paths, counts: counts, engine: engine)
        #expect(responses.allSatisfy { $0.result == .response && $0.status == 200 && $0.body.isEmpty && $0.wireSends == 1 })
        #expect(responses.allSatisfy { $0.failure == nil && $0.curlErrorDetail == nil && !$0.provenUnprocessed })
        #expect(counters.connectionsOpened == 1)
    }
}
