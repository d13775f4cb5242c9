import Foundation
import Testing
@testable import PushlineDelivery

/// The libcurl engine corks its connections while curl writes (Transport/Curl/ConnectionCork.swift;
/// docs/libcurl-7.88.md, pitfall 10). Quirk: libcurl 7.88 hands each HTTP/2 frame to TLS and the
/// socket on its own, two segments per request. Fix: TCP_CORK while curl writes a turn, pushed
/// every `requestsPerPush` requests and at the turn's end (the first test shows both on real
/// sockets).
@Suite("Transport: connections corked while curl writes")
struct ConnectionCorkTests {
    /// A connected pair of TCP sockets on loopback: what curl's connection socket is.
    private struct LoopbackPair: ~Copyable {
        let client: Int32
        let server: Int32

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
            guard bound == 0, listen(listener, 1) == 0 else { throw CancellationError() }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) } }
            let server = connected == 0 ? accept(listener, nil, nil) : -1
            guard server >= 0 else {
                close(client)
                throw CancellationError()
            }
            // As libcurl sets it on its connections.
            var on: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            self.client = client
            self.server = server
        }

        deinit {
            close(client)
            close(server)
        }

        /// Reads exactly `count` bytes on the server side (blocking; the test's data is tiny).
        func received(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var offset = 0
            while offset < count {
                let read = bytes.withUnsafeMutableBytes { Glibc.read(server, $0.baseAddress! + offset, count - offset) }
                guard read > 0 else { break }
                offset += read
            }
            return Array(bytes[..<offset])
        }
    }

    static var kernelReportsUnsentBytes: Bool {
        guard let pair = try? LoopbackPair() else { return false }
        return ConnectionCork.unsentBytes(pair.client) != nil && ConnectionCork.isCorked(pair.client) != nil
    }

    private static func write(_ socket: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(socket, $0.baseAddress, $0.count) }
    }

    @Test(.enabled(if: ConnectionCorkTests.kernelReportsUnsentBytes, "needs TCP_CORK and SIOCOUTQNSD (Linux)"))
    func corkedBytesWaitForThePushOrTheEndOfTheTurn() throws {
        let pair = try LoopbackPair()
        let other = try LoopbackPair()
        let cork = ConnectionCork()
        cork.opened(pair.client)
        cork.opened(other.client)
        cork.opened(pair.client)
        #expect(cork.sockets == [pair.client, other.client])

        // The kernel sends corked bytes on its own after 200 ms; an attempt that a stalled
        // machine let run past that says nothing, so it is tried again (at most five times).
        var heldAttempts = 0
        for _ in 0..<5 where heldAttempts == 0 {
            cork.whileCorked {
                #expect(ConnectionCork.isCorked(pair.client) == true && ConnectionCork.isCorked(other.client) == true)
                Self.write(pair.client, "HEADERS")
                for _ in 1..<ConnectionCork.requestsPerPush { cork.sending() }
                guard ConnectionCork.unsentBytes(pair.client) == 7 else { return }
                heldAttempts += 1
                // The request that completes a push's worth sends what is held, and corks again.
                cork.sending()
                #expect(ConnectionCork.unsentBytes(pair.client) == 0)
                #expect(ConnectionCork.isCorked(pair.client) == true)
                Self.write(other.client, "DATA")
            }
            #expect(pair.received(7) == Array("HEADERS".utf8))
        }
        #expect(heldAttempts == 1, "the kernel never held a corked write (five attempts)")
        // Without a held attempt, nothing was written to the other socket: reading it would wait.
        guard heldAttempts == 1 else { return }
        // The end of the turn uncorks, which sends the rest.
        #expect(ConnectionCork.isCorked(pair.client) == false && ConnectionCork.isCorked(other.client) == false)
        #expect(ConnectionCork.unsentBytes(other.client) == 0)
        #expect(other.received(4) == Array("DATA".utf8))

        // Outside a turn nothing is corked or pushed.
        cork.sending()
        #expect(ConnectionCork.isCorked(pair.client) == false)
        cork.closing(pair.client)
        #expect(cork.sockets == [other.client])
    }
}

/// The cork against a real server: curl's sockets come and go through the loop's callbacks.
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(4)))
struct ConnectionCorkServerTests {
    /// Each request waits for the previous answer, so every turn ends with a request corked;
    /// each is answered (that the end of a turn uncorks is the suite above's check: a timing
    /// check here failed under the full suite's load, where 100 answers took 81 s), and the
    /// socket curl opened is closed by the cork's close callback at shutdown.
    @Test func requestsOneAtATimeAreAnsweredAndTheSocketIsClosedAtShutdown() async throws {
        let server = try await LocalHTTP2Server.start(files: ["ok": Array(#"{"ok":true}"#.utf8)])
        defer { server.stop() }
        let transport = try HTTP2Transport(TransportConfiguration(connections: 1, streamsPerConnection: 10, caFile: server.certificatePath).on(.curl))
        let arena = BodyArena(Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        var answered = 0
        for slot in 0..<20 {
            async let response = collect(transport, count: 1)
            try await transport.submit(TransportRequest(
                slot: UInt64(slot), url: server.baseURL + "/ok", headerLines: ["content-type: application/json"],
                body: arena.slice(0..<arena.pointer.count), bodyOwner: arena))
            answered += await response.count { $0.status == 200 }
        }
        let openDuringRun = server.connectionsFromThisProcess()
        await transport.shutdown()
        #expect(answered == 20)
        #expect(openDuringRun == 1)
        // curl closed its socket through the cork's close callback, which must close it.
        #expect(server.connectionsFromThisProcess() == 0)
        #expect(transport.counters.connectionsOpened == 1)
    }
}
