internal import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif

/// One TLS connection carrying one nghttp2 client session, on a non-blocking socket.
///
/// TLS runs over memory BIOs: nghttp2's frames for a turn are gathered in `frames`, encrypted
/// with one `SSL_write` (records of up to 16 KB), and the ciphertext leaves in one `send`. That is
/// the cork lesson without the cork: many requests, few records, one system call.
///
/// Confined to the transfer thread. nghttp2 calls back into it (user data: this object,
/// unretained; the engine keeps it alive) only from inside `nghttp2_session_send` and
/// `nghttp2_session_mem_recv`, which this class calls.
final class HTTP2Connection {
    enum State: Equatable {
        case connecting
        case handshaking
        case open
        case closed
    }

    let token: UInt64
    // Unowned without a check: the engine owns its origins (kept for its life) and its
    // connections, and nghttp2 calls back only while the engine drives it. A checked `unowned`
    // cost an atomic pair in every callback.
    unowned(unsafe) let engine: NGHTTP2TransferEngine
    unowned(unsafe) let origin: HTTP2Origin
    private(set) var state = State.connecting
    private var fd: Int32 = -1
    private var addresses: [SocketAddress]
    private var addressIndex = 0
    private var lastConnectProblem = ""
    private var ssl: OpaquePointer?
    private var readBIO: OpaquePointer?
    private var writeBIO: OpaquePointer?
    private(set) var session: OpaquePointer?

    /// Streams submitted and not yet closed by nghttp2 (a cancelled one stays until then: its
    /// body may still be framed). Each knows its index here.
    @exclusivity(unchecked) private(set) var streams: [HTTP2Stream] = []
    /// Plain HTTP/2 frames gathered this turn, encrypted at `flush`.
    @exclusivity(unchecked) var frames: [UInt8] = []
    /// Ciphertext not yet taken by the socket.
    @exclusivity(unchecked) private var socketOut: [UInt8] = []
    private var socketOutSent = 0
    private var pollingWritable = false
    /// Streams whose HEADERS were gathered since the socket last took bytes.
    @exclusivity(unchecked) var gatheredStreams: [HTTP2Stream] = []

    /// A GOAWAY's last-stream-id: streams above it were not processed; nothing new is started.
    @exclusivity(unchecked) var goawayLastStreamID: Int32?
    /// The stream whose response header block is being decoded (0: none).
    @exclusivity(unchecked) var headerBlockStream: Int32 = 0
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, once known.
    @exclusivity(unchecked) var remoteMaxStreams = Int.max
    /// Monotonic nanoseconds: the connect + handshake deadline, the last bytes read, a PING
    /// waiting for its ACK.
    private(set) var connectDeadline: UInt64
    private(set) var lastReadAt: UInt64
    private(set) var pingSentAt: UInt64?
    /// Set from inside a callback; acted on once nghttp2 has returned.
    @exclusivity(unchecked) var failureFromCallback: TransportFailure?
    /// The connection died because an answer's header block could not be decoded: the stream
    /// in `headerBlockStream` broke it.
    private var brokenByAnswer = false
    /// nghttp2 ended the session with a GOAWAY of ours (its error code): close once written.
    private(set) var endedBySession: UInt32?

    /// nghttp2 wrote a GOAWAY (from its callback).
    func sentGoaway(errorCode: UInt32) {
        endedBySession = errorCode
        if errorCode == UInt32(NGHTTP2_COMPRESSION_ERROR.rawValue), headerBlockStream != 0 { brokenByAnswer = true }
    }

    /// Why a session nghttp2 ended is over, once its GOAWAY is out (nil while it goes on).
    var sessionEndedFailure: TransportFailure? {
        guard let code = endedBySession, code != UInt32(NGHTTP2_NO_ERROR.rawValue) else { return nil }
        if brokenByAnswer {
            return TransportFailure(.connectionLost, "an answer's header block from \(origin.authorityText) could not be decoded (HPACK): the connection was closed")
        }
        return TransportFailure(.connectionLost, "HTTP/2 connection error towards \(origin.authorityText): \(HTTP2ErrorName.name(code))")
    }

    init(token: UInt64, engine: NGHTTP2TransferEngine, origin: HTTP2Origin, addresses: [SocketAddress], now: UInt64, connectTimeout: UInt64) {
        self.token = token
        self.engine = engine
        self.origin = origin
        self.addresses = addresses
        connectDeadline = now &+ connectTimeout
        lastReadAt = now
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Calls `body` with the connection a callback's user data names, borrowed: no retain and
    /// release per callback (nghttp2 calls back several times per request). `otherwise` when
    /// there is none.
    @inline(__always)
    static func with<Result>(_ pointer: UnsafeMutableRawPointer?, otherwise: Result, _ body: (HTTP2Connection) -> Result) -> Result {
        guard let pointer else { return otherwise }
        return Unmanaged<HTTP2Connection>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// Streams this connection may still start.
    var room: Int {
        guard state == .open, goawayLastStreamID == nil, !wantsSessionEnd else { return 0 }
        return Swift.max(0, Swift.min(engine.streamsPerConnection, remoteMaxStreams) - streams.count)
    }

    // MARK: - Connecting

    /// Tries the addresses in order; returns a failure once none is left.
    func connect() -> TransportFailure? {
        while addressIndex < addresses.count {
            let address = addresses[addressIndex]
            addressIndex += 1
            let socket = cnghttp2_socket(address.family)
            guard socket >= 0 else {
                lastConnectProblem = Self.errnoText(-socket)
                continue
            }
            let result = address.bytes.withUnsafeBytes { cnghttp2_connect(socket, $0.baseAddress, UInt32($0.count)) }
            if result < 0 {
                lastConnectProblem = Self.errnoText(-result)
                Glibc.close(socket)
                continue
            }
            fd = socket
            engine.poller.add(socket, token: token, writable: true)
            pollingWritable = true
            if result == 0 { return startTLS() }
            return nil
        }
        return TransportFailure(.connect, "cannot connect to \(origin.authorityText): \(lastConnectProblem.isEmpty ? "no address" : lastConnectProblem)")
    }

    private func retryNextAddress() -> TransportFailure? {
        engine.poller.remove(fd)
        Glibc.close(fd)
        fd = -1
        pollingWritable = false
        return connect()
    }

    private func startTLS() -> TransportFailure? {
        state = .handshaking
        guard let ssl = SSL_new(engine.tls.context), let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            return TransportFailure(.tls, "TLS setup failed: \(TLSClientContext.errorText())")
        }
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        SSL_set_bio(ssl, readBIO, writeBIO)
        SSL_set_connect_state(ssl)
        let host = origin.host
        if AddressResolver.isIPLiteral(host) {
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = cnghttp2_ssl_set_host_name(ssl, host)
            _ = SSL_set1_host(ssl, host)
        }
        return handshake()
    }

    private func handshake() -> TransportFailure? {
        guard let ssl else { return TransportFailure(.tls, "no TLS session") }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            if let failure = flushCiphertext() { return failure }
            return openSession()
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
            return flushCiphertext()
        }
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(verify))
            cnghttp2_ssl_clear_errors()
            return TransportFailure(.certificate, "the TLS certificate of \(origin.authorityText) does not verify: \(reason)")
        }
        let text = TLSClientContext.errorText()
        return TransportFailure(.tls, "TLS handshake with \(origin.authorityText) failed: \(text.isEmpty ? "the connection closed" : text)")
    }

    private func openSession() -> TransportFailure? {
        guard let ssl else { return TransportFailure(.tls, "no TLS session") }
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        let chosen = protocolName.map { [UInt8](UnsafeBufferPointer(start: $0, count: Int(length))) } ?? []
        guard chosen == [UInt8(ascii: "h"), UInt8(ascii: "2")] else {
            let name = chosen.isEmpty ? "nothing" : String(decoding: chosen.map { (0x21...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            return TransportFailure(.notHTTP2, "the server at https://\(origin.authorityText) does not speak HTTP/2 (ALPN gave \(name))")
        }
        var created: OpaquePointer?
        guard nghttp2_session_client_new2(&created, engine.callbacks, opaque, engine.options) == 0, let created else {
            return TransportFailure(.other, "nghttp2_session_client_new2 failed")
        }
        session = created
        state = .open
        // No server push; a large window so answers are never held back by ours.
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(NGHTTP2TransferEngine.maxAnswerHeaderListBytes)),
        ]
        _ = nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        _ = nghttp2_session_set_local_window_size(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20)
        engine.connectionOpened(self)
        return nil
    }

    // MARK: - Events

    /// The socket is readable (or failed): read everything, decrypt, hand it to nghttp2.
    func readable(now: UInt64) -> TransportFailure? {
        var closedByPeer = false
        while true {
            let buffer = engine.readBuffer
            let got = cnghttp2_read(fd, buffer.baseAddress, buffer.count)
            if got > 0 {
                lastReadAt = now
                pingSentAt = nil
                _ = BIO_write(readBIO, buffer.baseAddress, Int32(got))
                if got < buffer.count { break }
                continue
            }
            let code = Int32(truncatingIfNeeded: -got)
            if got == 0 {
                closedByPeer = true
            } else if code != EAGAIN && code != EWOULDBLOCK && code != EINTR {
                return TransportFailure(.connectionLost, "the connection to \(origin.authorityText) failed: \(Self.errnoText(Int32(-got)))")
            }
            break
        }
        switch state {
        case .connecting, .closed:
            return nil
        case .handshaking:
            if let failure = handshake() { return failure }
            if state != .open { return closedByPeer ? TransportFailure(.tls, "\(origin.authorityText) closed the connection during the TLS handshake") : nil }
        case .open:
            break
        }
        // A connection the server closed is read to its end at once: nothing may wait for a
        // later turn on a connection that is going.
        pausing = !closedByPeer
        defer { pausing = true }
        if let failure = decrypt() { return failure }
        if closedByPeer { return TransportFailure(.connectionLost, "\(origin.authorityText) closed the connection") }
        return nil
    }

    /// Plaintext out of TLS, into nghttp2, a slice at a time: once a turn's worth of streams
    /// has ended, the rest waits in `pending` and the loop runs the lane's turn first, so the
    /// requests that replace the answered ones reach the server while this side reads the rest
    /// (the two sides work at once instead of taking turns).
    func decrypt() -> TransportFailure? {
        guard let ssl else { return nil }
        if pendingCount > 0 {
            let remaining = pendingCount
            pendingCount = 0
            let (failure, paused) = pending.withUnsafeBytes { feed($0.baseAddress!.advanced(by: pendingStart), remaining) }
            if let failure { return failure }
            if paused { return nil }
        }
        while true {
            let buffer = engine.plainBuffer
            let got = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            if got <= 0 {
                let error = SSL_get_error(ssl, got)
                if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return nil }
                if error == SSL_ERROR_ZERO_RETURN { return TransportFailure(.connectionLost, "\(origin.authorityText) closed the TLS session") }
                return TransportFailure(.connectionLost, "TLS error from \(origin.authorityText): \(TLSClientContext.errorText())")
            }
            let (failure, paused) = feed(UnsafeRawPointer(buffer.baseAddress!), Int(got))
            if let failure { return failure }
            if paused { return nil }
        }
    }

    /// Plaintext still to be given to nghttp2 (its first `pendingCount` bytes from
    /// `pendingStart`).
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private(set) var pendingCount = 0

    /// Whether `feed` may pause (not while a closed connection is read to its end).
    private var pausing = true

    /// Bytes nghttp2 reads between checks of how many streams have ended. Small, because a
    /// server answers a burst of requests with all their HEADERS first and all their ends
    /// (END_STREAM, often empty DATA frames of 9 bytes) last: with large slices every end of a
    /// 100-stream burst lands in one slice, the turn never pauses, and the connection runs in
    /// lock-step with its window (measured: 100 answers read, then 100 requests in one write).
    private static let sliceBytes = 128

    /// Gives nghttp2 `count` bytes from `bytes`, pausing (the rest kept) once the turn has
    /// `NGHTTP2TransferEngine.completionsPerTurn` ended streams.
    private func feed(_ bytes: UnsafeRawPointer, _ count: Int) -> (TransportFailure?, paused: Bool) {
        guard let session else { return (nil, false) }
        var offset = 0
        while offset < count {
            let slice = Swift.min(Self.sliceBytes, count - offset)
            let taken = nghttp2_session_mem_recv(session, (bytes + offset).assumingMemoryBound(to: UInt8.self), slice)
            if let failure = failureFromCallback { return (failure, false) }
            if taken < 0 {
                let name = String(cString: nghttp2_strerror(Int32(taken)))
                if Int32(taken) == NGHTTP2_ERR_HEADER_COMP.rawValue, headerBlockStream != 0 {
                    brokenByAnswer = true
                    return (TransportFailure(.connectionLost, "an answer's header block from \(origin.authorityText) could not be decoded (\(name))"), false)
                }
                return (TransportFailure(.connectionLost, "HTTP/2 error from \(origin.authorityText): \(name)"), false)
            }
            offset += slice
            if offset < count, pausing, engine.turnIsFull {
                let rest = UnsafeRawBufferPointer(start: bytes + offset, count: count - offset)
                pending.removeAll(keepingCapacity: true)
                pending.append(contentsOf: rest)
                pendingStart = 0
                pendingCount = rest.count
                return (nil, true)
            }
        }
        return (nil, false)
    }

    /// The socket is writable: a connect finished, or the socket takes more ciphertext.
    func writable() -> TransportFailure? {
        switch state {
        case .connecting:
            let error = cnghttp2_connect_result(fd)
            if error != 0 {
                lastConnectProblem = Self.errnoText(error)
                return retryNextAddress()
            }
            return startTLS()
        case .handshaking, .open:
            return flushSocket()
        case .closed:
            return nil
        }
    }

    // MARK: - Writing

    /// Submits one request; returns false when nghttp2 refused it (it is then not sent).
    func submit(_ stream: HTTP2Stream, headers: UnsafeMutableBufferPointer<nghttp2_nv>) -> Int32 {
        guard let session else { return -1 }
        let hasBody = stream.request.method != .get && !stream.request.body.isEmpty
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: stream.opaque), read_callback: http2ReadBody)
        let id = hasBody
            ? nghttp2_submit_request(session, nil, headers.baseAddress, headers.count, &provider, stream.opaque)
            : nghttp2_submit_request(session, nil, headers.baseAddress, headers.count, nil, stream.opaque)
        if id > 0 {
            stream.id = id
            stream.connection = self
            stream.connectionIndex = streams.count
            streams.append(stream)
        }
        return id
    }

    /// Gathers what nghttp2 has to send, encrypts it and gives it to the socket.
    func flush() -> TransportFailure? {
        guard state == .open, let session, let ssl else { return state == .handshaking ? flushSocket() : nil }
        // Enough waits in the socket: let nghttp2 hold the rest until it drains.
        if socketOut.count - socketOutSent < NGHTTP2TransferEngine.maxQueuedCiphertext, nghttp2_session_want_write(session) != 0 {
            let result = nghttp2_session_send(session)
            if let failure = failureFromCallback { return failure }
            if result != 0 {
                return TransportFailure(.connectionLost, "HTTP/2 error towards \(origin.authorityText): \(String(cString: nghttp2_strerror(result)))")
            }
        }
        if !frames.isEmpty {
            var offset = 0
            while offset < frames.count {
                let written = frames.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32($0.count - offset)) }
                guard written > 0 else {
                    return TransportFailure(.tls, "TLS write to \(origin.authorityText) failed: \(TLSClientContext.errorText())")
                }
                offset += Int(written)
            }
            frames.removeAll(keepingCapacity: true)
        }
        return flushCiphertext()
    }

    /// Moves the ciphertext out of the write BIO and sends it.
    private func flushCiphertext() -> TransportFailure? {
        guard let writeBIO else { return nil }
        let pending = Int(BIO_ctrl_pending(writeBIO))
        if pending > 0 {
            if socketOutSent > 0, socketOutSent == socketOut.count {
                socketOut.removeAll(keepingCapacity: true)
                socketOutSent = 0
            }
            let start = socketOut.count
            socketOut.append(contentsOf: repeatElement(0, count: pending))
            let got = socketOut.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress! + start, Int32(pending)) }
            if got < Int32(pending) { socketOut.removeLast(pending - Int(Swift.max(got, 0))) }
        }
        return flushSocket()
    }

    private func flushSocket() -> TransportFailure? {
        while socketOutSent < socketOut.count {
            let sent = socketOut.withUnsafeBytes { cnghttp2_write(fd, $0.baseAddress! + socketOutSent, $0.count - socketOutSent) }
            if sent > 0 {
                socketOutSent += sent
                markGatheredWritten()
                continue
            }
            let code = Int32(truncatingIfNeeded: -sent)
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR {
                setPollingWritable(true)
                return nil
            }
            return TransportFailure(.connectionLost, "the connection to \(origin.authorityText) failed: \(Self.errnoText(Int32(-sent)))")
        }
        socketOut.removeAll(keepingCapacity: true)
        socketOutSent = 0
        setPollingWritable(state == .connecting)
        return nil
    }

    private func markGatheredWritten() {
        guard !gatheredStreams.isEmpty else { return }
        for stream in gatheredStreams where !stream.written {
            stream.written = true
            engine.wireSends &+= 1
        }
        gatheredStreams.removeAll(keepingCapacity: true)
    }

    private func setPollingWritable(_ writable: Bool) {
        guard writable != pollingWritable, fd >= 0 else { return }
        pollingWritable = writable
        engine.poller.modify(fd, token: token, writable: writable)
    }

    // MARK: - Keep-alive

    /// Sends a PING after `interval` without a byte from the server; a failure once one has gone
    /// unanswered for `timeout`.
    func keepAlive(now: UInt64, interval: UInt64, timeout: UInt64) -> TransportFailure? {
        guard state == .open, let session else { return nil }
        if let sent = pingSentAt {
            if now &- sent >= timeout {
                return TransportFailure(.connectionLost, "\(origin.authorityText) did not answer a PING within \(timeout / 1_000_000_000) s")
            }
            return nil
        }
        if now &- lastReadAt >= interval {
            _ = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
            pingSentAt = now
        }
        return nil
    }

    /// When `keepAlive` next has something to do.
    func nextKeepAlive(interval: UInt64, timeout: UInt64) -> UInt64 {
        guard state == .open else { return state == .closed ? .max : connectDeadline }
        if let sent = pingSentAt { return sent &+ timeout }
        return lastReadAt &+ interval
    }

    // MARK: - Closing

    /// Cancels one stream (a timeout or cancellation): RST_STREAM CANCEL. The stream stays in
    /// the table until nghttp2 closes it (its callbacks may still read it); its response is
    /// the caller's.
    func cancel(_ stream: HTTP2Stream) {
        if let session, state == .open { _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, UInt32(NGHTTP2_CANCEL.rawValue)) }
    }

    /// The stream nghttp2 knows by `id` (its user data), if it is one of ours.
    func stream(_ id: Int32) -> HTTP2Stream? {
        guard let session, let pointer = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        return HTTP2Stream.from(pointer)
    }

    /// Calls `body` with stream `id`, borrowed (as `with(_:otherwise:_:)`); `otherwise` when it
    /// is not one of ours.
    @inline(__always)
    func withStream<Result>(_ id: Int32, otherwise: Result, _ body: (HTTP2Stream) -> Result) -> Result {
        guard let session, let pointer = nghttp2_session_get_stream_user_data(session, id) else { return otherwise }
        return Unmanaged<HTTP2Stream>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// nghttp2 closed the stream: it leaves the table.
    func remove(_ stream: HTTP2Stream) {
        let index = stream.connectionIndex
        guard index < streams.count, streams[index] === stream else { return }
        let last = streams.removeLast()
        if index < streams.count {
            streams[index] = last
            last.connectionIndex = index
        }
    }

    /// Ends the connection: every stream still open gets its one end; frees TLS, nghttp2 and the
    /// socket. `graceful`: a GOAWAY first, sent best effort.
    func close(graceful: Bool) -> [(HTTP2Stream, TransportStreamEnd)] {
        guard state != .closed else { return [] }
        if graceful, let session, state == .open {
            _ = nghttp2_session_terminate_session(session, UInt32(NGHTTP2_NO_ERROR.rawValue))
            _ = flush()
        }
        state = .closed
        var ends: [(HTTP2Stream, TransportStreamEnd)] = []
        for stream in streams.sorted(by: { $0.id < $1.id }) where !stream.finished {
            let id = stream.id
            let end: TransportStreamEnd
            if stream.complete {
                end = .answered
            } else if brokenByAnswer, id == headerBlockStream {
                end = .answerBrokeConnection
            } else if let last = goawayLastStreamID, id > last {
                end = .refused
            } else if stream.written {
                end = .lost
            } else {
                end = .notSent
            }
            ends.append((stream, end))
        }
        streams = []
        gatheredStreams = []
        if let session { nghttp2_session_del(session) }
        session = nil
        if let ssl { SSL_free(ssl) }  // frees both BIOs
        ssl = nil
        readBIO = nil
        writeBIO = nil
        if fd >= 0 {
            engine.poller.remove(fd)
            Glibc.close(fd)
            fd = -1
        }
        return ends
    }

    static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

extension HTTP2Connection {
    /// nghttp2 reads no more: the session is over (it is ending it for a connection error, or
    /// both sides finished); what it still has to write is flushed before the close.
    var wantsSessionEnd: Bool {
        guard let session else { return false }
        return endedBySession != nil || nghttp2_session_want_read(session) == 0
    }
}
