internal import CCurl

/// One reusable easy handle and the state of the request it carries. Confined to the transfer
/// thread; curl's callbacks reach it through an unretained pointer (the pool keeps it alive).
final class TransferSlot {
    /// Replaced by a fresh handle after a request that did not end cleanly (`TransferLoop.renew`):
    /// libcurl 7.88 keeps some per-handle state across transfers (its resend budget, a
    /// refused-stream flag) that would make the next request behave differently.
    var easy: UnsafeMutableRawPointer
    /// The request being sent: keeps `bodyOwner` (the body's memory) alive until completion.
    var request: TransportRequest?
    var headerList: UnsafeMutablePointer<curl_slist>?

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

    init(easy: UnsafeMutableRawPointer, limits: SlotLimits) {
        self.easy = easy
        maxBodyBytes = limits.maxBodyBytes
        capturedNames = limits.capturedNames
        maxHeaderValueBytes = limits.maxHeaderValueBytes
        alpn = limits.alpn
        headerValues = Array(repeating: nil, count: limits.capturedNames.count)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Runs after `curl_easy_cleanup` of the handle (the loop frees handles before slots).
    deinit { errorBuffer.deallocate() }

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

    /// Lets go of the request (and its body owner) and its header list.
    func release() {
        request = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
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
