import PushlineDelivery
import Testing

@Suite("Web Push answers")
struct WebPushResponseClassifierTests {
    @Test("each status as PROVIDERS.md and RFC 8030 describe it", arguments: [
        (201, ResponseOutcome.sent(providerID: nil), "sent"),
        (202, .sent(providerID: nil), "sent"),
        (404, .invalidToken(timestamp: nil), "subscription_not_found"),
        (410, .invalidToken(timestamp: nil), "subscription_gone"),
        (413, .permanent, "payload_too_large"),
        (401, .configurationError, "vapid_unauthorized"),
        (403, .permanent, "vapid_key_mismatch"),
        (429, .throttled(.provider), "too_many_requests"),
        (503, .retryable(newConnection: false), "http_503"),
        (408, .retryable(newConnection: false), "http_408"),
        (400, .permanent, "http_400"),
        (0, .retryable(newConnection: true), "no_response"),
        (302, .permanent, "unexpected_status"),
    ])
    func statuses(status: Int, outcome: ResponseOutcome, reason: String) {
        let classification = WebPushResponseClassifier.classify(status: status)
        #expect(classification.outcome == outcome)
        #expect(classification.reason == reason)
        #expect(classification.status == status)
    }

    @Test("Retry-After is kept on 429 and 503")
    func retryAfter() {
        #expect(WebPushResponseClassifier.classify(status: 429, retryAfter: Array("7".utf8)).retryAfter != nil)
        #expect(WebPushResponseClassifier.classify(status: 503, retryAfter: Array("7".utf8)).retryAfter != nil)
    }
}
