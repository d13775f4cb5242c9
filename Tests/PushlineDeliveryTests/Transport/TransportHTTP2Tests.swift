import Foundation
import Testing
@testable import PushlineDelivery

/// The transport against a real HTTP/2 TLS server (nghttpd) on 127.0.0.1, each test on both
/// engines: what a server answered must read the same whichever engine sent the request.
// Each test takes a second or two alone. The limit is wall time, and on two cores the whole
// suite's tasks share a cooperative pool of two threads with CPU-bound tests: a CI run saw
// unrelated tests wait 35 s to start and two of these pass 120 s. Four minutes still catches
// a hang.
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(4)))
struct TransportHTTP2Tests {
    static let okBody = Array(#"{"ok":true}"#.utf8)

    @Test(arguments: TransportEngine.allCases)
    func manyRequestsMultiplexOverTheConfiguredConnectionsAndEachCompletesOnceWithItsSlot(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Self.okBody])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 2, streamsPerConnection: 50, caFile: server.certificatePath).on(engine))
        let arena = BodyArena(Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        let count = 3000
        // Slots that are not 0..<count, so a slot mix-up cannot pass by accident.
        let slots = (0..<count).map { UInt64($0) * 7 + 1_000 }
        let requests = slots.map {
            TransportRequest(slot: $0, url: server.baseURL + "/ok", headerLines: ["content-type: application/json"],
                             body: arena.slice(0..<arena.pointer.count), bodyOwner: arena)
        }
        async let responses = collect(transport, count: count)
        let taken = try await transport.submit(contentsOf: requests)
        #expect(taken == count)
        let all = await responses
        await transport.shutdown()

        #expect(all.count == count)
        #expect(Set(all.map(\.slot)) == Set(slots))
        #expect(all.allSatisfy { $0.result == .response && $0.status == 200 && $0.end == .answered && $0.failure == nil })
        #expect(all.allSatisfy { $0.body == Self.okBody && !$0.bodyTruncated })
        // 3 (libcurl's CURL_HTTP_VERSION_2_0, which both engines report): h2, negotiated by ALPN.
        #expect(all.allSatisfy { $0.httpVersion == 3 && $0.wireSends == 1 })
        // 100 streams in flight over connections of 50 streams: exactly the two allowed, never
        // one per waiting transfer.
        #expect(transport.counters.connectionsOpened == 2)
        #expect(transport.counters.completed == UInt64(count))
    }

    @Test(arguments: TransportEngine.allCases)
    func oneConnectionCarriesEveryStreamWhenConfiguredSo(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Self.okBody])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 100, caFile: server.certificatePath).on(engine))
        let requests = (0..<500).map { TransportRequest(slot: UInt64($0), method: .get, url: server.baseURL + "/ok") }
        async let responses = collect(transport, count: requests.count)
        _ = try await transport.submit(contentsOf: requests)
        let all = await responses
        await transport.shutdown()
        #expect(all.count == 500 && all.allSatisfy { $0.status == 200 })
        #expect(transport.counters.connectionsOpened == 1)
    }

    /// APNs answers 200 with no body. nghttpd (like any nghttp2 server) answers about 1,100
    /// stream resets with GOAWAY: a client that resets answered streams gets a new TLS
    /// connection each time (the libcurl engine's case: Curl/CurlResetFilterTests).
    @Test(arguments: TransportEngine.allCases)
    func emptyBodiedAnswersKeepOneConnection(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["empty": []])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 100, caFile: server.certificatePath).on(engine))
        let arena = BodyArena(Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        let count = 5_000
        let requests = (0..<count).map {
            TransportRequest(slot: UInt64($0), url: server.baseURL + "/empty", headerLines: ["content-type: application/json"],
                             body: arena.slice(0..<arena.pointer.count), bodyOwner: arena)
        }
        async let responses = collect(transport, count: count)
        _ = try await transport.submit(contentsOf: requests)
        let all = await responses
        await transport.shutdown()
        #expect(all.count == count)
        #expect(all.allSatisfy { $0.result == .response && $0.status == 200 && $0.body.isEmpty && $0.wireSends == 1 && $0.end == .answered })
        // A client that reset answered streams: a GOAWAY and a new connection about every 1,100.
        #expect(transport.counters.connectionsOpened == 1)
    }

    @Test(arguments: TransportEngine.allCases)
    func bodiesReachTheServerUncopiedAndIntact(engine: TransportEngine) async throws {
        // --echo-upload answers a POST with its own body: what the server received.
        let server = try await LocalHTTP2Server.start(files: ["echo": []], extraArguments: ["--echo-upload"])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 20, caFile: server.certificatePath).on(engine))
        // One arena, many ranges of different lengths (0 included), like a batch's byte arena.
        let bytes = (0..<25_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let arena = BodyArena(bytes)
        // And two larger than one DATA frame (16 KiB) and than the libcurl engine's per-handle
        // buffers (16 KiB up, 4 KiB down): they go through in pieces.
        let ranges = (0..<200).map { index -> Range<Int> in
            let start = index * 97
            return start..<(start + index * 13 % 1500)
        } + [0..<6_000, 1..<24_001]
        let requests = ranges.enumerated().map { index, range in
            TransportRequest(slot: UInt64(index), url: server.baseURL + "/echo", headerLines: ["content-type: application/octet-stream"],
                             body: arena.slice(range), bodyOwner: arena)
        }
        async let responses = collect(transport, count: requests.count)
        _ = try await transport.submit(contentsOf: requests)
        let all = await responses
        await transport.shutdown()
        #expect(all.count == ranges.count)
        for response in all {
            let range = ranges[Int(response.slot)]
            #expect(response.status == 200)
            // An answer over the transport's bound is cut there (the rest is read and dropped).
            let kept = range.prefix(TransportConfiguration().maxResponseBodyBytes)
            #expect(response.body == Array(bytes[kept]), "slot \(response.slot)")
            #expect(response.bodyTruncated == (kept.count < range.count))
            #expect(response.mayHaveBeenDelivered)
        }
    }

    @Test(arguments: TransportEngine.allCases)
    func statusAndSelectedHeadersAreReported(engine: TransportEngine) async throws {
        // nghttpd sends configured trailers after a body sent without content-length; both
        // engines read trailer fields like headers, so they stand in for apns-id and retry-after.
        let server = try await LocalHTTP2Server.start(
            files: ["ok": Self.okBody],
            extraArguments: ["--no-content-length", "--trailer=apns-id: 7C4BB1F3-0F4B-4A8D-9F4C-2E6F0E7F1A11", "--trailer=Retry-After:   120  "]
        )
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(
            caFile: server.certificatePath, capturedHeaderNames: ["apns-id", "retry-after", "cache-control", "content-length"]).on(engine))
        let requests = [
            TransportRequest(slot: 1, url: server.baseURL + "/ok"),
            TransportRequest(slot: 2, url: server.baseURL + "/missing"),
        ]
        async let responses = collect(transport, count: 2)
        _ = try await transport.submit(contentsOf: requests)
        let bySlot = Dictionary(uniqueKeysWithValues: await responses.map { ($0.slot, $0) })
        await transport.shutdown()

        let ok = try #require(bySlot[1])
        #expect(ok.result == .response && ok.status == 200)
        #expect(ok.headers["apns-id"] == "7C4BB1F3-0F4B-4A8D-9F4C-2E6F0E7F1A11")
        #expect(ok.headers["Retry-After"] == "120")  // trimmed
        #expect(ok.headers["cache-control"] == "max-age=3600")  // nghttpd's for a served file
        #expect(ok.headers["content-length"] == nil)  // --no-content-length
        #expect(ok.headers["server"] == nil)  // not captured

        let missing = try #require(bySlot[2])
        // A status is a response, whatever it says: classifying it is the sender's job.
        #expect(missing.result == .response && missing.status == 404 && missing.end == .answered && missing.failure == nil)
    }

    @Test(arguments: TransportEngine.allCases)
    func headerValuesOverTheBoundAreReportedAbsentNotCut(engine: TransportEngine) async throws {
        let atBound = String(repeating: "a", count: 256)
        let overBound = String(repeating: "b", count: 257)
        let server = try await LocalHTTP2Server.start(
            files: ["ok": Self.okBody],
            extraArguments: ["--no-content-length", "--trailer=retry-after: \(atBound)", "--trailer=apns-id: \(overBound)"]
        )
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(caFile: server.certificatePath, maxHeaderValueBytes: 256).on(engine))
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 1, method: .get, url: server.baseURL + "/ok"))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.status == 200)
        #expect(response.headers["retry-after"] == atBound)
        #expect(response.headers["apns-id"] == nil)
    }

    @Test(arguments: TransportEngine.allCases)
    func responseBodiesAreBoundedAndTheRestIsDiscardedAndFlagged(engine: TransportEngine) async throws {
        let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let server = try await LocalHTTP2Server.start(files: ["big": big, "ok": Self.okBody])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(caFile: server.certificatePath, maxResponseBodyBytes: 1000).on(engine))
        async let responses = collect(transport, count: 2)
        _ = try await transport.submit(contentsOf: [
            TransportRequest(slot: 1, method: .get, url: server.baseURL + "/big"),
            TransportRequest(slot: 2, method: .get, url: server.baseURL + "/ok"),
        ])
        let bySlot = Dictionary(uniqueKeysWithValues: await responses.map { ($0.slot, $0) })
        await transport.shutdown()
        let truncated = try #require(bySlot[1])
        #expect(truncated.result == .response && truncated.status == 200)
        #expect(truncated.body == Array(big.prefix(1000)))
        #expect(truncated.bodyTruncated)
        let small = try #require(bySlot[2])
        #expect(small.body == Self.okBody && !small.bodyTruncated)
    }
}
