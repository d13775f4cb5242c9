/// One request on the nghttp2 engine, from `start` to its one response: waiting for a
/// connection, then a stream on one. Confined to the transfer thread; nghttp2's callbacks reach
/// it through its connection's table.
final class HTTP2Stream {
    /// Keeps `bodyOwner` (the body's and the target's memory) alive until the response.
    let request: TransportRequest
    /// Monotonic nanoseconds after which it ends `.timedOut`; nil for none.
    let deadline: UInt64?
    /// The engine keeps its origins for its whole life (`HTTP2Connection.engine` says why unchecked).
    unowned(unsafe) let origin: HTTP2Origin

    /// Its stream id once submitted on `connection` (0 before).
    @exclusivity(unchecked) var id: Int32 = 0
    @exclusivity(unchecked) var connection: HTTP2Connection?
    /// Where it is in its connection's table and in the engine's.
    @exclusivity(unchecked) var connectionIndex = 0
    @exclusivity(unchecked) var engineIndex = 0
    /// Its HEADERS frame was handed to TLS in the connection's current write.
    @exclusivity(unchecked) var gathered = false
    /// Some of the write that carried its HEADERS reached the socket: the server may have it.
    @exclusivity(unchecked) var written = false

    @exclusivity(unchecked) var status = 0
    /// The final response's header block has begun arriving.
    @exclusivity(unchecked) var headersBegun = false
    /// END_STREAM arrived with a final status: answered.
    @exclusivity(unchecked) var complete = false
    @exclusivity(unchecked) var headerListBytes = 0
    @exclusivity(unchecked) var captured: [[UInt8]?] = []
    @exclusivity(unchecked) var body: [UInt8] = []
    @exclusivity(unchecked) var bodyBytesSeen = 0
    @exclusivity(unchecked) var bodyTruncated = false
    /// A limit of ours the answer broke: the stream was reset by us.
    @exclusivity(unchecked) var problem: TransportAnswerProblem?
    /// RST_STREAM from the server, with its error code.
    @exclusivity(unchecked) var peerResetCode: UInt32?
    /// The body's bytes nghttp2 has framed, and those copied to the connection's write.
    @exclusivity(unchecked) var bodyFramed = 0
    @exclusivity(unchecked) var bodyCopied = 0
    /// Where the path starts in `request.urlPrefix`.
    @exclusivity(unchecked) var pathStart = 0
    /// Its one response was made; later events about it are ignored.
    @exclusivity(unchecked) var finished = false

    init(request: consuming TransportRequest, deadline: UInt64?, origin: HTTP2Origin) {
        self.request = request
        self.deadline = deadline
        self.origin = origin
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> HTTP2Stream {
        Unmanaged<HTTP2Stream>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Calls `body` with the stream a data source names, borrowed (no retain and release).
    @inline(__always)
    static func with<Result>(_ pointer: UnsafeMutableRawPointer, _ body: (HTTP2Stream) -> Result) -> Result {
        Unmanaged<HTTP2Stream>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// The one response, in the words both engines use.
    func response(_ end: TransportStreamEnd, capturedNames: [String], failure: TransportFailure? = nil) -> TransportResponse {
        let result: TransportResult
        switch end {
        case .answered: result = .response
        case .cancelled: result = .cancelled
        case .notSent: result = failure?.kind == .notHTTP2 ? .notHTTP2 : (failure?.kind == .timeout ? .timedOut : .failed)
        case .lost: result = failure?.kind == .timeout ? .timedOut : .noResponse
        case .refused, .resetByPeer, .answerBrokeConnection: result = .noResponse
        case .answerRejected: result = .failed
        }
        let processed: Bool
        switch end {
        case .answered, .answerRejected, .answerBrokeConnection: processed = true
        case .notSent, .refused: processed = false
        case .lost, .resetByPeer, .cancelled: processed = written
        }
        let headers = captured.isEmpty ? CapturedHeaders.none(capturedNames) : CapturedHeaders(names: capturedNames, values: captured)
        return TransportResponse(
            slot: request.slot, result: result, status: end == .answered ? status : 0, headers: headers, body: body,
            bodyTruncated: bodyTruncated, curlCode: 0, mayHaveBeenDelivered: processed, httpVersion: written ? 3 : 0,
            wireSends: written ? 1 : 0, provenUnprocessed: !processed,
            curlErrorDetail: nil, end: end, failure: Self.failure(for: end, given: failure)
        )
    }

    /// The failure a response carries: none for an answer or a cancellation, else what the
    /// caller knew (the connection's failure) or what the end itself says.
    private static func failure(for end: TransportStreamEnd, given: TransportFailure?) -> TransportFailure? {
        switch end {
        case .answered, .cancelled: nil
        case .refused: given ?? TransportFailure(.connectionLost, "the server refused the stream unprocessed")
        case .resetByPeer(let code): given ?? TransportFailure(.connectionLost, "the server reset the stream (HTTP/2 error \(HTTP2ErrorName.name(code)))")
        case .lost: given ?? TransportFailure(.connectionLost, "the connection was lost before an answer")
        case .answerRejected(let problem): given ?? TransportFailure(.other, "the answer broke a limit: \(problem)")
        case .answerBrokeConnection:
            given ?? TransportFailure(.connectionLost, "the answer's header block could not be decoded (HPACK): its connection was closed")
        case .notSent: given ?? TransportFailure(.other, "not sent")
        }
    }
}

/// RFC 9113 §7 error code names, for messages.
enum HTTP2ErrorName {
    static func name(_ code: UInt32) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        return code < names.count ? names[Int(code)] : "0x\(String(code, radix: 16))"
    }
}
