import Foundation
import PushlineHostileServer
import Testing
@testable import PushlineDelivery

/// Sends one POST per path (slot = index; give each request its own path so the server's
/// per-path count is that request's count) and returns the completions by slot, after the
/// transport has shut down. The default timeout is a hang guard only. `warmUpPath` is sent and
/// answered first (not returned; one more request for the server).
func sendWire(
    paths: [String], to baseURL: String, configuration: TransportConfiguration,
    timeoutMilliseconds: (String) -> Int = { _ in 60_000 }, warmUpPath: String? = nil
) async throws -> (responses: [TransportResponse], counters: TransportCounters) {
    let transport = try HTTP2Transport(configuration)
    if let warmUpPath {
        // A connection up before the requests under test, so their timeouts start on it.
        async let warmUp = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: UInt64.max, method: .get, url: baseURL + warmUpPath))
        #expect(await warmUp.first?.status == 200)
    }
    let arena = BodyArena(Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    let requests = paths.enumerated().map { index, path in
        TransportRequest(
            slot: UInt64(index), url: baseURL + path, headerLines: ["content-type: application/json"],
            body: arena.slice(0..<arena.pointer.count), bodyOwner: arena, timeoutMilliseconds: timeoutMilliseconds(path)
        )
    }
    async let completions = collect(transport, count: requests.count)
    let taken = try await transport.submit(contentsOf: requests)
    #expect(taken == requests.count)
    let all = await completions
    await transport.shutdown()
    // Exactly one completion per request.
    #expect(all.count == paths.count)
    #expect(Set(all.map(\.slot)) == Set((0..<paths.count).map { UInt64($0) }))
    return (all.sorted { $0.slot < $1.slot }, transport.counters)
}

/// Waits (a hang guard, not a timing decision) until the server has read `expected` requests or
/// the guard passes, and returns its counts.
func serverCounts(_ server: HostileHTTP2Server, reaching expected: Int) async throws -> HostileCounts {
    _ = await server.waitForCounts(limit: .seconds(10)) { $0.received >= expected }
    return server.counts
}

/// The wire honesty every scenario must keep, request by request, whichever engine sent it:
/// - what the transport says it sent equals what the server received;
/// - a request the server processed (answered) is never reported as certainly not delivered;
/// - "proven unprocessed" only where the server refused the last copy;
/// - a response is the answer to the last copy sent; a stream ended `.refused` is one the
///   server refused, `.answered` one it answered.
/// And what only the nghttp2 engine promises: it never sends a request twice, and it knows a
/// refusal for what it is (every copy the server refused ends `.refused`).
///
/// `earlierReceived` is what the server had received before these requests were sent.
func expectHonest(
    _ responses: [TransportResponse], paths: [String], counts: HostileCounts, earlierReceived: Int = 0, engine: TransportEngine,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let sent = responses.reduce(0) { $0 + $1.wireSends }
    #expect(sent == counts.received - earlierReceived, "wire sends \(sent) vs server received \(counts.received - earlierReceived)", sourceLocation: sourceLocation)
    if ProcessInfo.processInfo.environment["PUSHLINE_WIRE_TRACE"] != nil {
        for response in responses {
            let path = paths[Int(response.slot)]
            print("wire \(engine) \(path): \(response.result) \(response.end) status \(response.status) curl \(response.curlCode) sends \(response.wireSends) may \(response.mayHaveBeenDelivered) proven \(response.provenUnprocessed) detail \(response.problemDescription) server \(counts.answersByPath[path] ?? [])")
        }
    }
    for response in responses {
        let path = paths[Int(response.slot)]
        let arrivals = counts.arrivalsByPath[path] ?? []
        #expect(response.wireSends == arrivals.count, "\(path): \(response.wireSends) sends, \(arrivals.count) arrived", sourceLocation: sourceLocation)
        if arrivals.contains(.answered) || arrivals.contains(.pending) {
            #expect(response.mayHaveBeenDelivered, "\(path) was (or may have been) processed but is reported undelivered", sourceLocation: sourceLocation)
        }
        if response.provenUnprocessed {
            #expect(arrivals.last == nil || arrivals.last == .refused, "\(path) reported proven unprocessed, server: \(arrivals)", sourceLocation: sourceLocation)
        }
        if response.result == .response {
            #expect(arrivals.last == .answered, "\(path) answered by a copy the server did not answer: \(arrivals)", sourceLocation: sourceLocation)
            #expect(!response.provenUnprocessed, sourceLocation: sourceLocation)
            #expect(response.end == .answered && response.failure == nil, sourceLocation: sourceLocation)
        } else {
            #expect(response.failure != nil, "\(path) ended \(response.end) without a failure", sourceLocation: sourceLocation)
        }
        if response.end == .refused {
            #expect(arrivals.last == .refused, "\(path) reported refused, server: \(arrivals)", sourceLocation: sourceLocation)
        }
        #expect(response.resentByLibcurl == (response.wireSends > 1), sourceLocation: sourceLocation)
        if engine == .nghttp2 {
            #expect(response.wireSends <= 1, "\(path): the nghttp2 engine sent it \(response.wireSends) times", sourceLocation: sourceLocation)
            if arrivals == [.refused] {
                #expect(response.end == .refused && response.provenUnprocessed && !response.mayHaveBeenDelivered,
                        "\(path): refused by the server, reported \(response.end)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// Whether the server's last answer for a path was a status the client could read.
func readableStatus(_ counts: HostileCounts, _ path: String) -> Bool {
    if case .status? = counts.answersByPath[path]?.last { return true }
    return false
}
