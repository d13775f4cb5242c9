import Foundation
import Testing
@testable import PushlineDelivery

/// Timeouts, refused connections and TLS verification, against real sockets and a real server,
/// on both engines: each failure in the words both use (`failure.kind`, `end`), libcurl's own
/// code beside it where that engine has one.
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(2)))
struct TransportFailureTests {
    @Test(arguments: TransportEngine.allCases)
    func aStalledServerGivesATimeoutResultPerRequest(engine: TransportEngine) async throws {
        let listener = try SilentListener()
        // A connect timeout far above the request's: the result must come from the request's.
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 10, connectTimeoutMilliseconds: 120_000).on(engine))
        let started = ContinuousClock.now
        let requests = (0..<3).map {
            TransportRequest(slot: UInt64($0), url: "https://127.0.0.1:\(listener.port)/3/device/abc", timeoutMilliseconds: 300)
        }
        async let responses = collect(transport, count: 3)
        _ = try await transport.submit(contentsOf: requests)
        let all = await responses
        let elapsed = ContinuousClock.now - started
        await transport.shutdown()
        #expect(Set(all.map(\.slot)) == [0, 1, 2])
        for response in all {
            #expect(response.result == .timedOut)
            #expect(response.failure?.kind == .timeout, "\(response.problemDescription)")
            #expect(response.status == 0)
            // The TLS handshake never finished: the request was never written.
            #expect(response.end == .notSent && response.wireSends == 0)
            #expect(!response.mayHaveBeenDelivered && response.provenUnprocessed)
            if engine == .curl { #expect(response.curlCode == 28) }  // CURLE_OPERATION_TIMEDOUT
        }
        #expect(elapsed < .seconds(60))
    }

    @Test(arguments: TransportEngine.allCases)
    func aClosedPortFailsWithoutDelivery(engine: TransportEngine) async throws {
        let port = try closedPort()
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 9, url: "https://127.0.0.1:\(port)/x"))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.slot == 9)
        #expect(response.result == .failed)
        #expect(response.failure?.kind == .connect, "\(response.problemDescription)")
        #expect(response.end == .notSent)
        #expect(!response.mayHaveBeenDelivered)
        if engine == .curl { #expect(response.curlCode == 7) }  // CURLE_COULDNT_CONNECT
    }

    /// libcurl takes only https; the nghttp2 engine speaks only TLS with ALPN h2. Neither sends
    /// a byte of a plain-text request.
    @Test(arguments: TransportEngine.allCases)
    func aPlainHTTPURLIsRefusedUnsent(engine: TransportEngine) async throws {
        let listener = try SilentListener()
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 4, url: "http://127.0.0.1:\(listener.port)/x", timeoutMilliseconds: 5_000))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.result == .failed, "\(response.problemDescription)")
        #expect(response.end == .notSent && response.wireSends == 0 && !response.mayHaveBeenDelivered)
    }

    /// A provider's `proxy:` key: the transport goes through it (with libcurl, whatever engine
    /// was asked for). A proxy nobody listens on: the request must fail to connect, never reach
    /// the server directly.
    @Test(arguments: TransportEngine.allCases)
    func aConfiguredProxyIsUsed(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)])
        defer { server.stop() }
        var configuration = TransportConfiguration(caFile: server.certificatePath).on(engine)
        configuration.proxy = "http://127.0.0.1:\(try closedPort())"
        #expect(configuration.effectiveEngine == .curl)
        let transport = try HTTP2Transport(configuration)
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 1, method: .get, url: server.baseURL + "/ok"))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.result == .failed && response.status == 0, "\(response.result) \(response.status): the proxy was not used")
        #expect(response.failure?.kind == .connect, "\(response.problemDescription)")
        #expect(!response.mayHaveBeenDelivered)
    }

    @Test(arguments: TransportEngine.allCases)
    func anUntrustedCertificateIsRefusedWithoutCAFile(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        try await expectRefused(transport, url: server.baseURL + "/ok", engine: engine)
    }

    @Test(arguments: TransportEngine.allCases)
    func aCAFileForAnotherCertificateDoesNotMakeTheServerTrusted(engine: TransportEngine) async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)])
        defer { server.stop() }
        let other = server.directory.appendingPathComponent("other")
        try LocalHTTP2Server.makeCertificate(key: other.path + "-key.pem", certificate: other.path + ".pem", subjectAltName: "IP:127.0.0.1")
        let transport = try HTTP2Transport(TransportConfiguration(caFile: other.path + ".pem").on(engine))
        try await expectRefused(transport, url: server.baseURL + "/ok", engine: engine)
    }

    @Test(arguments: TransportEngine.allCases)
    func aTrustedCertificateForAnotherHostIsRefused(engine: TransportEngine) async throws {
        // Trusted through ca_file, but issued for a name, not 127.0.0.1: host verification.
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)], certificateSubjectAltName: "DNS:apns.example")
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(caFile: server.certificatePath).on(engine))
        try await expectRefused(transport, url: server.baseURL + "/ok", engine: engine)
    }

    private func expectRefused(_ transport: HTTP2Transport, url: String, engine: TransportEngine) async throws {
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 1, url: url))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.result == .failed)
        #expect(response.failure?.kind == .certificate, "\(response.problemDescription)")
        #expect(response.status == 0)
        #expect(response.end == .notSent)
        #expect(!response.mayHaveBeenDelivered)
        if engine == .curl { #expect(response.curlCode == 60) }  // CURLE_PEER_FAILED_VERIFICATION
    }
}
