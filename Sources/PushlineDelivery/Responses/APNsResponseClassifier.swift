/// Classifies an APNs answer: status, the `apns-id` and `retry-after` headers, and the body
/// `{"reason": …, "timestamp": ms}` (hostile: bounded, any bytes, never a crash). Only 200 is
/// sent; a status that is neither 200 nor 4xx/5xx is `unexpected_status` (`ProviderStatus`).
public enum APNsResponseClassifier {
    /// - Parameter bodyTruncatedAt: the transport's `maxResponseBodyBytes` when it cut the body
    ///   there (`TransportResponse.bodyTruncated`): the body is then not read, the status decides.
    public static func classify(
        status: Int, body: some Collection<UInt8>, apnsID: [UInt8]? = nil, retryAfter retryAfterHeader: [UInt8]? = nil,
        bodyTruncatedAt: Int? = nil
    ) -> ResponseClassification {
        let retryAfter = retryAfterHeader.flatMap { RetryAfter(headerValue: $0) }
        switch ProviderStatus(status) {
        case .success:
            return .init(outcome: .sent(providerID: apnsID.flatMap { ResponseBody.headerString($0) }), status: status, reason: "sent")
        case .noResponse:
            // No response: a refused, reset or lost stream (which the libcurl engine may report
            // as success with no status), or a transport error. Retry on another connection.
            return .init(outcome: .retryable(newConnection: true), status: 0, reason: "no_response", retryAfter: retryAfter)
        case .unexpected:
            return ProviderStatus.unexpectedClassification(status: status, retryAfter: retryAfter)
        case .error:
            break
        }
        if let bodyTruncatedAt {
            return .init(outcome: outcomeForStatus(status), status: status, reason: "http_\(status)",
                         message: ResponseBody.overLimit(bodyTruncatedAt), retryAfter: retryAfter)
        }
        let root = ResponseBody.jsonObject(body)
        let reasonName = ResponseBody.wireString(root?["reason"])
        let reason = reasonName.map { APNsErrorReason(wireName: $0) }
        var outcome = reason?.outcome ?? outcomeForStatus(status)
        if case .invalidToken = outcome, let value = root?["timestamp"]?.int64Value, value >= 0 {
            outcome = .invalidToken(timestamp: value)
        }
        return .init(outcome: outcome, status: status, reason: reason?.wireName ?? "http_\(status)", retryAfter: retryAfter,
                     providerReason: reason.map { .apns($0) })
    }

    /// For a body without a known reason: what the error status (4xx, 5xx) alone says.
    static func outcomeForStatus(_ status: Int) -> ResponseOutcome {
        switch status {
        case 403: .configurationError
        case 410: .invalidToken(timestamp: nil)
        case 429: .throttled(.provider)
        case 408, 500...599: .retryable(newConnection: false)
        default: .permanent
        }
    }
}
