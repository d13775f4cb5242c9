internal import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/2 engine: nghttp2 driven directly over OpenSSL on non-blocking sockets, in the
/// transfer thread's epoll loop (docs/delivery.md, "The HTTP/2 engine").
///
/// Every request ends in exactly one `TransportStreamEnd`, and the engine never sends a request
/// twice: a refused, lost or reset stream is reported, and the lane decides.
final class NGHTTP2TransferEngine: TransferEngine {
    /// Our SETTINGS_MAX_HEADER_LIST_SIZE, enforced on every answer (RFC 9113 §6.5.2's measure):
    /// an answer over it is reset alone.
    static let maxAnswerHeaderListBytes = 16_384
    /// Body bytes read from one answer at most; past it the stream is reset (its status stands).
    static let maxAnswerBodyBytes = 1 << 20
    /// Plain frames gathered for one write, and ciphertext waiting for the socket, at most:
    /// beyond them nghttp2 holds its frames until the socket drains.
    static let maxGatheredFrames = 1 << 20
    static let maxQueuedCiphertext = 1 << 20
    /// A PING after this long without a byte from the server; the connection is dead when it
    /// goes unanswered for `pingTimeout`.
    static let pingInterval: UInt64 = 30_000_000_000
    static let pingTimeout: UInt64 = 10_000_000_000
    /// Streams ended in one turn before reading pauses for the lane's turn (`HTTP2Connection.decrypt`).
    static let completionsPerTurn = 32

    /// This turn has ended enough streams: reading pauses so the lane can start their
    /// replacements.
    var turnIsFull: Bool { completed.count >= Self.completionsPerTurn }

    let configuration: TransportConfiguration
    let poller: EventPoller
    let tls: TLSClientContext
    let callbacks: OpaquePointer
    let options: OpaquePointer
    private let resolver: AddressResolver
    let streamsPerConnection: Int
    let maxResponseBodyBytes: Int
    /// The lowercase names the lanes read, one after the other in `capturedNameBytes`: matched
    /// against every answer field without touching an array per name.
    private let capturedNameBytes: [UInt8]
    private let capturedNameSpans: [(start: Int, count: Int)]
    private let capturedNameStrings: [String]
    private let maxHeaderValueBytes: Int
    private let connectTimeout: UInt64
    /// Socket reads and TLS plaintext land here (one of each per thread, reused).
    let readBuffer: UnsafeMutableRawBufferPointer
    let plainBuffer: UnsafeMutableRawBufferPointer

    private var origins: [String: HTTP2Origin] = [:]
    private var connections: [UInt64: HTTP2Connection] = [:]
    private var nextToken: UInt64 = 1
    /// Requests taken and not yet answered, each knowing its index here.
    @exclusivity(unchecked) private var inFlight: [HTTP2Stream] = []
    @exclusivity(unchecked) private var completed: [TransportResponse] = []
    private var nextDeadline: UInt64 = .max
    private var connectionsOpened = 0
    var wireSends: UInt64 = 0
    /// The last request's URL prefix and what it parsed to: a lane's requests share one.
    private var cachedPrefix: String?
    private var cachedOrigin: (origin: HTTP2Origin, pathStart: Int)?
    private var lastOrigin: HTTP2Origin?
    /// Where a request's fields are laid out for `nghttp2_submit_request` (which copies them).
    private var scratch = HTTP2FieldScratch()
    private var fieldBlocks: [ObjectIdentifier: HTTP2FieldBlock] = [:]
    private var recentBlocks: (HTTP2FieldBlock?, HTTP2FieldBlock?) = (nil, nil)

    init(configuration: TransportConfiguration, trustAnchors: TrustAnchors?) throws(TransportError) {
        self.configuration = configuration
        poller = try EventPoller()
        do {
            tls = try TLSClientContext(caFile: configuration.caFile)
        } catch {
            poller.close()
            throw error
        }
        var options: OpaquePointer?
        guard let callbacks = HTTP2Callbacks.make(), nghttp2_option_new(&options) == 0, let options else {
            poller.close()
            throw TransportError.curlSetup("nghttp2 setup failed")
        }
        self.callbacks = callbacks
        self.options = options
        // Until the server's SETTINGS arrive, assume no more streams than we would open.
        nghttp2_option_set_peer_max_concurrent_streams(options, UInt32(configuration.streamsPerConnection))
        resolver = AddressResolver(signal: poller.signal, pinnedAddresses: configuration.pinnedAddresses)
        streamsPerConnection = configuration.streamsPerConnection
        maxResponseBodyBytes = configuration.maxResponseBodyBytes
        capturedNameStrings = configuration.capturedHeaderNames
        var nameBytes: [UInt8] = []
        var nameSpans: [(start: Int, count: Int)] = []
        for name in configuration.capturedHeaderNames {
            let lower = Array(name.lowercased().utf8)
            nameSpans.append((nameBytes.count, lower.count))
            nameBytes += lower
        }
        capturedNameBytes = nameBytes
        capturedNameSpans = nameSpans
        maxHeaderValueBytes = configuration.maxHeaderValueBytes
        let connectMilliseconds = configuration.connectTimeoutMilliseconds > 0 ? configuration.connectTimeoutMilliseconds : 300_000
        connectTimeout = UInt64(connectMilliseconds) * 1_000_000
        readBuffer = .allocate(byteCount: 64 << 10, alignment: 16)
        plainBuffer = .allocate(byteCount: 64 << 10, alignment: 16)
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    // MARK: - TransferEngine

    func start(_ request: consuming TransportRequest, into completions: inout [TransportResponse]) {
        guard let (origin, pathStart) = origin(of: request) else {
            completions.append(.unsent(request, failure: TransportFailure(.other, "the URL must be https://host[:port]/path")))
            return
        }
        let now = Self.now()
        let deadline = request.timeoutMilliseconds > 0 ? now &+ UInt64(request.timeoutMilliseconds) &* 1_000_000 : nil
        let stream = HTTP2Stream(request: request, deadline: deadline, origin: origin)
        stream.pathStart = pathStart
        stream.engineIndex = inFlight.count
        inFlight.append(stream)
        if let deadline { nextDeadline = Swift.min(nextDeadline, deadline) }
        origin.pending.append(stream)
        schedule(origin, now: now)
        take(into: &completions)
    }

    func perform(into completions: inout [TransportResponse]) {
        let now = Self.now()
        handleResolved(now: now)
        if now >= nextDeadline { expire(now: now) }
        for connection in Array(connections.values) {
            let failure: TransportFailure?
            switch connection.state {
            case .connecting, .handshaking:
                failure = now >= connection.connectDeadline
                    ? TransportFailure(.connect, "connecting to \(connection.origin.authorityText) timed out after \(connectTimeout / 1_000_000) ms") : nil
            case .open:
                failure = connection.keepAlive(now: now, interval: Self.pingInterval, timeout: Self.pingTimeout)
            case .closed:
                failure = nil
            }
            if let failure { connectionFailed(connection, failure, now: now) }
        }
        sweep(now: now)
        take(into: &completions)
    }

    func wait(timeoutMilliseconds: Int32, into completions: inout [TransportResponse]) {
        var now = Self.now()
        flushAll(now: now)
        // Answers read but not yet given to nghttp2 (a full turn paused them): on with them
        // now that the turn's new requests are on their way.
        for connection in Array(connections.values) where connection.pendingCount > 0 && connection.state == .open {
            if let failure = connection.decrypt() {
                connectionFailed(connection, failure, now: now)
            } else {
                endIfSessionOver(connection, now: now)
            }
        }
        take(into: &completions)
        guard completions.isEmpty else { return }
        let ownTimer = millisecondsUntil(nextTimer(), from: now)
        let timeout = timeoutMilliseconds < 0 ? ownTimer : Swift.min(Int64(timeoutMilliseconds), ownTimer)
        // No timer at all: epoll waits for the sockets and the wake-up only.
        poller.wait(timeoutMilliseconds: timeout >= Int64(Int32.max) ? -1 : Int32(Swift.max(0, timeout))) { token, readable, writable in
            guard let connection = connections[token] else { return }
            now = Self.now()
            if writable, connection.state != .closed, let failure = connection.writable() {
                connectionFailed(connection, failure, now: now)
            }
            if readable, connection.state != .closed, let failure = connection.readable(now: now) {
                connectionFailed(connection, failure, now: now)
            }
            endIfSessionOver(connection, now: now)
        }
        now = Self.now()
        handleResolved(now: now)
        sweep(now: now)
        take(into: &completions)
    }

    func cancelAll(into completions: inout [TransportResponse]) {
        for stream in inFlight {
            stream.connection?.cancel(stream)
            finish(stream, .cancelled, failure: nil)
        }
        take(into: &completions)
    }

    var inFlightCount: Int { inFlight.count }

    func takeCounters() -> (connectionsOpened: Int, wireSends: UInt64) {
        defer {
            connectionsOpened = 0
            wireSends = 0
        }
        return (connectionsOpened, wireSends)
    }

    func wake() { poller.signal.signal() }

    func close() {
        for connection in connections.values {
            for (stream, end) in connection.close(graceful: true) { finish(stream, end, failure: nil) }
        }
        connections = [:]
        origins = [:]
        nghttp2_session_callbacks_del(callbacks)
        nghttp2_option_del(options)
        poller.close()
        readBuffer.deallocate()
        plainBuffer.deallocate()
        scratch.deallocate()
    }

    // MARK: - Origins and connections

    /// The request's origin and where its path starts in its URL (prefix, target and suffix
    /// read as one). A lane's URL prefix names the origin (cached by the prefix); a Web Push
    /// request's whole URL is its target, parsed per request.
    private func origin(of request: TransportRequest) -> (HTTP2Origin, Int)? {
        if let cachedPrefix, cachedPrefix == request.urlPrefix, let cachedOrigin {
            return (cachedOrigin.origin, cachedOrigin.pathStart)
        }
        let prefix = Array(request.urlPrefix.utf8)
        if let parsed = HTTP2Origin.parse(prefix, needsPathStart: true) {
            let origin = origin(parsed)
            cachedPrefix = request.urlPrefix
            cachedOrigin = (origin, parsed.pathStart)
            return (origin, parsed.pathStart)
        }
        // A Web Push lane's requests go to one push service: a URL that starts with the last
        // origin's `https://authority/` is that origin, found without copying the URL.
        if prefix.isEmpty, let last = lastOrigin, let start = Self.pathStart(of: request.urlTarget, ifAt: last) {
            return (last, start)
        }
        var url = prefix
        url.append(contentsOf: request.urlTarget)
        url.append(contentsOf: request.urlSuffix.utf8)
        guard let parsed = HTTP2Origin.parse(url, needsPathStart: false) else { return nil }
        return (origin(parsed), parsed.pathStart)
    }

    /// Where the path starts in `url` when it is `https://` + `origin`'s authority + `/` or
    /// `?` (scheme case-folded, authority byte for byte as the origin was first written).
    static func pathStart(of url: UnsafeRawBufferPointer, ifAt origin: HTTP2Origin) -> Int? {
        let scheme = "https://".utf8
        let end = scheme.count &+ origin.authority.count
        guard url.count > end, url[end] == UInt8(ascii: "/") || url[end] == UInt8(ascii: "?") else { return nil }
        for (index, byte) in scheme.enumerated() where (0x41...0x5A).contains(url[index]) ? url[index] | 0x20 != byte : url[index] != byte {
            return nil
        }
        for (index, byte) in origin.authority.enumerated() where url[scheme.count &+ index] != byte { return nil }
        return end
    }

    private func origin(_ parsed: (host: String, port: Int, authority: [UInt8], pathStart: Int)) -> HTTP2Origin {
        if let last = lastOrigin, last.port == parsed.port, last.host == parsed.host { return last }
        let key = "\(parsed.host):\(parsed.port)"
        let origin: HTTP2Origin
        if let known = origins[key] {
            origin = known
        } else {
            origin = HTTP2Origin(host: parsed.host, port: parsed.port, authority: parsed.authority)
            origins[key] = origin
        }
        lastOrigin = origin
        return origin
    }

    /// Starts waiting requests on connections with room; opens a connection when they have none
    /// and the configuration allows another.
    private func schedule(_ origin: HTTP2Origin, now: UInt64) {
        while let stream = origin.pending.first {
            if stream.finished {
                _ = origin.pending.popFirst()
                continue
            }
            guard let connection = origin.connections.first(where: { $0.state == .open && $0.room > 0 }) else { break }
            _ = origin.pending.popFirst()
            submit(stream, on: connection)
        }
        guard !origin.pending.isEmpty, !origin.resolving else { return }
        let live = origin.connections.filter { $0.state != .closed && $0.goawayLastStreamID == nil }
        let coming = live.filter { $0.state != .open }.count * streamsPerConnection
        guard coming < origin.pending.count, live.count < configuration.connections else { return }
        openConnection(origin, now: now)
    }

    private func openConnection(_ origin: HTTP2Origin, now: UInt64) {
        if let pinned = resolver.pinnedAddresses(host: origin.host, port: origin.port) {
            connect(origin, addresses: pinned, now: now)
        } else if AddressResolver.isIPLiteral(origin.host) {
            connect(origin, addresses: AddressResolver.lookup(host: origin.host, port: origin.port, numericOnly: true).addresses, now: now)
        } else {
            origin.resolving = true
            resolver.resolve(host: origin.host, port: origin.port)
        }
    }

    private func handleResolved(now: UInt64) {
        for result in resolver.takeResults() {
            guard let origin = origins["\(result.host):\(result.port)"] else { continue }
            origin.resolving = false
            if result.addresses.isEmpty {
                failWaiting(origin, TransportFailure(.resolve, "cannot resolve \(result.host): \(result.problem)"))
            } else {
                connect(origin, addresses: result.addresses, now: now)
            }
        }
    }

    private func connect(_ origin: HTTP2Origin, addresses: [SocketAddress], now: UInt64) {
        let connection = HTTP2Connection(token: nextToken, engine: self, origin: origin, addresses: addresses, now: now, connectTimeout: connectTimeout)
        nextToken &+= 1
        connections[connection.token] = connection
        origin.connections.append(connection)
        if let failure = connection.connect() { connectionFailed(connection, failure, now: now) }
    }

    /// The TLS handshake chose h2: the session is open.
    func connectionOpened(_ connection: HTTP2Connection) {
        connectionsOpened += 1
        schedule(connection.origin, now: Self.now())
    }

    private func connectionFailed(_ connection: HTTP2Connection, _ failure: TransportFailure, now: UInt64) {
        let neverOpened = connection.session == nil
        for (stream, end) in connection.close(graceful: false) {
            finish(stream, end, failure: end == .answered ? nil : failure)
        }
        remove(connection)
        let origin = connection.origin
        // Nothing could be opened and nothing else is open: what waits fails with the reason
        // (not sent), and the lane decides when to try again.
        if neverOpened, !origin.connections.contains(where: { $0.state == .open }) {
            failWaiting(origin, failure)
        } else {
            schedule(origin, now: now)
        }
    }

    private func remove(_ connection: HTTP2Connection) {
        connections[connection.token] = nil
        connection.origin.connections.removeAll { $0 === connection }
    }

    private func failWaiting(_ origin: HTTP2Origin, _ failure: TransportFailure) {
        while let stream = origin.pending.popFirst() {
            if !stream.finished { finish(stream, .notSent, failure: failure) }
        }
    }

    /// Closes connections a GOAWAY retired once their streams are done; starts what waits.
    private func sweep(now: UInt64) {
        for connection in Array(connections.values) where connection.goawayLastStreamID != nil && connection.streams.isEmpty {
            _ = connection.close(graceful: false)
            remove(connection)
        }
        for origin in origins.values where !origin.pending.isEmpty { schedule(origin, now: now) }
    }

    private func flushAll(now: UInt64) {
        for connection in Array(connections.values) where connection.state != .closed && connection.state != .connecting {
            if let failure = connection.flush() {
                connectionFailed(connection, failure, now: now)
            } else {
                endIfSessionOver(connection, now: now)
            }
        }
    }

    /// nghttp2 ended the session itself (a connection error it found in what it read, such as
    /// an answer HPACK cannot decode): its GOAWAY goes out, then the connection closes and its
    /// streams end (the one whose answer broke it `.answerBrokeConnection`).
    private func endIfSessionOver(_ connection: HTTP2Connection, now: UInt64) {
        guard connection.state == .open, connection.wantsSessionEnd else { return }
        let failure = connection.flush() ?? connection.sessionEndedFailure
            ?? TransportFailure(.connectionLost, "the HTTP/2 session with \(connection.origin.authorityText) ended")
        connectionFailed(connection, failure, now: now)
    }

    // MARK: - Streams

    private func submit(_ stream: HTTP2Stream, on connection: HTTP2Connection) {
        guard layOutFields(of: stream, origin: connection.origin) else {
            finish(stream, .notSent, failure: TransportFailure(.other, "the request's header fields are too large"))
            return
        }
        let id = connection.submit(stream, headers: UnsafeMutableBufferPointer(start: scratch.fields, count: scratch.count))
        if id <= 0 {
            finish(stream, .notSent, failure: TransportFailure(.other, "nghttp2 refused the request: \(String(cString: nghttp2_strerror(id)))"))
        }
    }

    /// The request's fields in `scratch`: pseudo-headers, the path, the shared lines' fields
    /// (laid out once per lines object), the per-request items, `content-length`.
    private func layOutFields(of stream: HTTP2Stream, origin: HTTP2Origin) -> Bool {
        // Read in place: a copy of the request would retain and release each of its references.
        scratch.reset()
        guard scratch.fits(bytes: stream.request.urlByteCount &+ 64, fields: 4) else { return false }
        scratch.pseudoHeaders(method: stream.request.method.name, authority: origin.authorityStorage, authorityLength: origin.authority.count)
        // The path: the URL (prefix, target, suffix) after its first `pathStart` bytes.
        let path = scratch.beginValue()
        var skip = stream.pathStart
        var prefix = stream.request.urlPrefix
        prefix.withUTF8 { bytes in
            scratch.write(UnsafeBufferPointer(rebasing: bytes[Swift.min(skip, bytes.count)...]))
            skip -= Swift.min(skip, bytes.count)
        }
        let target = stream.request.urlTarget
        scratch.write(UnsafeRawBufferPointer(rebasing: target[Swift.min(skip, target.count)...]))
        skip -= Swift.min(skip, target.count)
        if !stream.request.urlSuffix.isEmpty {
            var suffix = stream.request.urlSuffix
            suffix.withUTF8 { scratch.write(UnsafeBufferPointer(rebasing: $0[Swift.min(skip, $0.count)...])) }
        }
        scratch.endPath(from: path)
        let shared = fieldBlock(for: stream.request.headers)
        guard scratch.fits(bytes: 0, fields: shared.count) else { return false }
        scratch.setCount(shared.append(to: scratch.fields, at: scratch.count))
        var fits = true
        stream.request.forEachHeaderItem { name, value in
            guard fits, scratch.fits(bytes: name.utf8.count &+ value.count) else {
                fits = false
                return
            }
            scratch.field(name: name, value: value)
        }
        guard fits else { return false }
        if let last = stream.request.lastHeaders {
            let block = fieldBlock(for: last)
            guard scratch.fits(bytes: 0, fields: block.count) else { return false }
            scratch.setCount(block.append(to: scratch.fields, at: scratch.count))
        }
        if stream.request.method != .get {
            guard scratch.fits(bytes: 24) else { return false }
            scratch.contentLength(stream.request.body.count)
        }
        return true
    }

    /// The field block of `lines`, made on first use: a lane's requests share a few lines
    /// objects (its route's, its current credential's), so the last two are kept at hand and
    /// the rest in a small cache.
    private func fieldBlock(for lines: TransportHeaderLines) -> HTTP2FieldBlock {
        if let block = recentBlocks.0, block.lines === lines { return block }
        if let block = recentBlocks.1, block.lines === lines {
            recentBlocks = (block, recentBlocks.0)
            return block
        }
        let block: HTTP2FieldBlock
        if let known = fieldBlocks[ObjectIdentifier(lines)] {
            block = known
        } else {
            if fieldBlocks.count >= 64 { fieldBlocks.removeAll() }
            block = HTTP2FieldBlock(lines)
            fieldBlocks[ObjectIdentifier(lines)] = block
        }
        recentBlocks = (block, recentBlocks.0)
        return block
    }

    /// A captured response header's value, trimmed of surrounding blanks, when it is one we
    /// report, short enough, and free of control bytes (`lenient`: nghttp2 found the field
    /// invalid; a value that is only badly padded is still read, anything worse is dropped, so
    /// a `Retry-After` that does not parse is ignored and the answer stays an answer).
    func capture(name: UnsafeBufferPointer<UInt8>, value: UnsafeRawBufferPointer, into stream: HTTP2Stream, lenient: Bool = false) {
        let index = capturedNameBytes.withUnsafeBufferPointer { names in
            capturedNameSpans.firstIndex { span in
                span.count == name.count && memcmp(names.baseAddress! + span.start, name.baseAddress!, span.count) == 0
            }
        }
        if let index {
            var start = 0
            var end = value.count
            while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
            while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
            let trimmed = UnsafeRawBufferPointer(rebasing: value[start..<end])
            guard trimmed.count <= maxHeaderValueBytes else { return }
            if lenient, trimmed.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return }
            if stream.captured.isEmpty { stream.captured = Array(repeating: nil, count: capturedNameSpans.count) }
            stream.captured[index] = Array(trimmed)
            return
        }
    }

    /// nghttp2 closed a stream (from its callback).
    func streamEnded(_ stream: HTTP2Stream, _ end: TransportStreamEnd) {
        finish(stream, end, failure: nil)
    }

    private func finish(_ stream: HTTP2Stream, _ end: TransportStreamEnd, failure: TransportFailure?) {
        guard !stream.finished else { return }
        stream.finished = true
        let index = stream.engineIndex
        if index < inFlight.count, inFlight[index] === stream {
            let last = inFlight.removeLast()
            if index < inFlight.count {
                inFlight[index] = last
                last.engineIndex = index
            }
        }
        completed.append(stream.response(end, capturedNames: capturedNameStrings, failure: failure))
        stream.connection = nil
    }

    /// Requests past their deadline end `.timedOut`: reset on the wire when they were started.
    private func expire(now: UInt64) {
        var next = UInt64.max
        for stream in inFlight {
            guard let deadline = stream.deadline else { continue }
            guard deadline <= now else {
                next = Swift.min(next, deadline)
                continue
            }
            let milliseconds = stream.request.timeoutMilliseconds
            let failure = TransportFailure(.timeout, "no answer within \(milliseconds) ms")
            if let connection = stream.connection {
                connection.cancel(stream)
                finish(stream, stream.written ? .lost : .notSent, failure: failure)
            } else {
                finish(stream, .notSent, failure: failure)
            }
        }
        nextDeadline = next
    }

    private func nextTimer() -> UInt64 {
        var next = nextDeadline
        for connection in connections.values {
            next = Swift.min(next, connection.nextKeepAlive(interval: Self.pingInterval, timeout: Self.pingTimeout))
        }
        return next
    }

    private func millisecondsUntil(_ instant: UInt64, from now: UInt64) -> Int64 {
        guard instant != .max else { return Int64.max }
        guard instant > now else { return 0 }
        return Int64((instant - now + 999_999) / 1_000_000)
    }

    private func take(into completions: inout [TransportResponse]) {
        guard !completed.isEmpty else { return }
        completions.append(contentsOf: completed)
        completed.removeAll(keepingCapacity: true)
    }
}
