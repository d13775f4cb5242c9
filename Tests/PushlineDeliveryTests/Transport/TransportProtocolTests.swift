import Foundation
import PushlineHostileServer
import Testing
@testable import PushlineDelivery

/// What the transport refuses, and what it says about it: a server that does not speak HTTP/2,
/// an expired certificate; and the CA bundle read once per transport.
@Suite(.timeLimit(.minutes(2)))
struct TransportProtocolTests {
    @Test(arguments: [true, false])
    func aServerThatDoesNotSpeakHTTP2IsRefusedBeforeTheRequestIsWritten(offersALPN: Bool) async throws {
        let server = try await HTTP1OnlyServer.start(offersALPN: offersALPN)
        let paths = ["/3/device/a", "/3/device/b"]
        let (responses, counters) = try await sendWire(
            paths: paths, to: server.baseURL,
            configuration: TransportConfiguration(connections: 1, streamsPerConnection: 10, caFile: server.certificatePath)
        )
        let bytes = server.bytesReceived
        await server.stop()

        let protocolName = offersALPN ? "http/1.1" : "nothing"
        for response in responses {
            #expect(response.result == .notHTTP2)
            #expect(response.curlErrorDetail == "the server at https://127.0.0.1:\(server.port) does not speak HTTP/2 (ALPN gave \(protocolName))")
            #expect(response.problemDescription == response.curlErrorDetail)
            #expect(response.status == 0)
            #expect(response.wireSends == 0)
            #expect(!response.mayHaveBeenDelivered)
            #expect(response.provenUnprocessed)
        }
        // Not one byte of a request reached the server.
        #expect(bytes == 0)
        #expect(counters.wireSends == 0)
    }

    @Test func anExpiredCertificateIsNamedAsSuch() async throws {
        let identity = try HostileTLSIdentity.make(notBefore: Date().addingTimeInterval(-3 * 86_400), seconds: 86_400)
        let server = try await HostileHTTP2Server.start(identity: identity)
        let (responses, _) = try await sendWire(
            paths: ["/3/device/a"], to: server.baseURL,
            configuration: TransportConfiguration(caFile: server.certificatePath)
        )
        let counts = server.counts
        await server.stop()
        let response = try #require(responses.first)
        #expect(response.result == .failed)
        #expect(response.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION
        #expect(response.curlErrorDetail == "SSL certificate problem: certificate has expired")
        #expect(response.problemDescription.contains("certificate has expired"))
        #expect(response.wireSends == 0 && !response.mayHaveBeenDelivered)
        #expect(counts.received == 0)
    }

    @Test func theCABundleIsReadOncePerTransportNotPerConnection() async throws {
        let server = try await HostileHTTP2Server.start(HostilePlan(maxConcurrentStreams: 1))
        // One stream per connection: each concurrent request needs a connection of its own.
        let transport = try HTTP2Transport(TransportConfiguration(connections: 4, streamsPerConnection: 1, caFile: server.certificatePath))
        let bundle = try #require(transport.trustBundlePath)
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
        await server.stop()
        #expect(responses.count == 4)
        for response in responses {
            #expect(response.result == .response && response.status == 200, "\(response.problemDescription)")
        }
        // At least one connection opened after the bundle was gone verified the server (how many
        // more curl opens depends on how fast the answers come, not on the bundle).
        #expect(transport.counters.connectionsOpened >= 2)
    }

    @Test func withoutCAFileTheBuiltInBundleIsKeptAndItsDirectoryDroppedOnlyWhenTheBundleExists() throws {
        let present = CABundleChoice(trustAnchors: nil, defaultBundlePath: "/proc/self/status")
        #expect(present.caInfo == nil && present.clearCAPath)
        let missing = CABundleChoice(trustAnchors: nil, defaultBundlePath: "/nonexistent/ca.pem")
        #expect(missing.caInfo == nil && !missing.clearCAPath)
        let unknown = CABundleChoice(trustAnchors: nil, defaultBundlePath: nil)
        #expect(!unknown.clearCAPath)
    }
}

/// Webhook receivers and token endpoints may speak only HTTP/1.1: with `allowsHTTP1` the same
/// server's answer is taken, over HTTP/1.1.
@Suite(.timeLimit(.minutes(2)))
struct TransportHTTP1Tests {
    @Test(arguments: [true, false])
    func anHTTP1ServerIsAnsweredWhenAllowed(offersALPN: Bool) async throws {
        let server = try await HTTP1OnlyServer.start(offersALPN: offersALPN)
        var configuration = TransportConfiguration(connections: 2, streamsPerConnection: 10, caFile: server.certificatePath)
        configuration.allowsHTTP1 = true
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
