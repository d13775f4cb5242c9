/// Classifies a push service's answer (RFC 8030 §5, RFC 8292 §4, PROVIDERS.md "Web Push").
/// Push services put no reason code every service shares in the body, so the status decides
/// and the body is not read.
///
/// - 2xx (201 Created, as RFC 8030 answers; 200 and 202 are taken too): sent.
/// - 404, 410: the subscription expired or was removed: `invalid-tokens.ndjson`.
/// - 413: the encrypted message is too large: failed, not retried.
/// - 401: the VAPID token itself is refused (bad signature, `aud`, `exp` or `sub`): every
///   request to this push service would be, so its lane stops.
/// - 403: the subscription was made with another application-server key: that device fails.
/// - 429: slow down and retry (Retry-After); 408 and 5xx: retry.
/// - other 4xx: failed; 1xx and 3xx: `unexpected_status`.
public enum WebPushResponseClassifier {
    public static func classify(status: Int, retryAfter retryAfterHeader: [UInt8]? = nil) -> ResponseClassification {
        let retryAfter = retryAfterHeader.flatMap { RetryAfter(headerValue: $0) }
        let outcome: ResponseOutcome
        let reason: String
        switch status {
        case 0:
            return .init(outcome: .retryable(newConnection: true), status: 0, reason: "no_response", retryAfter: retryAfter)
        case 200...299:
            return .init(outcome: .sent(providerID: nil), status: status, reason: "sent")
        case 404:
            (outcome, reason) = (.invalidToken(timestamp: nil), "subscription_not_found")
        case 410:
            (outcome, reason) = (.invalidToken(timestamp: nil), "subscription_gone")
        case 413:
            (outcome, reason) = (.permanent, "payload_too_large")
        case 401:
            (outcome, reason) = (.configurationError, "vapid_unauthorized")
        case 403:
            (outcome, reason) = (.permanent, "vapid_key_mismatch")
        case 429:
            (outcome, reason) = (.throttled(.provider), "too_many_requests")
        case 408, 500...599:
            (outcome, reason) = (.retryable(newConnection: false), "http_\(status)")
        case 400...499:
            (outcome, reason) = (.permanent, "http_\(status)")
        default:
            return ProviderStatus.unexpectedClassification(status: status, retryAfter: retryAfter)
        }
        return .init(outcome: outcome, status: status, reason: reason, retryAfter: retryAfter)
    }
}
