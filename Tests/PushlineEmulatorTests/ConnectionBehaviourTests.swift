import Foundation
import NIOCore
import PushlineEmulator
import Testing

@Suite("HTTP/2 connection behaviour")
struct ConnectionBehaviourTests {
    @Test("a fresh connection allows 1 stream until a request's provider token is accepted, then the configured maximum")
    func streamLimitBeforeFirstValidToken() async throws {
        try await withEmulator({ $0.streams = StreamLimits(beforeAuthentication: 1, max: 700) }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let rejected = try await client.request("POST", "/3/device/\(TestDevice.apns(1))", headers: fixture.apnsHeaders(token: "bad.token.here"), body: EmulatorFixture.alertPayload)
            #expect(rejected.reason == "InvalidProviderToken")
            #expect(client.announcedStreamLimits == [1])
            let accepted = try await fixture.sendAPNs(client, token: TestDevice.apns(1))
            #expect(accepted.status == 200)
            // The new limit arrives before the answer that earned it.
            #expect(client.announcedStreamLimits == [1, 700])
            _ = try await fixture.sendAPNs(client, token: TestDevice.apns(2))
            #expect(client.announcedStreamLimits == [1, 700])

            // Each connection starts over at 1.
            let second = try await fixture.connect()
            defer { Task { await second.close() } }
            _ = try await second.request("GET", "/stats")
            #expect(second.announcedStreamLimits == [1])
        }
    }

    @Test("GOAWAY after N streams names the Nth stream, the accepted streams are answered, then the connection closes")
    func goawayAfterStreams() async throws {
        try await withEmulator({ $0.faults.goawayAfterStreams = 3 }) { fixture in
            let client = try await fixture.connect()
            for n in 0..<3 {
                #expect(try await fixture.sendAPNs(client, token: TestDevice.apns(n)).status == 200)
            }
            try await client.channel.closeFuture.get()
            // Client streams are odd: the third is stream 5.
            #expect(client.goawayLastStreamIDs == [5])
            #expect(fixture.emulator.stats().goawaysSent == 1)
        }
    }

    @Test("curl sends 7 requests through GOAWAYs every 3 streams: every one is answered once, on 3 connections")
    func curlThroughGoaway() async throws {
        try await withEmulator({ $0.faults.goawayAfterStreams = 3 }) { fixture in
            let payload = fixture.directory.appendingPathComponent("payload.json").path
            try Data(EmulatorFixture.alertPayload).write(to: URL(fileURLWithPath: payload))
            let tokens = (0..<7).map(TestDevice.apns)
            var arguments = ["-sS", "--http2", "--cacert", fixture.caFile, "-w", "%{http_code}\n", "--data-binary", "@\(payload)", "--max-time", "20"]
            for (name, value) in fixture.apnsHeaders() { arguments += ["-H", "\(name): \(value)"] }
            for token in tokens { arguments += ["-o", "/dev/null", "\(fixture.endpoint)/3/device/\(token)"] }
            let (status, output, errors) = try Curl.run(arguments)
            #expect(status == 0, "\(errors)")
            #expect(output.split(separator: "\n") == Array(repeating: "200", count: 7))
            let stats = fixture.emulator.stats()
            #expect(stats.apns.delivered == 7)
            for token in tokens { #expect(stats.apns.tokens[token]?.answers == ["200"]) }
            #expect(stats.goawaysSent >= 2)
            #expect(stats.connectionsOpened == 3)
        }
    }

    @Test("scripted REFUSED_STREAM and a dropped connection: the request is not processed, the retry succeeds")
    func refusedThenAccepted() async throws {
        var plan = FaultPlan(seed: 0)
        let refused = TestDevice.apns(10)
        let dropped = TestDevice.apns(11)
        plan.scripted[refused] = [.refusedStream]
        plan.scripted[dropped] = [.dropConnection]
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            #expect(try await fixture.sendAPNs(client, token: refused) == .reset(.refusedStream))
            #expect(try await fixture.sendAPNs(client, token: refused).status == 200)
            #expect(try await fixture.sendAPNs(client, token: dropped) == .closed)
            try await client.channel.closeFuture.get()
            let again = try await fixture.connect()
            defer { Task { await again.close() } }
            #expect(try await fixture.sendAPNs(again, token: dropped).status == 200)
            let stats = fixture.emulator.stats()
            #expect(stats.apns.tokens[refused]?.answers == ["refused_stream", "200"])
            #expect(stats.apns.tokens[dropped]?.answers == ["dropped_connection", "200"])
            #expect(stats.apns.delivered == 2)
        }
    }

    @Test("stop() sends GOAWAY and lets an answer in flight finish; then nothing listens")
    func gracefulStop() async throws {
        let fixture = try await EmulatorFixture.start { $0.faults.latencyMilliseconds = 300 }
        let client = try await fixture.connect()
        _ = try await client.request("GET", "/stats")
        async let inFlight = fixture.sendAPNs(client, token: TestDevice.apns(1))
        // Stop once the server has read the request and holds its delayed answer.
        #expect(await fixture.emulator.waitForStats { $0.apns.requests > 0 })
        await fixture.emulator.stop()
        #expect(try await inFlight.status == 200)
        #expect(client.goawayLastStreamIDs.count == 1)
        await #expect(throws: (any Error).self) { _ = try await fixture.connect() }
        await fixture.stop()
    }
}

@Suite("Stats endpoint")
struct StatsEndpointTests {
    @Test("GET /stats reports per token, per status, connections and streams; POST /stats/reset starts over")
    func statsAndReset() async throws {
        var plan = FaultPlan(seed: 0)
        plan.scripted[TestDevice.apns(2)] = [.serviceUnavailable]
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            _ = try await fixture.sendAPNs(client, token: TestDevice.apns(1))
            _ = try await fixture.sendAPNs(client, token: TestDevice.apns(2))
            _ = try await fixture.sendAPNs(client, token: TestDevice.apns(2))
            _ = try await client.request("POST", "/3/device/\(TestDevice.apns(3))", headers: fixture.apnsHeaders(), body: [])

            let response = try Curl.request("GET", "\(fixture.endpoint)/stats", caFile: fixture.caFile)
            #expect(response.status == 200)
            let stats = try JSONDecoder().decode(EmulatorStats.self, from: Data(response.body))
            #expect(stats.apns.requests == 4)
            #expect(stats.apns.delivered == 2)
            #expect(stats.apns.tokens[TestDevice.apns(1)] == {
                var entry = EmulatorStats.TokenStats()
                entry.requests = 1
                entry.delivered = 1
                entry.answers = ["200"]
                return entry
            }())
            #expect(stats.apns.tokens[TestDevice.apns(2)]?.answers == ["503 ServiceUnavailable", "200"])
            #expect(stats.apns.tokens[TestDevice.apns(3)]?.answers == ["400 PayloadEmpty"])
            #expect(stats.statuses["200"] == 2)
            #expect(stats.statuses["503"] == 1)
            #expect(stats.statuses["400"] == 1)
            // The H2 client's connection and curl's.
            #expect(stats.connectionsOpened == 2)
            #expect(stats.streams == 5)

            let reset = try Curl.request("POST", "\(fixture.endpoint)/stats/reset", caFile: fixture.caFile)
            #expect(reset.status == 200)
            let after = fixture.emulator.stats()
            #expect(after.apns.requests == 0 && after.apns.tokens.isEmpty && after.statuses.isEmpty)
            #expect(after.connectionsOpen >= 1)
            #expect(try await fixture.sendAPNs(client, token: TestDevice.apns(2)).status == 503)
        }
    }
}
