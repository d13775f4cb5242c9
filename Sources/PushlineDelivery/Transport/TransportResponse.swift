/// What became of one request: exactly one per request the transport took.
public struct TransportResponse: Sendable {
    /// The request's `slot`.
    public let slot: UInt64
    public let result: TransportResult
    /// The HTTP status, 0 when no response arrived.
    public let status: Int
    /// The values of `TransportConfiguration.capturedHeaderNames` in the final response.
    public let headers: CapturedHeaders
    /// The response body, at most `maxResponseBodyBytes`.
    public let body: [UInt8]
    /// The server sent more body than `maxResponseBodyBytes`; the rest was read and discarded.
    public let bodyTruncated: Bool
    /// libcurl's `CURLcode` (0 = CURLE_OK; 28 = timed out).
    public let curlCode: Int32
    /// Some copy of the request may have reached the server and been processed: one was
    /// written (`wireSends` > 0) and not every written copy is proven unprocessed, or it was
    /// answered. False only when it certainly was not processed (never written, refused before
    /// being written, or its only copy proven refused), so a resend of a request with this flag
    /// set must be marked a possible duplicate.
    public let mayHaveBeenDelivered: Bool
    /// The HTTP version of the response as curl reports it (`CURL_HTTP_VERSION_2_0` = 3), 0 when
    /// none.
    public let httpVersion: Int
    /// How many times this request went on the wire: libcurl was about to write it on a
    /// connection (`CURLOPT_PREREQFUNCTION`), counting libcurl's own silent resends on a new
    /// connection (after a stream was refused, after a GOAWAY, or after the connection died under
    /// it, up to 5 per request). 0 when it was never written. The sum over all responses is what
    /// a server could have received: a send counts once handed to the connection, even if the
    /// connection died before the server read it.
    public let wireSends: Int
    /// The server did not process the request's last send, provably: it was never written
    /// (`wireSends` == 0), or the server refused its stream (RST_STREAM REFUSED_STREAM, or above
    /// a GOAWAY's last-stream-id). The nghttp2 engine sees every refusal; the libcurl engine only
    /// the one libcurl gives up on, as libcurl resends refused streams itself and cannot tell
    /// those resends from resends after a lost connection (docs/delivery.md), so a refused
    /// stream libcurl resent shows as `wireSends` > 1, not as this flag. Never true for a
    /// `.response`.
    public let provenUnprocessed: Bool
    /// libcurl's own message for this request (`CURLOPT_ERRORBUFFER`: its first error across
    /// every send, e.g. "SSL certificate problem: certificate has expired"), or for `.notHTTP2`
    /// the transport's sentence naming the server and the protocol it chose. At most 255 bytes of
    /// printable ASCII (other bytes become "?"); nil when libcurl wrote none.
    public let curlErrorDetail: String?
    /// How the request's stream ended on the wire. The nghttp2 engine knows it exactly; the
    /// libcurl engine infers it from what libcurl reports (docs/delivery.md).
    public let end: TransportStreamEnd
    /// Why the transfer failed, in terms that do not depend on the engine; nil for an answer.
    public let failure: TransportFailure?

    init(
        slot: UInt64, result: TransportResult, status: Int, headers: CapturedHeaders, body: [UInt8], bodyTruncated: Bool,
        curlCode: Int32, mayHaveBeenDelivered: Bool, httpVersion: Int, wireSends: Int, provenUnprocessed: Bool,
        curlErrorDetail: String?, end: TransportStreamEnd? = nil, failure: TransportFailure? = nil
    ) {
        self.slot = slot
        self.result = result
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyTruncated = bodyTruncated
        self.curlCode = curlCode
        self.mayHaveBeenDelivered = mayHaveBeenDelivered
        self.httpVersion = httpVersion
        self.wireSends = wireSends
        self.provenUnprocessed = provenUnprocessed
        self.curlErrorDetail = curlErrorDetail
        self.failure = failure
        if let end {
            self.end = end
        } else if result == .cancelled {
            self.end = .cancelled
        } else if result == .response, status > 0 {
            self.end = .answered
        } else if wireSends == 0 {
            self.end = .notSent
        } else if provenUnprocessed {
            self.end = .refused
        } else {
            self.end = .lost
        }
    }

    /// libcurl sent this request more than once by itself (`wireSends` > 1). A response to it
    /// may be a second delivery: libcurl cannot say whether the earlier copies were refused
    /// or lost with a connection after the server processed them.
    public var resentByLibcurl: Bool { wireSends > 1 }

    /// libcurl's text for `curlCode`, for messages.
    public var curlErrorDescription: String { CurlText.description(of: curlCode) }

    /// What went wrong, for messages: the failure's own words, else `curlErrorDetail` when
    /// libcurl said more than its code's text, else that text.
    public var problemDescription: String { failure?.detail ?? curlErrorDetail ?? curlErrorDescription }
}

/// How one stream ended: exactly one of these per request (docs/delivery.md, "The HTTP/2
/// engine"). What the lane may do next follows from it: a refused or unsent request is resent
/// without a mark; a lost or reset one may have been processed, so a resend is marked.
public enum TransportStreamEnd: Sendable, Equatable {
    /// A complete response arrived (any status).
    case answered
    /// Never written to a connection (no connection could be made, a limit of ours refused the
    /// request, shutdown came first): not processed.
    case notSent
    /// Written, and the server proved it did not process it: RST_STREAM REFUSED_STREAM, or a
    /// stream id above a GOAWAY's last-stream-id (RFC 9113 §6.8, §8.7).
    case refused
    /// The server reset the stream with this HTTP/2 error code (not REFUSED_STREAM): it may have
    /// processed the request.
    case resetByPeer(errorCode: UInt32)
    /// Written, then the connection died, the request timed out, or a GOAWAY covered it, with no
    /// answer: it may have been processed.
    case lost
    /// The answer broke a limit of ours (header list size, body size, bytes a header may not
    /// hold); the stream alone was reset. The server answered, so it processed the request.
    case answerRejected(TransportAnswerProblem)
    /// The answer's header block could not be decoded (an HPACK failure is a connection error,
    /// RFC 9113 §4.3): its connection died with it. The server processed the request.
    case answerBrokeConnection
    /// Shutdown cancelled it; `TransportResponse.mayHaveBeenDelivered` says whether it was
    /// written first.
    case cancelled
}

/// Which limit of ours an answer broke.
public enum TransportAnswerProblem: Sendable, Equatable {
    case headerListTooLarge
    case bodyTooLarge
    case badHeaderBytes
}

/// Why a transfer failed, the same words whichever engine sent it.
public struct TransportFailure: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The host name did not resolve.
        case resolve
        /// No TCP connection could be made (refused, unreachable, connect timeout).
        case connect
        /// The TLS handshake failed for a reason other than the certificate.
        case tls
        /// The server's certificate or host name did not verify (or the trust store could not be
        /// read): configuration, not the network.
        case certificate
        /// ALPN did not choose h2.
        case notHTTP2
        /// The per-request timeout passed.
        case timeout
        /// The connection broke the HTTP/2 protocol or died under the request.
        case connectionLost
        /// Anything else (out of memory, a library refusing a call).
        case other
    }

    public let kind: Kind
    /// Printable ASCII, at most a few hundred bytes: safe to log.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}

/// How a transfer ended, before any provider's meaning is given to the status.
public enum TransportResult: Sendable, Equatable {
    /// A complete HTTP response (any status; `status` > 0).
    case response
    /// The transfer ended without a status: a refused, reset or lost stream (`end` says which;
    /// the libcurl engine may see a reset or GOAWAY only as CURLE_OK with status 0). Never a
    /// success; see `mayHaveBeenDelivered`.
    case noResponse
    /// The per-request timeout passed (CURLE_OPERATION_TIMEDOUT).
    case timedOut
    /// Any other curl failure (connection refused, TLS verification, name resolution…).
    case failed
    /// The server's TLS connection did not negotiate HTTP/2 (ALPN gave http/1.1 or nothing): the
    /// request was refused before it was written (`wireSends` counts only earlier sends on h2
    /// connections). `curlErrorDetail` names the server and what it chose.
    case notHTTP2
    /// Shutdown cancelled the request before it completed.
    case cancelled
}

/// Selected response header values, in the order of `capturedHeaderNames`, as the bytes the
/// server sent (a lane hands `apns-id` and `Retry-After` on as bytes; a `String` is made only
/// when one is asked for).
public struct CapturedHeaders: Sendable {
    let names: [String]
    let values: [[UInt8]?]

    init(names: [String], values: [[UInt8]?]) {
        self.names = names
        self.values = values
    }

    /// The value of a captured header (case-insensitive name), nil when absent or not captured.
    public subscript(name: String) -> String? {
        bytes(named: name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes of a captured header's value (case-insensitive name), nil when absent or not
    /// captured.
    public func bytes(named name: String) -> [UInt8]? {
        guard !values.isEmpty else { return nil }
        // Compared byte by byte, ASCII case folded: this runs for every completion (a lane looks
        // up `apns-id`, `x-amzn-requestid` and `retry-after`), and `lowercased()` allocates.
        for (index, candidate) in names.enumerated() where candidate.utf8.elementsEqual(name.utf8, by: { Self.fold($0) == Self.fold($1) }) {
            return values[index]
        }
        return nil
    }

    @inline(__always)
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func none(_ names: [String]) -> CapturedHeaders { CapturedHeaders(names: names, values: []) }
}
