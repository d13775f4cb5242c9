import PushlineDelivery
import Testing

@Suite("Retry policy")
struct RetryPolicyTests {
    let policy = RetryPolicy(maximumAttempts: 6, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(4), maximumTotalTime: .seconds(600))

    /// Retries a request that keeps failing until the policy gives up; returns the delays.
    func schedule(seed: UInt64, failure: RetryPolicy.Failure = .init()) -> (delays: [Duration], end: RetryPolicy.Decision) {
        var random = SeededRandomSource(seed: seed)
        var now = DeliveryInstant.seconds(0)
        var state = RetryPolicy.State(firstSentAt: now)
        var delays: [Duration] = []
        while true {
            let decision = policy.decide(after: failure, state: &state, now: now, unixTime: 0, random: &random)
            guard case .retry(let at, _) = decision else { return (delays, decision) }
            delays.append(at.duration(since: now))
            now = at
            state.recordSend()
        }
    }

    @Test("full jitter: retry n waits uniformly within 0…min(4 s, 0.5 s × 2^(n−1)); 6 sends in all")
    func jitterBounds() {
        let caps: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4)]
        var sawBelowHalf = Array(repeating: false, count: 5)
        var sawAboveHalf = Array(repeating: false, count: 5)
        for seed in 0..<200 as Range<UInt64> {
            let (delays, end) = schedule(seed: seed)
            #expect(end == .giveUp(.attemptsExhausted))
            #expect(delays.count == 5)
            for (index, delay) in delays.enumerated() {
                #expect(delay >= .zero && delay <= caps[index], "seed \(seed) retry \(index + 1): \(delay)")
                if delay < caps[index] / 2 { sawBelowHalf[index] = true } else { sawAboveHalf[index] = true }
            }
        }
        // Full jitter spreads over the whole range, not just near the cap.
        #expect(sawBelowHalf.allSatisfy { $0 } && sawAboveHalf.allSatisfy { $0 })
    }

    @Test("a seed gives one schedule; another seed another")
    func seeded() {
        #expect(schedule(seed: 7).delays == schedule(seed: 7).delays)
        #expect(schedule(seed: 7).delays != schedule(seed: 8).delays)
    }

    @Test("Retry-After wins over a shorter backoff, as seconds or as a date")
    func retryAfterPrecedence() {
        var random = SeededRandomSource(seed: 1)
        var state = RetryPolicy.State(firstSentAt: .seconds(0))
        let seconds = policy.decide(after: .init(retryAfter: .delay(.seconds(30))), state: &state, now: .seconds(2), unixTime: 0, random: &random)
        #expect(seconds == .retry(at: .seconds(32), possibleDuplicate: false))
        let date = policy.decide(after: .init(retryAfter: .date(unixTime: 1_045)), state: &state, now: .seconds(2), unixTime: 1_000, random: &random)
        #expect(date == .retry(at: .seconds(47), possibleDuplicate: false))
        // A Retry-After shorter than the drawn backoff does not shorten it: a 0 s Retry-After at
        // retry 4 still waits the jittered 0…4 s, which is what the same seed draws alone.
        var a = SeededRandomSource(seed: 99), b = SeededRandomSource(seed: 99)
        var s1 = RetryPolicy.State(firstSentAt: .seconds(0)), s2 = s1
        for _ in 0..<3 { s1.recordSend(); s2.recordSend() }
        let with = policy.decide(after: .init(retryAfter: .delay(.zero)), state: &s1, now: .seconds(1), unixTime: 0, random: &a)
        let without = policy.decide(after: .init(), state: &s2, now: .seconds(1), unixTime: 0, random: &b)
        #expect(with == without)
    }

    @Test("bounded total time: a retry past 10 minutes from the first send is given up")
    func deadline() {
        var random = SeededRandomSource(seed: 3)
        var state = RetryPolicy.State(firstSentAt: .seconds(100))
        #expect(policy.decide(after: .init(retryAfter: .delay(.seconds(600))), state: &state, now: .seconds(100), unixTime: 0, random: &random)
                == .retry(at: .seconds(700), possibleDuplicate: false))
        #expect(policy.decide(after: .init(retryAfter: .delay(.seconds(600))), state: &state, now: .seconds(101), unixTime: 0, random: &random)
                == .giveUp(.deadlineExceeded))
    }

    @Test("no status after the body may have been written: resent once, marked possible_duplicate; never a third copy")
    func ambiguousWrite() {
        var random = SeededRandomSource(seed: 5)
        var state = RetryPolicy.State(firstSentAt: .seconds(0))
        let ambiguous = RetryPolicy.Failure(mayHaveBeenDelivered: true)
        guard case .retry(_, let duplicate) = policy.decide(after: ambiguous, state: &state, now: .seconds(0), unixTime: 0, random: &random) else {
            Issue.record("the first ambiguous failure is resent")
            return
        }
        #expect(duplicate)
        #expect(state.possibleDuplicate)
        state.recordSend()
        // A definite failure (a 503) after that may still be retried, still marked.
        guard case .retry(_, let stillMarked) = policy.decide(after: .init(), state: &state, now: .seconds(1), unixTime: 0, random: &random) else {
            Issue.record("a 503 after the resend is retried")
            return
        }
        #expect(stillMarked)
        state.recordSend()
        #expect(policy.decide(after: ambiguous, state: &state, now: .seconds(5), unixTime: 0, random: &random)
                == .giveUp(.ambiguousDeliveryAlreadyResent))

        // No status but never written (connect failed): an ordinary retry, not a duplicate.
        let classified = ResponseClassification(outcome: .retryable(newConnection: true), status: 0, reason: "no_response")
        #expect(RetryPolicy.Failure(classified, bodyMayHaveBeenWritten: false) == .init())
        #expect(RetryPolicy.Failure(classified, bodyMayHaveBeenWritten: true).mayHaveBeenDelivered)
    }

    @Test("a refused (unprocessed) send costs no attempt and marks nothing; refusals have their own bound, then refusals_exhausted")
    func refusals() {
        let policy = RetryPolicy(maximumAttempts: 2, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(4), maximumTotalTime: .seconds(600), maximumRefusals: 3)
        var random = SeededRandomSource(seed: 11)
        var state = RetryPolicy.State(firstSentAt: .seconds(0))
        var now = DeliveryInstant.seconds(0)
        // "May have been delivered" cannot hold for a send proven unprocessed.
        let refused = RetryPolicy.Failure(mayHaveBeenDelivered: true, unprocessed: true)
        #expect(!refused.mayHaveBeenDelivered)
        for refusal in 1...3 {
            guard case .retry(let at, let duplicate) = policy.decide(after: refused, state: &state, now: now, unixTime: 0, random: &random) else {
                Issue.record("refusal \(refusal) is retried")
                return
            }
            #expect(!duplicate)
            // The backoff grows with the refusals: 0…0.5 s, 0…1 s, 0…2 s.
            #expect(at.duration(since: now) <= .milliseconds(250 << refusal))
            now = at
            state.recordSend()
        }
        #expect(state.attempts == 4 && state.countedAttempts == 1 && state.refusals == 3)
        // A fourth refusal is one too many.
        #expect(policy.decide(after: refused, state: &state, now: now, unixTime: 0, random: &random) == .giveUp(.refusalsExhausted))
        #expect(!state.possibleDuplicate)
    }

    @Test("a failure during an outage costs no attempt; the total time still bounds it")
    func duringOutage() {
        let policy = RetryPolicy(maximumAttempts: 2, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(4), maximumTotalTime: .seconds(60))
        var random = SeededRandomSource(seed: 12)
        var state = RetryPolicy.State(firstSentAt: .seconds(0))
        let outage = RetryPolicy.Failure(duringOutage: true)
        // Ten failures while the breaker holds the lane: two attempts allowed, none spent.
        for second in 0..<10 {
            guard case .retry = policy.decide(after: outage, state: &state, now: .seconds(Double(second)), unixTime: 0, random: &random) else {
                Issue.record("failure \(second + 1) during the outage is retried")
                return
            }
            state.recordSend()
        }
        #expect(state.countedAttempts == 1)
        // The outage is over: the next failure counts, and the one after it is one too many.
        guard case .retry = policy.decide(after: .init(), state: &state, now: .seconds(10), unixTime: 0, random: &random) else {
            Issue.record("the first counted failure is retried")
            return
        }
        state.recordSend()
        #expect(policy.decide(after: .init(), state: &state, now: .seconds(11), unixTime: 0, random: &random) == .giveUp(.attemptsExhausted))
        // Past the total time an outage forgives nothing.
        var late = RetryPolicy.State(firstSentAt: .seconds(0))
        #expect(policy.decide(after: outage, state: &late, now: .seconds(61), unixTime: 0, random: &random) == .giveUp(.deadlineExceeded))
    }

    @Test("extreme settings neither trap nor overflow")
    func extremes() {
        let wild = RetryPolicy(maximumAttempts: .max, initialBackoff: .seconds(Int64.max / 2), maximumBackoff: .seconds(Int64.max), maximumTotalTime: .seconds(Int64.max))
        var random = SeededRandomSource(seed: 0)
        var state = RetryPolicy.State(firstSentAt: .seconds(0))
        for _ in 0..<200 {
            _ = wild.decide(after: .init(retryAfter: .delay(.seconds(Int64.max))), state: &state, now: .seconds(1), unixTime: .max, random: &random)
            state.recordSend()
        }
        #expect(wild.maximumAttempts == 100)
        let zero = RetryPolicy(maximumAttempts: 0, initialBackoff: .zero, maximumBackoff: .zero, maximumTotalTime: .zero)
        var s = RetryPolicy.State(firstSentAt: .seconds(0))
        #expect(zero.decide(after: .init(), state: &s, now: .seconds(0), unixTime: 0, random: &random) == .giveUp(.attemptsExhausted))
    }
}
