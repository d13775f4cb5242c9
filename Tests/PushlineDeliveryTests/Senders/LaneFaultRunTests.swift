import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import Testing

/// A few thousand requests through one lane against seeded faults: every request settles
/// exactly once, and its outcome is the one the fault plan predicts (walking
/// `FaultPlan.fault(for:token:attempt:)` with the retry rules of docs/delivery.md), which the
/// emulator's per-token history confirms.
@Suite("Lane runs with seeded faults", .serialized)
struct LaneFaultRunTests {
    static let maximumAttempts = LaneHarness.quickRetry.maximumAttempts

    /// The emulator's label for a fault's answer (docs/emulator.md).
    static func label(_ fault: InjectedFault?, _ provider: EmulatedProvider) -> String {
        switch (fault, provider) {
        case (nil, _): "200"
        case (.apnsUnregistered?, _): "410 Unregistered"
        case (.apnsBadDeviceToken?, _): "400 BadDeviceToken"
        case (.fcmUnregistered?, _): "404 UNREGISTERED"
        case (.webpushGone?, _): "410 Gone"
        case (.admUnregistered?, _): "400 Unregistered"
        case (.admReplaced?, _): "200 replaced"
        case (.tooManyRequests?, _): "429 TooManyRequests"
        case (.quotaExceeded?, _): "429 QUOTA_EXCEEDED"
        case (.internalServerError?, .apns): "500 InternalServerError"
        case (.internalServerError?, .fcm): "500 INTERNAL"
        case (.internalServerError?, .webpush), (.internalServerError?, .adm): "500 InternalServerError"
        case (.serviceUnavailable?, .apns): "503 ServiceUnavailable"
        case (.serviceUnavailable?, .fcm): "503 UNAVAILABLE"
        case (.serviceUnavailable?, .webpush), (.serviceUnavailable?, .adm): "503 ServiceUnavailable"
        case (.internalServerError?, .webhook): "500 internal_error"
        case (.serviceUnavailable?, .webhook): "503 service_unavailable"
        case (.refusedStream?, _): "refused_stream"
        case (.dropConnection?, _): "dropped_connection"
        }
    }

    struct Prediction: Equatable {
        var kind: DeliveryOutcome.Kind
        var reason: String?
        var attempts: Int
        /// The emulator's answers, in order.
        var answers: [String]
    }

    /// What the lane must do with `token`, from the plan: a 200 is sent; a token-level fault is
    /// an invalid token; 429 / 500 / 503 are retried until the attempts run out; a refused
    /// stream is resent by curl itself (the server did not process it), so it costs the lane
    /// no attempt. No dropped connections here: they take other streams with them.
    static func predict(_ plan: FaultPlan, _ provider: EmulatedProvider, token: String) -> Prediction {
        var answers: [String] = []
        var attempts = 1
        var serverAttempt = 0
        while true {
            let fault = plan.fault(for: provider, token: token, attempt: serverAttempt)
            answers.append(label(fault, provider))
            serverAttempt += 1
            switch fault {
            case nil:
                return Prediction(kind: .sent, reason: nil, attempts: attempts, answers: answers)
            case .apnsUnregistered?:
                return Prediction(kind: .invalidToken, reason: "Unregistered", attempts: 0, answers: answers)
            case .apnsBadDeviceToken?:
                return Prediction(kind: .invalidToken, reason: "BadDeviceToken", attempts: 0, answers: answers)
            case .fcmUnregistered?:
                return Prediction(kind: .invalidToken, reason: "UNREGISTERED", attempts: 0, answers: answers)
            case .webpushGone?:
                return Prediction(kind: .invalidToken, reason: "Gone", attempts: 0, answers: answers)
            case .admUnregistered?:
                return Prediction(kind: .invalidToken, reason: "Unregistered", attempts: 0, answers: answers)
            case .admReplaced?:
                return Prediction(kind: .sent, reason: nil, attempts: attempts, answers: answers)
            case .refusedStream?:
                continue
            case .tooManyRequests?, .internalServerError?, .serviceUnavailable?, .quotaExceeded?, .dropConnection?:
                if attempts == maximumAttempts {
                    return Prediction(kind: .failed, reason: "retries_exhausted", attempts: attempts, answers: answers)
                }
                attempts += 1
            }
        }
    }

    @Test("APNs: 2,000 devices, seeded 410 / 400 / 429 / 500 / 503 / REFUSED_STREAM: each ends as the plan predicts, nothing delivered twice")
    func apnsSeeded() async throws {
        var rates = FaultRates()
        rates[.apnsUnregistered] = 0.03
        rates[.apnsBadDeviceToken] = 0.02
        rates[.tooManyRequests] = 0.02
        rates[.internalServerError] = 0.04
        rates[.serviceUnavailable] = 0.04
        rates[.refusedStream] = 0.01
        let plan = FaultPlan(seed: 20_261_123, rates: rates)
        try await withLaneHarness({ configuration in
            configuration.faults = plan
            configuration.faults.retryAfterSeconds = 0
            configuration.streams = StreamLimits(beforeAuthentication: 1, max: 100)
        }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 2, streams: 50)), routes: TestCampaign.routes, seed: 99)
            let tokens = (0..<2000).map(TestCampaign.apnsToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            try Self.check(run, tokens: tokens, plan: plan, provider: .apns, stats: harness.emulator.stats().apns, connectionsMayDrop: true)
        }
    }

    @Test("FCM: 2,000 devices, seeded UNREGISTERED / 500 / 503: each ends as the plan predicts")
    func fcmSeeded() async throws {
        var rates = FaultRates()
        rates[.fcmUnregistered] = 0.04
        rates[.internalServerError] = 0.05
        rates[.serviceUnavailable] = 0.05
        let plan = FaultPlan(seed: 8, rates: rates)
        try await withLaneHarness({ configuration in
            configuration.faults = plan
            configuration.faults.retryAfterSeconds = 0
        }) { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(harness.settings(connections: 2, streams: 50)), routes: TestCampaign.routes, seed: 7)
            let tokens = (0..<2000).map(TestCampaign.fcmToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: tokens))
            try Self.check(run, tokens: tokens, plan: plan, provider: .fcm, stats: harness.emulator.stats().fcm)
        }
    }

    /// `connectionsMayDrop`: the emulator closes an APNs connection after 200 stream resets
    /// (swift-nio-http2's glitch limit), and the libcurl engine resets every stream APNs answers
    /// with an empty 200: the streams in flight on it lose their answers and are resent (possible
    /// duplicates). Those tokens are checked against the invariants only; every other token
    /// must end exactly as predicted.
    static func check(
        _ run: LaneRun, tokens: [String], plan: FaultPlan, provider: EmulatedProvider, stats: EmulatorStats.ProviderStats,
        connectionsMayDrop: Bool = false
    ) throws {
        #expect(run.violations.isEmpty, "\(run.violations.prefix(5))")
        #expect(run.settled.count == tokens.count)
        var expectedCounts: [DeliveryOutcome.Kind: Int] = [:]
        var mismatches: [String] = []
        var disturbed = 0
        for (tag, token) in tokens.enumerated() {
            let predicted = predict(plan, provider, token: token)
            expectedCounts[predicted.kind, default: 0] += 1
            guard let outcome = run.outcome(tag) else {
                mismatches.append("\(tag): not settled")
                continue
            }
            let history = stats.tokens[token]
            let answers = history?.answers ?? []
            let delivered = history?.delivered ?? 0
            // Every answer the emulator gave for the token is the plan's for that attempt.
            for (attempt, answer) in answers.enumerated() where answer != label(plan.fault(for: provider, token: token, attempt: attempt), provider) {
                mismatches.append("\(tag): answer \(attempt) was \(answer)")
            }
            // Never delivered twice unless reported as a possible duplicate.
            #expect(delivered <= (outcome.possibleDuplicate ? 2 : 1), "\(tag)")
            switch outcome.kind {
            case .sent: #expect(delivered >= 1 && answers.last == "200", "\(tag)")
            case .invalidToken: #expect(delivered == 0 && answers.last.map { $0.hasPrefix("4") } == true, "\(tag)")
            default: #expect(delivered == 0 || connectionsMayDrop, "\(tag)")
            }
            var actual = Prediction(kind: outcome.kind, reason: outcome.reasonCode, attempts: outcome.attempts, answers: answers)
            if outcome.kind == .invalidToken { actual.attempts = 0 }
            if actual == predicted {
                #expect(run.deferred.contains(UInt64(tag)) == (predicted.attempts > 1), "\(tag)")
                #expect(!outcome.possibleDuplicate, "\(tag)")
            } else if connectionsMayDrop && (outcome.possibleDuplicate || answers.count < predicted.answers.count || outcome.attempts > predicted.attempts) {
                disturbed += 1
            } else {
                mismatches.append("\(tag) \(token): expected \(predicted), got \(actual)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches: \(mismatches.prefix(5))")
        // A connection lost now and then touches a few tokens, not the run.
        #expect(disturbed * 10 <= tokens.count, "\(disturbed) tokens disturbed")
        if !connectionsMayDrop {
            #expect(run.counts == expectedCounts)
            #expect(stats.delivered == expectedCounts[.sent])
        }
        #expect(run.counts.values.reduce(0, +) == tokens.count)
        // The plan must exercise every path this test claims to cover.
        #expect((expectedCounts[.sent] ?? 0) > tokens.count * 3 / 4)
        #expect((expectedCounts[.invalidToken] ?? 0) > 20)
        #expect(run.deferred.count > 60)
        let report = try #require(run.report)
        let attempts = run.settled.values.reduce(0) { $0 + ($1.outcome.kind == .invalidToken ? 1 : $1.outcome.attempts) }
        #expect(report.attempts == attempts)
        // Attempts are what reached the server, libcurl's own re-sends of refused streams
        // included; retries are the re-sends the lane decided.
        #expect(report.attempts == stats.requests)
        #expect(report.retries <= attempts - tokens.count)
    }
}
