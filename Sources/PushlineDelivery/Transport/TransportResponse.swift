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
    /// The request may have reached the server: it was at least partly written (or answered).
    /// False only when it certainly was not (never started, or refused before being written), so
    /// a resend of a request with this flag set must be marked a possible duplicate.
    public let mayHaveBeenDelivered: Bool
    /// The HTTP version of the response as curl reports it (`CURL_HTTP_VERSION_2_0` = 3), 0 when
    /// none.
    public let httpVersion: Int

    /// libcurl's text for `curlCode`, for messages.
    public var curlErrorDescription: String { CurlText.description(of: curlCode) }
}

/// How a transfer ended, before any provider's meaning is given to the status.
public enum TransportResult: Sendable, Equatable {
    /// A complete HTTP response (any status; `status` > 0).
    case response
    /// The transfer ended without a status: with libcurl 7.88 a stream reset or GOAWAY surfaces
    /// as CURLE_OK with status 0, and a connection lost mid-stream as a receive or HTTP/2 error.
    /// Never a success; see `mayHaveBeenDelivered`.
    case noResponse
    /// The per-request timeout passed (CURLE_OPERATION_TIMEDOUT).
    case timedOut
    /// Any other curl failure (connection refused, TLS verification, name resolution…).
    case failed
    /// Shutdown cancelled the request before it completed.
    case cancelled
}

/// Selected response header values, in the order of `capturedHeaderNames`.
public struct CapturedHeaders: Sendable {
    let names: [String]
    let values: [String?]

    /// The value of a captured header (case-insensitive name), nil when absent or not captured.
    public subscript(name: String) -> String? {
        guard !values.isEmpty else { return nil }
        for (index, candidate) in names.enumerated() where candidate.utf8.count == name.utf8.count {
            if candidate.lowercased() == name.lowercased() { return values[index] }
        }
        return nil
    }

    static func none(_ names: [String]) -> CapturedHeaders { CapturedHeaders(names: names, values: []) }
}
