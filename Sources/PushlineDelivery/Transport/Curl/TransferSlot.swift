internal import CCurl

/// One reusable easy handle and the state of the request it carries. Confined to the transfer
/// thread; curl's callbacks reach it through an unretained pointer (the pool keeps it alive).
final class TransferSlot {
    /// Replaced by a fresh handle after a request that did not end cleanly (`CurlTransferEngine.renew`):
    /// libcurl 7.88 keeps some per-handle state across transfers (its resend budget, a
    /// refused-stream flag) that would make the next request behave differently.
    var easy: UnsafeMutableRawPointer
    /// The request being sent: keeps `bodyOwner` (the body's memory) alive until completion.
    var request: TransportRequest?

    /// Where the request's URL is joined (libcurl copies it when it is set).
    private var urlBuffer = SlotStorage<CChar>(capacity: 256)
    /// The request's header list: nodes linked anew per request, pointing at shared lines and at
    /// `itemBuffer`, which holds the per-request lines. libcurl reads them during the transfer.
    private var headerNodes = SlotStorage<curl_slist>(capacity: 8)
    private var itemBuffer = SlotStorage<CChar>(capacity: 1)

    var body: [UInt8] = []
    var bodyTruncated = false
    var headerValues: [[UInt8]?]
    var anyHeaderCaptured = false

    /// Times libcurl was about to write this request on a connection (the pre-request callback
    /// let it go), its own resends included.
    var wireSends = 0
    /// The ALPN protocol of a connection the pre-request callback refused (empty: none
    /// negotiated); nil when nothing was refused.
    var refusedALPN: [UInt8]?
    /// libcurl's error buffer (`CURLOPT_ERRORBUFFER`), owned by the slot.
    let errorBuffer: UnsafeMutablePointer<CChar>

    private let maxBodyBytes: Int
    private let capturedNames: [[UInt8]]
    private let maxHeaderValueBytes: Int
    private let alpn: ALPNReader?
    private let cork: ConnectionCork

    init(easy: UnsafeMutableRawPointer, limits: SlotLimits) {
        self.easy = easy
        maxBodyBytes = limits.maxBodyBytes
        capturedNames = limits.capturedNames
        maxHeaderValueBytes = limits.maxHeaderValueBytes
        alpn = limits.alpn
        cork = limits.cork
        headerValues = Array(repeating: nil, count: limits.capturedNames.count)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Runs after `curl_easy_cleanup` of the handle (the loop frees handles before slots).
    deinit {
        errorBuffer.deallocate()
        urlBuffer.deallocate()
        headerNodes.deallocate()
        itemBuffer.deallocate()
    }

    // MARK: - The request's URL and header list, without allocating

    /// `request`'s URL as a C string in this slot's buffer (until the next call); nil when it
    /// is too long (`HTTP2Transport.check` refuses such a request first).
    func joinURL(of request: TransportRequest) -> UnsafeMutablePointer<CChar>? {
        let length = request.urlByteCount
        guard length <= TransportRequest.maxURLBytes else { return nil }
        urlBuffer.reserve(length + 1)
        let buffer = urlBuffer.base
        var position = 0
        TransportHeaderLines.copy(request.urlPrefix.utf8, to: buffer, at: &position)
        TransportHeaderLines.copy(request.urlTarget, to: buffer, at: &position)
        TransportHeaderLines.copy(request.urlSuffix.utf8, to: buffer, at: &position)
        buffer[position] = 0
        return buffer
    }

    /// `request`'s header lines as a curl list in this slot's storage (valid until the next
    /// call, while the request's shared lines live); nil when there are none. `fits` is false
    /// when there are too many lines or bytes (`HTTP2Transport.check` refuses such a request
    /// first).
    func linkHeaders(of request: TransportRequest) -> (list: UnsafeMutablePointer<curl_slist>?, fits: Bool) {
        let measure = request.headerItemsMeasure
        let lines = request.headers.count &+ measure.lines &+ (request.lastHeaders?.count ?? 0)
        guard lines <= TransportRequest.maxHeaderLines, measure.bytes <= TransportRequest.maxHeaderItemBytes else { return (nil, false) }
        guard lines > 0 else { return (nil, true) }
        // Resized only here, before the handle is given this request: libcurl reads the list
        // during the transfer.
        headerNodes.reserve(lines)
        itemBuffer.reserve(measure.bytes)
        let nodes = headerNodes.base
        let items = itemBuffer.base
        var count = 0
        func link(_ line: UnsafeMutablePointer<CChar>) {
            nodes[count] = curl_slist(data: line, next: nil)
            if count > 0 { nodes[count - 1].next = nodes + count }
            count += 1
        }
        for index in 0..<request.headers.count { link(request.headers.cString(at: index)) }
        var used = 0
        request.forEachHeaderItem { name, value in
            let line = items + used
            TransportHeaderLines.copy(name.utf8, to: items, at: &used)
            TransportHeaderLines.copy(": ".utf8, to: items, at: &used)
            TransportHeaderLines.copy(value, to: items, at: &used)
            items[used] = 0
            used &+= 1
            link(line)
        }
        if let last = request.lastHeaders {
            for index in 0..<last.count { link(last.cString(at: index)) }
        }
        return (nodes, true)
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> TransferSlot {
        Unmanaged<TransferSlot>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Clears what the previous request left, keeping the body buffer's capacity.
    func resetResponse() {
        body.removeAll(keepingCapacity: true)
        bodyTruncated = false
        wireSends = 0
        refusedALPN = nil
        errorBuffer[0] = 0
        if anyHeaderCaptured {
            for index in headerValues.indices { headerValues[index] = nil }
            anyHeaderCaptured = false
        }
    }

    /// Lets go of the request (its body owner and shared header lines). The handle keeps
    /// pointers to this slot's list until the next request sets its own; it reads them only
    /// during a transfer.
    func release() {
        request = nil
    }

    // MARK: - Before each send

    /// libcurl is about to send the request on a connection: count the send, unless the
    /// connection did not negotiate HTTP/2, which is refused before a byte of the request is
    /// written. Allocation-free unless it refuses.
    func prerequest() -> Int32 {
        if let alpn, let negotiated = alpn.negotiated(on: easy), !negotiated.isHTTP2 {
            refusedALPN = negotiated.bytes
            return Int32(CURL_PREREQFUNC_ABORT)
        }
        wireSends &+= 1
        cork.sending()
        return Int32(CURL_PREREQFUNC_OK)
    }

    /// libcurl's message for this request, bounded and reduced to printable ASCII (a hostile
    /// server's text can reach it); nil when libcurl wrote none.
    var errorDetail: String? {
        guard errorBuffer[0] != 0 else { return nil }
        var bytes: [UInt8] = []
        for index in 0..<Int(CURL_ERROR_SIZE) {
            let byte = UInt8(bitPattern: errorBuffer[index])
            if byte == 0 { break }
            bytes.append((0x20...0x7E).contains(byte) ? byte : UInt8(ascii: "?"))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether libcurl's error buffer holds exactly `text` (no allocation).
    func errorBufferEquals(_ text: StaticString) -> Bool {
        text.withUTF8Buffer { expected in
            guard expected.count <= Int(CURL_ERROR_SIZE) else { return false }
            for (index, byte) in expected.enumerated() where UInt8(bitPattern: errorBuffer[index]) != byte { return false }
            return errorBuffer[expected.count] == 0
        }
    }

    func appendBody(_ bytes: UnsafeRawBufferPointer) {
        let room = maxBodyBytes - body.count
        if bytes.count > room {
            bodyTruncated = true
            if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
        } else {
            body.append(contentsOf: bytes)
        }
    }

    /// One header line as curl hands it (`name: value\r\n`, or a status line).
    func takeHeaderLine(_ line: UnsafeRawBufferPointer) {
        // A status line starts a new response (an interim 1xx, a retried request): only the
        // final response's headers count.
        if line.starts(with: "HTTP/".utf8) {
            resetHeaders()
            return
        }
        guard !capturedNames.isEmpty, let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        for (index, name) in capturedNames.enumerated() where name.count == colon {
            guard Self.equalsLowercased(line.prefix(colon), name) else { continue }
            var start = colon + 1
            var end = line.count
            while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
            while end > start, Self.isTrailingSpace(line[end - 1]) { end -= 1 }
            // Too long to be a value we use: reported as absent rather than cut.
            headerValues[index] = end - start <= maxHeaderValueBytes ? Array(line[start..<end]) : nil
            anyHeaderCaptured = true
            return
        }
    }

    private func resetHeaders() {
        guard anyHeaderCaptured else { return }
        for index in headerValues.indices { headerValues[index] = nil }
        anyHeaderCaptured = false
    }

    private static func isTrailingSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func equalsLowercased(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercased: [UInt8]) -> Bool {
        var index = 0
        for byte in bytes {
            let folded = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if folded != lowercased[index] { return false }
            index += 1
        }
        return true
    }
}

struct SlotLimits {
    let maxBodyBytes: Int
    /// Captured header names, ASCII-lowercased.
    let capturedNames: [[UInt8]]
    let maxHeaderValueBytes: Int
    /// Reads a connection's ALPN protocol; nil when libcurl's TLS library does not allow it.
    let alpn: ALPNReader?
    let cork: ConnectionCork
}

/// curl's write callback: the response body, bounded. Returning less than asked would abort the
/// transfer, so bytes over the bound are counted as taken and dropped.
let transferSlotWriteBody: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else { return 0 }
    guard let data, total > 0 else { return total }
    TransferSlot.from(userdata).appendBody(UnsafeRawBufferPointer(start: data, count: total))
    return total
}

/// curl's pre-request callback (`CURLOPT_PREREQFUNCTION`): once per send, on the transfer thread.
let transferSlotPrerequest: curl_prereq_callback = { clientp, _, _, _, _ in
    guard let clientp else { return Int32(CURL_PREREQFUNC_ABORT) }
    return TransferSlot.from(clientp).prerequest()
}

/// curl's header callback: one complete header line per call.
let transferSlotHeaderLine: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else { return 0 }
    guard let data, total > 0 else { return total }
    TransferSlot.from(userdata).takeHeaderLine(UnsafeRawBufferPointer(start: data, count: total))
    return total
}

/// Storage a slot rewrites for each request: it grows to the largest request the slot has
/// carried (a few hundred bytes for a push request, so a thousand slots stay small) and is never
/// resized while libcurl reads it.
struct SlotStorage<Element> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    /// Room for `count` elements; what was stored is not kept.
    mutating func reserve(_ count: Int) {
        guard count > capacity else { return }
        base.deallocate()
        capacity = Swift.max(count, capacity &* 2)
        base = .allocate(capacity: capacity)
    }

    func deallocate() { base.deallocate() }
}
