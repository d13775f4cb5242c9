import PushlineCore
import PushlineDelivery
import Testing

/// PROVIDERS.md's ADM rows, one by one.
@Suite("ADM answers")
struct ADMResponseClassifierTests {
    static let sent = "amzn1.adm-registration.v3.abc"

    func classify(_ status: Int, _ body: String, retryAfter: String? = nil, requestID: String? = nil) -> ResponseClassification {
        ADMResponseClassifier.classify(
            status: status, body: Array(body.utf8), sentRegistrationID: Array(Self.sent.utf8),
            requestID: requestID.map { Array($0.utf8) }, retryAfter: retryAfter.map { Array($0.utf8) }
        )
    }

    @Test func aSuccessNamingTheSameRegistrationIsSentWithNoReplacement() {
        let answer = classify(200, #"{"registrationID":"amzn1.adm-registration.v3.abc"}"#, requestID: "b3b4c7a1-0000-4f00-9000-000000000001")
        #expect(answer.outcome == .sent(providerID: "b3b4c7a1-0000-4f00-9000-000000000001"))
        #expect(answer.replacementToken == nil)
    }

    @Test func aSuccessNamingAnotherRegistrationCarriesTheNewOne() {
        let answer = classify(200, #"{"registrationID":"amzn1.adm-registration.v3.new-one"}"#)
        #expect(answer.outcome == .sent(providerID: nil))
        #expect(answer.replacementToken == "amzn1.adm-registration.v3.new-one")
    }

    @Test(arguments: [
        #"{"registrationID":"has space"}"#, #"{"registrationID":""}"#, #"{"registrationID":7}"#, "not json", "",
        #"{"registrationID":"a\/b"}"#,
    ])
    func aSuccessWithAnUnusableRegistrationIsSentWithoutReplacement(body: String) {
        let answer = classify(200, body)
        #expect(answer.outcome == .sent(providerID: nil))
        #expect(answer.replacementToken == nil)
    }

    @Test(arguments: ["InvalidRegistrationId", "Unregistered"])
    func goneRegistrationsAreInvalidTokens(reason: String) {
        let answer = classify(400, #"{"reason":"\#(reason)"}"#)
        #expect(answer.outcome == .invalidToken(timestamp: nil))
        #expect(answer.reason == reason)
    }

    @Test(arguments: ["InvalidData", "InvalidConsolidationKey", "InvalidExpiration", "InvalidType"])
    func otherBadRequestsFail(reason: String) {
        let answer = classify(400, #"{"reason":"\#(reason)"}"#)
        #expect(answer.outcome == .permanent)
        #expect(answer.reason == reason)
    }

    @Test func anExpiredAccessTokenAsksForANewOne() {
        #expect(classify(401, #"{"reason":"AccessTokenExpired"}"#).outcome == .refreshCredentials)
        #expect(classify(401, "").outcome == .refreshCredentials)
    }

    @Test func forbiddenStopsTheLane() {
        #expect(classify(403, "").outcome == .configurationError)
    }

    @Test func tooLargeFails() {
        let answer = classify(413, #"{"reason":"MessageTooLarge"}"#)
        #expect(answer.outcome == .permanent)
        #expect(answer.reason == "MessageTooLarge")
    }

    @Test func maxRateExceededSlowsDownAndHonoursRetryAfter() {
        let answer = classify(429, #"{"reason":"MaxRateExceeded"}"#, retryAfter: "7")
        #expect(answer.outcome == .throttled(.provider))
        #expect(answer.reason == "MaxRateExceeded")
        #expect(answer.retryAfter == RetryAfter(headerValue: Array("7".utf8)))
    }

    @Test(arguments: [500, 502, 503, 504, 408])
    func serverErrorsAreRetried(status: Int) {
        #expect(classify(status, "").outcome == .retryable(newConnection: false))
    }

    @Test func noAnswerIsRetriedOnANewConnection() {
        #expect(classify(0, "").outcome == .retryable(newConnection: true))
    }

    @Test(arguments: [201, 204, 302, 100])
    func statusesADMDoesNotDocumentAreNotReadAsDelivered(status: Int) {
        let answer = classify(status, "")
        #expect(answer.outcome == .permanent)
        #expect(answer.reason == ResponseClassification.unexpectedStatusReason)
    }

    @Test func aHostileReasonIsBoundedAndPrintable() {
        let answer = classify(400, #"{"reason":"\#(String(repeating: "\u{7}x", count: 500))"}"#)
        #expect(answer.outcome == .permanent)
        #expect(answer.reason.utf8.count <= 200)
        #expect(answer.reason.utf8.allSatisfy { (0x20...0x7E).contains($0) || $0 >= 0x80 })
    }
}

/// Webhook receivers document no reasons: the status decides.
@Suite("Webhook answers")
struct WebhookResponseClassifierTests {
    @Test(arguments: [200, 201, 202, 204])
    func anyTwoHundredIsSent(status: Int) {
        #expect(WebhookResponseClassifier.classify(status: status).outcome == .sent(providerID: nil))
    }

    @Test(arguments: [401, 403])
    func aRefusedSignatureStopsTheChannel(status: Int) {
        let answer = WebhookResponseClassifier.classify(status: status)
        #expect(answer.outcome == .configurationError)
        #expect(answer.reason == "webhook_unauthorized")
    }

    @Test func rowsOfTheTable() {
        #expect(WebhookResponseClassifier.classify(status: 413).outcome == .permanent)
        #expect(WebhookResponseClassifier.classify(status: 413).reason == "payload_too_large")
        #expect(WebhookResponseClassifier.classify(status: 429, retryAfter: Array("3".utf8)).outcome == .throttled(.provider))
        #expect(WebhookResponseClassifier.classify(status: 429, retryAfter: Array("3".utf8)).retryAfter != nil)
        for status in [408, 409, 500, 503] {
            #expect(WebhookResponseClassifier.classify(status: status).outcome == .retryable(newConnection: false))
        }
        for status in [400, 404, 410, 422] {
            #expect(WebhookResponseClassifier.classify(status: status).outcome == .permanent)
        }
        #expect(WebhookResponseClassifier.classify(status: 301).reason == ResponseClassification.unexpectedStatusReason)
        #expect(WebhookResponseClassifier.classify(status: 0).outcome == .retryable(newConnection: true))
    }
}
