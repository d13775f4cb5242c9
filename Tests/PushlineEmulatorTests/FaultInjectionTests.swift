import Foundation
import PushlineEmulator
import Synchronization
import Testing

@Suite("Fault injection over the wire")
struct FaultInjectionTests {
    /// What APNs answers for each fault (PROVIDERS.md).
    static func expectedAPNs(_ fault: InjectedFault?) -> (Int, String?) {
        switch fault {
        case nil: (200, nil)
        case .apnsUnregistered: (410, "Unregistered")
        case .apnsBadDeviceToken: (400, "BadDeviceToken")
        case .tooManyRequests: (429, "TooManyRequests")
        case .internalServerError: (500, "InternalServerError")
        case .serviceUnavailable: (503, "ServiceUnavailable")
        default: (-1, nil)
        }
    }

    @Test("APNs status faults: each token gets exactly the plan's answer, each kind near its rate")
    func apnsStatusFaults() async throws {
        var rates = FaultRates()
        rates[.apnsUnregistered] = 0.1
        rates[.apnsBadDeviceToken] = 0.1
        rates[.tooManyRequests] = 0.1
        rates[.internalServerError] = 0.1
        rates[.serviceUnavailable] = 0.1
        let plan = FaultPlan(seed: 42, rates: rates)
        try await withEmulator({ $0.faults = plan; $0.faults.retryAfterSeconds = 7 }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let tokens = (0..<600).map(TestDevice.apns)
            let outcomes = try await withThrowingTaskGroup(of: (String, H2TestClient.Outcome).self) { group in
                for token in tokens { group.addTask { (token, try await fixture.sendAPNs(client, token: token)) } }
                var all: [String: H2TestClient.Outcome] = [:]
                for try await (token, outcome) in group { all[token] = outcome }
                return all
            }
            var counts: [InjectedFault: Int] = [:]
            for token in tokens {
                let fault = plan.fault(for: .apns, token: token, attempt: 0)
                if let fault { counts[fault, default: 0] += 1 }
                let outcome = try #require(outcomes[token])
                let (status, reason) = Self.expectedAPNs(fault)
                #expect(outcome.status == status, "\(token)")
                #expect(outcome.reason == reason, "\(token)")
                guard case .response(_, let headers, let body) = outcome else { continue }
                #expect(headers["apns-id"] != nil)
                if status == 429 || status == 503 { #expect(headers["retry-after"] == "7") }
                if status == 410 { #expect(body.contains("\"timestamp\":")) }
            }
            // 600 tokens: 10 % of tokens are unregistered and 10 % bad; of the remaining 80 %, 10 %
            // of attempts each get 429, 500 and 503 (48 expected): ±4 standard deviations.
            #expect((60 - 30...60 + 30).contains(counts[.apnsUnregistered] ?? 0))
            #expect((60 - 30...60 + 30).contains(counts[.apnsBadDeviceToken] ?? 0))
            for fault in [InjectedFault.tooManyRequests, .internalServerError, .serviceUnavailable] {
                #expect((48 - 27...48 + 27).contains(counts[fault] ?? 0), "\(fault)")
            }
            let stats = fixture.emulator.stats()
            #expect(stats.apns.tokens.count == tokens.count)
            #expect(stats.apns.tokens.values.allSatisfy { $0.requests == 1 })
            #expect(stats.apns.answers["410 Unregistered"] == counts[.apnsUnregistered])
            #expect(stats.apns.answers["503 ServiceUnavailable"] == counts[.serviceUnavailable])
            #expect(stats.apns.delivered == 600 - counts.values.reduce(0, +))
        }
    }

    @Test("FCM faults: UNREGISTERED, QUOTA_EXCEEDED (with Retry-After), INTERNAL and UNAVAILABLE as google.rpc.Status")
    func fcmFaults() async throws {
        var rates = FaultRates()
        rates[.fcmUnregistered] = 0.2
        rates[.quotaExceeded] = 0.2
        rates[.internalServerError] = 0.1
        rates[.serviceUnavailable] = 0.1
        // APNs-only rates must not leak into FCM answers.
        rates[.apnsUnregistered] = 0.5
        rates[.tooManyRequests] = 0.3
        let plan = FaultPlan(seed: 7, rates: rates)
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let accessToken = try await fixture.accessToken(client)
            let tokens = (0..<300).map(TestDevice.fcm)
            var counts: [InjectedFault: Int] = [:]
            for token in tokens {
                let fault = plan.fault(for: .fcm, token: token, attempt: 0)
                if let fault { counts[fault, default: 0] += 1 }
                let outcome = try await fixture.sendFCM(client, accessToken: accessToken, token: token)
                let (status, code): (Int, String?) = switch fault {
                case nil: (200, nil)
                case .fcmUnregistered: (404, "UNREGISTERED")
                case .quotaExceeded: (429, "QUOTA_EXCEEDED")
                case .internalServerError: (500, "INTERNAL")
                case .serviceUnavailable: (503, "UNAVAILABLE")
                default: (-1, nil)
                }
                #expect(outcome.status == status, "\(token)")
                #expect(outcome.fcmErrorCode == code, "\(token)")
                if status == 429, case .response(_, let headers, _) = outcome { #expect(headers["retry-after"] == "1") }
            }
            #expect((60 - 28...60 + 28).contains(counts[.fcmUnregistered] ?? 0))
            #expect((48 - 26...48 + 26).contains(counts[.quotaExceeded] ?? 0))
            #expect(counts[.internalServerError, default: 0] > 0 && counts[.serviceUnavailable, default: 0] > 0)
            #expect(counts[.apnsUnregistered] == nil && counts[.tooManyRequests] == nil)
        }
    }

    @Test("RST_STREAM REFUSED_STREAM and dropped connections at their rates, per the plan")
    func refusedAndDropped() async throws {
        var rates = FaultRates()
        rates[.refusedStream] = 0.2
        rates[.dropConnection] = 0.2
        let plan = FaultPlan(seed: 3, rates: rates)
        try await withEmulator({ $0.faults = plan }) { fixture in
            var client = try await fixture.connect()
            var counts: [InjectedFault: Int] = [:]
            for token in (0..<80).map(TestDevice.apns) {
                let fault = plan.fault(for: .apns, token: token, attempt: 0)
                if let fault { counts[fault, default: 0] += 1 }
                let outcome = try await fixture.sendAPNs(client, token: token)
                switch fault {
                case .refusedStream?: #expect(outcome == .reset(.refusedStream), "\(token)")
                case .dropConnection?:
                    #expect(outcome == .closed, "\(token)")
                    try await client.channel.closeFuture.get()
                    client = try await fixture.connect()
                default: #expect(outcome.status == 200, "\(token)")
                }
            }
            await client.close()
            #expect((16 - 12...16 + 12).contains(counts[.refusedStream] ?? 0))
            #expect((16 - 12...16 + 12).contains(counts[.dropConnection] ?? 0))
            let stats = fixture.emulator.stats()
            #expect(stats.statuses["refused_stream"] == counts[.refusedStream])
            #expect(stats.statuses["dropped_connection"] == counts[.dropConnection])
            #expect(stats.connectionsOpened == 1 + (counts[.dropConnection] ?? 0))
        }
    }

    @Test("added latency delays the answer without blocking the event loop")
    func latency() async throws {
        try await withEmulator({ $0.faults.latencyMilliseconds = 1000; $0.threads = 1 }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            // Widen the connection first so both streams below may be open at once.
            #expect(try await fixture.sendAPNs(client, token: TestDevice.apns(2)).status == 200)
            #expect(client.announcedStreamLimits.last == 1000)
            let clock = ContinuousClock()
            let start = clock.now
            // The delayed APNs request, then /stats (never delayed), written in the same turn:
            // with one event-loop thread, /stats can only be answered first if the delay does not
            // block the loop.
            let results = try await client.sendTogether([
                ("POST", "/3/device/\(TestDevice.apns(1))", fixture.apnsHeaders(), EmulatorFixture.alertPayload),
                ("GET", "/stats", [], []),
            ])
            #expect(results[0].outcome.status == 200)
            #expect(results[1].outcome.status == 200)
            #expect(results[1].arrival == 0)
            #expect(results[0].arrival == 1)
            #expect(clock.now - start >= .milliseconds(1000))
        }
    }
}
