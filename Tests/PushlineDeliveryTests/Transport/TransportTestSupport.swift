import Foundation
@testable import PushlineDelivery

/// Reads completions until `count` have arrived (or the sequence ends).
func collect(_ transport: HTTP2Transport, count: Int) async -> [TransportResponse] {
    var responses: [TransportResponse] = []
    for await batch in transport.completions {
        responses.append(contentsOf: batch)
        if responses.count >= count { break }
    }
    return responses
}

/// Bytes that stay alive as long as the requests pointing into them (the `bodyOwner`).
final class BodyArena: @unchecked Sendable {
    let pointer: UnsafeMutableRawBufferPointer
    init(_ bytes: [UInt8]) {
        pointer = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
        pointer.copyBytes(from: bytes)
    }
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: pointer[range]) }
    deinit { pointer.deallocate() }
}

/// A TCP listener that never accepts: connections complete in the backlog and the TLS handshake
/// never gets an answer, which is how a stalled server looks.
final class SilentListener {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw LocalHTTP2Server.ServerError("listen failed") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        _ = fd
    }

    deinit { close(fd) }
}

/// A port nothing listens on (bound, then closed).
func closedPort() throws -> Int {
    let listener = try SilentListener()
    return listener.port
}

extension TransportConfiguration {
    /// This configuration, sent by `engine` (the conformance suites run each test on both).
    func on(_ engine: TransportEngine) -> TransportConfiguration {
        var configuration = self
        configuration.engine = engine
        return configuration
    }
}
