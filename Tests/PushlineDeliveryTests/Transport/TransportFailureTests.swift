import Foundation
import Testing
@testable import PushlineDelivery

/// Timeouts, refused connections and TLS verification, against real sockets and a real server.
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(2)))
struct TransportFailureTests {
    @Test func aStalledServerGivesATimeoutResultPerRequest() async throws {
        let listener = try SilentListener()
        // A connect timeout far above the request's: the result must come from the request's.
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 10, connectTimeoutMilliseconds: 120_000))
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
            #expect(response.curlCode == 28)  // CURLE_OPERATION_TIMEDOUT
            #expect(response.status == 0)
            // The TLS handshake never finished: the request was never written.
            #expect(!response.mayHaveBeenDelivered)
        }
        #expect(elapsed < .seconds(60))
    }

    @Test func aClosedPortFailsWithoutDelivery() async throws {
        let port = try closedPort()
        let transport = try HTTP2Transport(TransportConfiguration())
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 9, url: "https://127.0.0.1:\(port)/x"))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.slot == 9)
        #expect(response.result == .failed)
        #expect(response.curlCode == 7)  // CURLE_COULDNT_CONNECT
        #expect(!response.mayHaveBeenDelivered)
    }

    @Test func anUntrustedCertificateIsRefusedWithoutCAFile() async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration())
        try await expectRefused(transport, url: server.baseURL + "/ok")
    }

    @Test func aCAFileForAnotherCertificateDoesNotMakeTheServerTrusted() async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)])
        defer { server.stop() }
        let other = server.directory.appendingPathComponent("other")
        try LocalHTTP2Server.makeCertificate(key: other.path + "-key.pem", certificate: other.path + ".pem", subjectAltName: "IP:127.0.0.1")
        let transport = try HTTP2Transport(TransportConfiguration(caFile: other.path + ".pem"))
        try await expectRefused(transport, url: server.baseURL + "/ok")
    }

    @Test func aTrustedCertificateForAnotherHostIsRefused() async throws {
        // Trusted through ca_file, but issued for a name, not 127.0.0.1: host verification.
        let server = try await LocalHTTP2Server.start(files: ["ok": Array("{}".utf8)], certificateSubjectAltName: "DNS:apns.example")
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(caFile: server.certificatePath))
        try await expectRefused(transport, url: server.baseURL + "/ok")
    }

    private func expectRefused(_ transport: HTTP2Transport, url: String) async throws {
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 1, url: url))
        let response = try #require(await responses.first)
        await transport.shutdown()
        #expect(response.result == .failed)
        #expect(response.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION
        #expect(response.status == 0)
        #expect(!response.mayHaveBeenDelivered)
    }
}
