import Foundation
import PushlineEmulator
import Testing

@Suite("Deterministic faults")
struct DeterminismTests {
    static var rates: FaultRates {
        var rates = FaultRates()
        rates[.apnsUnregistered] = 0.15
        rates[.tooManyRequests] = 0.15
        rates[.serviceUnavailable] = 0.2
        rates[.internalServerError] = 0.1
        return rates
    }

    /// Sends three attempts per token, all tokens at once in `order`, and returns each token's answers.
    static func run(seed: UInt64, order: [String]) async throws -> [String: [String]] {
        try await withEmulator({ $0.faults = FaultPlan(seed: seed, rates: rates) }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            for _ in 0..<3 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for token in order { group.addTask { _ = try await fixture.sendAPNs(client, token: token) } }
                    try await group.waitForAll()
                }
            }
            return fixture.emulator.stats().apns.tokens.mapValues(\.answers)
        }
    }

    @Test("the same seed gives every token the same answers, whatever order and interleaving the requests arrive in")
    func sameSeedSameAnswers() async throws {
        let tokens = (0..<150).map(TestDevice.apns)
        let forward = try await Self.run(seed: 11, order: tokens)
        let backward = try await Self.run(seed: 11, order: tokens.reversed())
        #expect(forward == backward)
        #expect(forward.count == tokens.count)
        // And both are what the plan says, attempt by attempt.
        let plan = FaultPlan(seed: 11, rates: Self.rates)
        for token in tokens {
            let expected = (0..<3).map { attempt -> String in
                switch plan.fault(for: .apns, token: token, attempt: attempt) {
                case nil: "200"
                case .apnsUnregistered?: "410 Unregistered"
                case .tooManyRequests?: "429 TooManyRequests"
                case .serviceUnavailable?: "503 ServiceUnavailable"
                case .internalServerError?: "500 InternalServerError"
                case let other?: "unexpected \(other)"
                }
            }
            #expect(forward[token] == expected, "\(token)")
        }
        let otherSeed = try await Self.run(seed: 12, order: tokens)
        #expect(otherSeed != forward)
    }

    @Test("a token drawn unregistered answers 410 on every attempt")
    func unregisteredTokenAlways410() async throws {
        let plan = FaultPlan(seed: 5, rates: Self.rates)
        let token = try #require((0..<1000).map(TestDevice.apns).first { plan.fault(for: .apns, token: $0, attempt: 0) == .apnsUnregistered })
        for attempt in 0..<10 { #expect(plan.fault(for: .apns, token: token, attempt: attempt) == .apnsUnregistered) }
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            for _ in 0..<4 {
                let outcome = try await fixture.sendAPNs(client, token: token)
                #expect(outcome.status == 410)
                #expect(outcome.reason == "Unregistered")
            }
        }
    }

    @Test("a token can fail once with 503 and then succeed: found from the plan, or scripted")
    func failsOnceThenSucceeds() async throws {
        let plan = FaultPlan(seed: 9, rates: Self.rates)
        let drawn = try #require((0..<1000).map(TestDevice.apns).first {
            plan.fault(for: .apns, token: $0, attempt: 0) == .serviceUnavailable && plan.fault(for: .apns, token: $0, attempt: 1) == nil
        })
        var scriptedPlan = plan
        let scripted = TestDevice.apns(123_456)
        scriptedPlan.scripted[scripted] = [.serviceUnavailable]
        try await withEmulator({ $0.faults = scriptedPlan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            for token in [drawn, scripted] {
                let first = try await fixture.sendAPNs(client, token: token)
                #expect(first.status == 503, "\(token)")
                let second = try await fixture.sendAPNs(client, token: token)
                #expect(second.status == 200, "\(token)")
            }
            #expect(fixture.emulator.stats().apns.tokens[scripted]?.answers == ["503 ServiceUnavailable", "200"])
            // A reset starts the attempts over: the script plays again.
            fixture.emulator.resetStats()
            #expect(try await fixture.sendAPNs(client, token: scripted).status == 503)
        }
    }

    @Test("rejected requests do not use up attempts: a bad provider token leaves the script where it was")
    func rejectedRequestsAreNotAttempts() async throws {
        var plan = FaultPlan(seed: 1)
        let token = TestDevice.apns(77)
        plan.scripted[token] = [.internalServerError, nil]
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let bad = try await client.request("POST", "/3/device/\(token)", headers: fixture.apnsHeaders(token: "x.y.z"), body: EmulatorFixture.alertPayload)
            #expect(bad.reason == "InvalidProviderToken")
            #expect(try await fixture.sendAPNs(client, token: token).status == 500)
            #expect(try await fixture.sendAPNs(client, token: token).status == 200)
            #expect(fixture.emulator.stats().apns.tokens[token]?.answers == ["403 InvalidProviderToken", "500 InternalServerError", "200"])
        }
    }
}

@Suite("Fault plan")
struct FaultPlanTests {
    @Test("over 100,000 tokens each fault's share is its rate (±0.5 %)")
    func ratesHold() {
        var rates = FaultRates()
        rates[.apnsUnregistered] = 0.05
        rates[.apnsBadDeviceToken] = 0.02
        rates[.tooManyRequests] = 0.1
        rates[.internalServerError] = 0.03
        rates[.serviceUnavailable] = 0.07
        rates[.refusedStream] = 0.01
        rates[.dropConnection] = 0.01
        let plan = FaultPlan(seed: 2026, rates: rates)
        var counts: [InjectedFault: Int] = [:]
        let n = 100_000
        for i in 0..<n {
            if let fault = plan.fault(for: .apns, token: TestDevice.apns(i), attempt: 0) { counts[fault, default: 0] += 1 }
        }
        let tokenLevel = 0.05 + 0.02
        for (fault, rate) in [(InjectedFault.apnsUnregistered, 0.05), (.apnsBadDeviceToken, 0.02)] {
            #expect(abs(Double(counts[fault] ?? 0) / Double(n) - rate) < 0.005, "\(fault)")
        }
        // Per-attempt faults apply to the tokens that are not token-level faults.
        for (fault, rate) in [(InjectedFault.tooManyRequests, 0.1), (.internalServerError, 0.03), (.serviceUnavailable, 0.07), (.refusedStream, 0.01), (.dropConnection, 0.01)] {
            #expect(abs(Double(counts[fault] ?? 0) / Double(n) - rate * (1 - tokenLevel)) < 0.005, "\(fault)")
        }
        // Later attempts of the same tokens draw afresh.
        let retried = (0..<n).filter { plan.fault(for: .apns, token: TestDevice.apns($0), attempt: 1) == .tooManyRequests }.count
        #expect(abs(Double(retried) / Double(n) - 0.1 * (1 - tokenLevel)) < 0.005)
    }

    @Test("rates outside 0…1, not numbers, or adding up to more than 1 are refused")
    func validation() {
        for (fault, rate) in [(InjectedFault.serviceUnavailable, 1.5), (.tooManyRequests, -0.1), (.quotaExceeded, Double.nan)] {
            var rates = FaultRates()
            rates[fault] = rate
            #expect(throws: EmulatorError.self) { try FaultPlan(rates: rates).validate() }
        }
        var crowded = FaultRates()
        crowded[.serviceUnavailable] = 0.6
        crowded[.internalServerError] = 0.6
        #expect(throws: EmulatorError.self) { try FaultPlan(rates: crowded).validate() }
        // 0.6 + 0.6 on different providers' lists is fine.
        var split = FaultRates()
        split[.tooManyRequests] = 0.6
        split[.quotaExceeded] = 0.6
        #expect(throws: Never.self) { try FaultPlan(rates: split).validate() }
        var goaway = FaultPlan()
        goaway.goawayAfterStreams = 0
        #expect(throws: EmulatorError.self) { try goaway.validate() }
    }
}
