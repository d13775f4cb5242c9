import PushlineDelivery
import Testing

@Suite("Retry-After")
struct RetryAfterTests {
    // 1994-11-06 08:49:37 UTC, the RFC's example: 784111777.
    static let example: Int64 = 784_111_777

    @Test("delay-seconds")
    func seconds() {
        #expect(RetryAfter(headerValue: "120") == .delay(.seconds(120)))
        #expect(RetryAfter(headerValue: " 5\t") == .delay(.seconds(5)))
        #expect(RetryAfter(headerValue: "0") == .delay(.zero))
        // Ten digits or more is past the day cap anyway.
        #expect(RetryAfter(headerValue: "99999999999999999999")?.delay(unixTimeNow: 0) == .seconds(86_400))
        #expect(RetryAfter(headerValue: "999999999")?.delay(unixTimeNow: 0) == .seconds(86_400))
    }

    @Test("the three HTTP-date forms", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
    ])
    func dates(text: String) {
        #expect(RetryAfter(headerValue: text) == .date(unixTime: Self.example))
    }

    @Test("dates become delays from the wall clock: past is zero, far future is a day")
    func dateDelays() {
        let retry = RetryAfter.date(unixTime: Self.example)
        #expect(retry.delay(unixTimeNow: Self.example - 30) == .seconds(30))
        #expect(retry.delay(unixTimeNow: Self.example + 30) == .zero)
        #expect(retry.delay(unixTimeNow: Self.example - 10 * 86_400) == .seconds(86_400))
        #expect(RetryAfter.date(unixTime: .max).delay(unixTimeNow: .min) == .seconds(86_400))
        #expect(RetryAfter.date(unixTime: .min).delay(unixTimeNow: .max) == .zero)
        // A leap-year date: 2024-02-29 00:00:00 UTC = 1709164800.
        #expect(RetryAfter(headerValue: "Thu, 29 Feb 2024 00:00:00 GMT") == .date(unixTime: 1_709_164_800))
    }

    @Test("anything else is no Retry-After", arguments: [
        "", "soon", "-5", "1.5", "+3", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49 GMT",
        String(repeating: "9", count: 100), "\u{0}", "Sun, 06 Nov 99999 08:49:37 GMT",
        // A byte a field value may not hold makes the whole value no Retry-After, even where
        // the rest would parse (the weekday is not otherwise checked).
        "5\u{1}", "\u{1}5", "1\u{0}2", "12\u{7f}", "5\r\n", "5\u{e9}", "S\u{1}n, 06 Nov 1994 08:49:37 GMT",
    ])
    func invalid(text: String) {
        #expect(RetryAfter(headerValue: text) == nil)
    }

    @Test("an answer whose Retry-After holds a control byte keeps its status: a retryable 503 without a Retry-After, not \"no response\"")
    func controlByteKeepsTheAnswer() {
        let bytes: [UInt8] = [UInt8(ascii: "5"), 0x01]
        let apns = APNsResponseClassifier.classify(status: 503, body: Array(#"{"reason":"ServiceUnavailable"}"#.utf8), retryAfter: bytes)
        #expect(apns.status == 503 && apns.retryAfter == nil && apns.reason == "ServiceUnavailable")
        let fcm = FCMResponseClassifier.classify(status: 503, body: [UInt8](), retryAfter: bytes)
        #expect(fcm.status == 503 && fcm.retryAfter == nil && fcm.reason != "no_response")
        let webPush = WebPushResponseClassifier.classify(status: 503, retryAfter: bytes)
        #expect(webPush.status == 503 && webPush.retryAfter == nil)
    }
}
