/// Classifies a webhook receiver's answer. Receivers document no reason codes, so the status
/// decides and the body is not read.
///
/// - 2xx: sent.
/// - 401, 403: the receiver refuses the signature or the sender: every request to the channel
///   would be refused, so its lane stops.
/// - 413: failed `payload_too_large`.
/// - 429: slow down and retry (Retry-After); 408, 409 (a receiver busy with the same id) and
///   5xx: retry.
/// - other 4xx: failed; 1xx and 3xx (a redirect is not followed): `unexpected_status`.
public enum WebhookResponseClassifier {
    public static func classify(status: Int, retryAfter retryAfterHeader: [UInt8]? = nil) -> ResponseClassification {
        let retryAfter = retryAfterHeader.flatMap { RetryAfter(headerValue: $0) }
        let outcome: ResponseOutcome
        let reason: String
        switch status {
        case 0:
            return .init(outcome: .retryable(newConnection: true), status: 0, reason: "no_response", retryAfter: retryAfter)
        case 200...299:
            return .init(outcome: .sent(providerID: nil), status: status, reason: "sent")
        case 401, 403:
            (outcome, reason) = (.configurationError, "webhook_unauthorized")
        case 413:
            (outcome, reason) = (.permanent, "payload_too_large")
        case 429:
            (outcome, reason) = (.throttled(.provider), "too_many_requests")
        case 408, 409, 500...599:
            (outcome, reason) = (.retryable(newConnection: false), "http_\(status)")
        case 400...499:
            (outcome, reason) = (.permanent, "http_\(status)")
        default:
            return ProviderStatus.unexpectedClassification(status: status, retryAfter: retryAfter)
        }
        return .init(outcome: outcome, status: status, reason: reason, retryAfter: retryAfter)
    }
}
