internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The sockets of one transfer loop's connections, corked (`TCP_CORK`) while curl writes a turn.
///
/// Why: libcurl 7.88 hands each HTTP/2 frame to TLS and the socket on its own, so a request is
/// two `send` calls (HEADERS, then DATA) and, on its `TCP_NODELAY` sockets, two TCP segments: a
/// turn that starts 50 requests puts 100 small segments on the wire, each paid for again by the
/// kernel on both ends. Corked, the kernel packs the frames into full segments.
///
/// When the corked bytes go out:
/// - every `requestsPerPush` requests curl is about to send (`sending()`, from the pre-request
///   callback), so the server starts on the first requests of a long turn while curl writes the
///   rest: corking a whole turn left the server idle during it and sent fewer requests per
///   second, though with less CPU;
/// - at the end of `curl_multi_perform`, before the loop waits: nothing is held past a turn, so
///   no answer waits on the cork.
///
/// Measured (docs/benchmarks.md): `pushline run` against nghttpd on loopback sent 1.3× the
/// requests per second with about three quarters of the CPU per request.
///
/// Confined to the transfer thread, like the loop: curl calls `opened`, `closing` and `sending`
/// from inside its own calls on that thread.
final class ConnectionCork {
    /// Requests written between pushes: about a full segment of small push requests, few enough
    /// that the server is never idle for long (16 and 32 measured best; 4, 8 and 64 slower).
    static let requestsPerPush = 16

    /// Connection sockets curl has open (a few: one per connection, briefly more while one is
    /// being replaced).
    private(set) var sockets: [curl_socket_t] = []
    private var corked = false
    private var sentSincePush = 0

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> ConnectionCork {
        Unmanaged<ConnectionCork>.fromOpaque(pointer).takeUnretainedValue()
    }

    func opened(_ socket: curl_socket_t) {
        // A number already listed is a socket curl closed without the callback (7.88 does for
        // an accepted socket, which HTTPS never has) and the system reused: listed once, so the
        // list stays as long as the sockets this loop has open.
        if !sockets.contains(socket) { sockets.append(socket) }
    }

    func closing(_ socket: curl_socket_t) {
        sockets.removeAll { $0 == socket }
    }

    /// Runs `body` (a `curl_multi_perform`) with every connection corked, and uncorks them after
    /// it, which sends what they hold. A socket curl opens during `body` is uncorked too (it
    /// was never corked; uncorking is harmless); one it closes is no longer listed.
    @inline(__always)
    func whileCorked(_ body: () -> Void) {
        if sockets.isEmpty {
            body()
            return
        }
        // A refusal (a socket being torn down) only loses the coalescing, never data.
        set(1)
        corked = true
        sentSincePush = 0
        body()
        corked = false
        set(0)
    }

    /// curl is about to write a request: every `requestsPerPush`-th sends what the connections
    /// hold (uncorking pushes it out; corking again holds the next ones).
    func sending() {
        guard corked else { return }
        sentSincePush &+= 1
        guard sentSincePush >= Self.requestsPerPush else { return }
        sentSincePush = 0
        set(0)
        set(1)
    }

    private func set(_ on: Int32) {
        for socket in sockets { _ = ccurl_socket_set_cork(socket, on) }
    }

    // Tests: what the kernel says of a socket.

    /// Whether TCP_CORK is set: nil when the socket cannot say.
    static func isCorked(_ socket: Int32) -> Bool? {
        let state = ccurl_socket_cork(socket)
        return state < 0 ? nil : state == 1
    }

    /// Bytes queued on the socket and not yet sent: nil where the platform cannot say.
    static func unsentBytes(_ socket: Int32) -> Int? {
        let count = ccurl_socket_unsent_bytes(socket)
        return count < 0 ? nil : Int(count)
    }
}

/// curl's socket-options callback (`CURLOPT_SOCKOPTFUNCTION`): a connection's socket was made.
let connectionCorkSocketOpened: curl_sockopt_callback = { clientp, socket, purpose in
    if let clientp, purpose == CURLSOCKTYPE_IPCXN { ConnectionCork.from(clientp).opened(socket) }
    return Int32(CURL_SOCKOPT_OK)
}

/// curl's close-socket callback (`CURLOPT_CLOSESOCKETFUNCTION`): set, it must close the socket.
let connectionCorkSocketClosing: curl_closesocket_callback = { clientp, socket in
    if let clientp { ConnectionCork.from(clientp).closing(socket) }
    return close(socket)
}
