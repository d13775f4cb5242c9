import Foundation
import PushlineHostileServer
import Testing
@testable import PushlineDelivery

/// What the transport refuses, and what it says about it: a server that does not speak HTTP/2,
/// an expired certificate; and the CA bundle read once per transport. Both engines.
@Suite(.timeLimit(.minutes(2)))
struct TransportProtocolTests {
    @Test(arguments: [true, false], TransportEngine.allCases)
    func aServerThatDoesNotSpeakHTTP2IsRefusedBeforeTheRequestIsWritten(offersALPN: Bool, engine: TransportEngine) async throws {
        let server = try await HTTP1OnlyServer.start(offersALPN: offersALPN)
        let paths = ["/3/device/a", "/3/device/b"]
        let (responses, counters) = try await sendWire(
            paths: paths, to: server.baseURL,
            configuration: TransportConfiguration(connections: 1, streamsPerConnection: 10, caFile: server.certificatePath).on(engine)
        )
        let bytes = server.bytesReceived
        await server.stop()

        // What ALPN chose depends on what the client offered: libcurl offers h2 and http/1.1 (the
        // server takes http/1.1), the nghttp2 engine only h2 (the server takes nothing).
        let protocolName = offersALPN && engine == .curl ? "http/1.1" : "nothing"
        let sentence = "the server at https://127.0.0.1:\(server.port) does not speak HTTP/2 (ALPN gave \(protocolName))"
        for response in responses {
            #expect(response.result == .notHTTP2)
            #expect(response.failure?.kind == .notHTTP2)
            #expect(response.problemDescription.hasPrefix(sentence), "\(response.problemDescription)")
            #expect(response.status == 0)
            #expect(response.end == .notSent && response.wireSends == 0)
            #expect(!response.mayHaveBeenDelivered)
            #expect(response.provenUnprocessed)
            if engine == .curl { #expect(response.curlErrorDetail == sentence) }
        }
        // Not one byte of a request reached the server.
        #expect(bytes == 0)
        #expect(counters.wireSends == 0)
    }

    @Test(arguments: TransportEngine.allCases)
    func anExpiredCertificateIsNamedAsSuch(engine: TransportEngine) async throws {
        let identity = try HostileTLSIdentity.make(notBefore: Date().addingTimeInterval(-3 * 86_400), seconds: 86_400)
        let server = try await HostileHTTP2Server.start(identity: identity)
        let (responses, _) = try await sendWire(
            paths: ["/3/device/a"], to: server.baseURL,
            configuration: TransportConfiguration(caFile: server.certificatePath).on(engine)
        )
        let counts = server.counts
        await server.stop()
        let response = try #require(responses.first)
        #expect(response.result == .failed)
        #expect(response.failure?.kind == .certificate)
        #expect(response.problemDescription.contains("certificate has expired"), "\(response.problemDescription)")
        #expect(response.end == .notSent && response.wireSends == 0 && !response.mayHaveBeenDelivered)
        #expect(counts.received == 0)
        if engine == .curl {
            #expect(response.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION
            #expect(response.curlErrorDetail == "SSL certificate problem: certificate has expired")
        }
    }

    @Test(arguments: TransportEngine.allCases)
    func theCABundleIsReadOncePerTransportNotPerConnection(engine: TransportEngine) async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(maxConcurrentStreams: 1))
        // One stream per connection: each concurrent request needs a connection of its own.
        // libcurl reads the combined bundle the transport wrote; the nghttp2 engine reads
        // `ca_file` itself, so here it gets a copy the test may empty.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-ca-copy-\(UUID().uuidString).pem").path
        try FileManager.default.copyItem(atPath: server.certificatePath, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 4, streamsPerConnection: 1, caFile: copy).on(engine))
        let bundle = engine == .curl ? try #require(transport.trustBundlePath) : copy
        #expect(engine == .curl || transport.trustBundlePath == nil)
        async let first = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 0, method: .get, url: server.baseURL + "/first"))
        #expect(await first.first?.status == 200)
        // Emptied: a connection that read it again could not verify the server.
        #expect(truncate(bundle, 0) == 0)
        let requests = (1...4).map { TransportRequest(slot: UInt64($0), method: .get, url: server.baseURL + "/after/\($0)") }
        async let rest = collect(transport, count: requests.count)
        _ = try await transport.submit(contentsOf: requests)
        let responses = await rest
        await transport.shutdown()
        let counts = server.counts
        await server.stop()
        #expect(responses.count == 4)
        for response in responses {
            #expect(response.result == .response && response.status == 200, "\(response.problemDescription)")
        }
        // At least one connection opened after the bundle was gone verified the server (how many
        // more an engine opens depends on how fast the answers come, not on the bundle).
        #expect(transport.counters.connectionsOpened >= 2)
        #expect(transport.counters.connectionsOpened == counts.connections)
    }
}

/// Webhook receivers and token endpoints may speak only HTTP/1.1: with `allowsHTTP1` the same
/// server's answer is taken, over HTTP/1.1.
@Suite(.timeLimit(.minutes(2)))
struct TransportHTTP1Tests {
    /// Whatever engine is asked for: HTTP/1.1 is libcurl's (`effectiveEngine`).
    @Test(arguments: [true, false], TransportEngine.allCases)
    func anHTTP1ServerIsAnsweredWhenAllowed(offersALPN: Bool, engine: TransportEngine) async throws {
        let server = try await HTTP1OnlyServer.start(offersALPN: offersALPN)
        var configuration = TransportConfiguration(connections: 2, streamsPerConnection: 10, caFile: server.certificatePath).on(engine)
        configuration.allowsHTTP1 = true
        #expect(configuration.effectiveEngine == .curl)
        let paths = (0..<6).map { "/webhooks/sms/\($0)" }
        let (responses, counters) = try await sendWire(paths: paths, to: server.baseURL, configuration: configuration)
        let bytes = server.bytesReceived
        await server.stop()
        #expect(responses.count == paths.count)
        for response in responses {
            #expect(response.result == .response, "\(response.problemDescription)")
            #expect(response.status == 200)
            #expect(response.wireSends == 1)
        }
        #expect(bytes > 0)
        #expect(counters.wireSends == paths.count)
    }
}

@Suite struct CapturedHeadersTests {
    @Test func namesMatchWhateverTheirCaseAndOnlyWhole() {
        let headers = CapturedHeaders(names: ["apns-id", "Retry-After", "x-amzn-RequestId"], values: [Array("a".utf8), Array("7".utf8), nil])
        #expect(headers["APNS-ID"] == "a")
        #expect(headers.bytes(named: "Apns-Id") == [UInt8(ascii: "a")])
        #expect(headers["retry-after"] == "7")
        #expect(headers["x-amzn-requestid"] == nil)
        #expect(headers["apns-i"] == nil && headers["apns-idx"] == nil && headers["retry_after"] == nil)
        #expect(CapturedHeaders.none(["apns-id"])["apns-id"] == nil)
    }
}
