import PushlineDelivery
import PushlineCore
import Testing

@Suite("Provider rate limiter")
struct ProviderRateLimiterTests {
    static func throttled(_ scope: ThrottleScope = .provider, retryAfter: String? = nil) -> ResponseClassification {
        ResponseClassification(outcome: .throttled(scope), status: 429, reason: "TooManyRequests",
                               retryAfter: retryAfter.flatMap { RetryAfter(headerValue: $0) })
    }
    static let sent = ResponseClassification(outcome: .sent(providerID: nil), status: 200, reason: "sent")

    @Test("a bucket of 2 at 10/s: two now, the third in 100 ms, never a sleep")
    func bucket() throws {
        var limiter = ProviderRateLimiter(rate: try SendRate(parsing: "10/s", burst: 2), now: .seconds(0))
        #expect(limiter.acquire(now: .seconds(0)) == .sendNow)
        #expect(limiter.acquire(now: .seconds(0)) == .sendNow)
        #expect(limiter.acquire(now: .seconds(0)) == .waitUntil(.seconds(0.1)))
        #expect(limiter.acquire(now: .seconds(0.1)) == .sendNow)
        // An idle spell fills the bucket to its burst, no more.
        #expect(limiter.acquire(now: .seconds(10)) == .sendNow)
        #expect(limiter.acquire(now: .seconds(10)) == .sendNow)
        #expect(limiter.acquire(now: .seconds(10)) == .waitUntil(.seconds(10.1)))
    }

    @Test("sustained: 10,000/s admits 10,000 (+ the burst) in a second of asking")
    func sustained() throws {
        var limiter = ProviderRateLimiter(rate: .fcmDefault, now: .seconds(0))
        var sent = 0
        var now = DeliveryInstant.seconds(0)
        while now < .seconds(1) {
            switch limiter.acquire(now: now) {
            case .sendNow: sent += 1
            case .waitUntil(let t): now = t
            }
        }
        // 1,000 burst at t=0 plus 10,000 over the second, within rounding of the last step.
        #expect((10_999...11_001).contains(sent))
    }

    @Test("a throttle halves the rate once per second, down to the floor")
    func halving() throws {
        var limiter = ProviderRateLimiter(rate: try SendRate(parsing: "1000/s"), now: .seconds(0))
        limiter.observe(Self.throttled(), now: .seconds(1), unixTime: 0)
        #expect(limiter.currentRate == 500)
        // The other requests in flight report the same throttle: no second halving.
        limiter.observe(Self.throttled(), now: .seconds(1.5), unixTime: 0)
        #expect(limiter.currentRate == 500)
        limiter.observe(Self.throttled(), now: .seconds(2), unixTime: 0)
        #expect(limiter.currentRate == 250)
        for second in 3...20 { limiter.observe(Self.throttled(), now: .seconds(Double(second)), unixTime: 0) }
        #expect(limiter.currentRate == 1000.0 / 64)
        #expect(limiter.floorRate == 1000.0 / 64)
        // A slow configured rate floors at 1/s (not below), never above the configured rate.
        var slow = ProviderRateLimiter(rate: try SendRate(parsing: "3/s"), now: .seconds(0))
        for second in 1...10 { slow.recordThrottle(now: .seconds(Double(second))) }
        #expect(slow.currentRate == 1)
    }

    @Test("it climbs back additively, 5 % of the configured rate per second with a success, up to the configured rate")
    func additiveClimb() throws {
        var limiter = ProviderRateLimiter(rate: try SendRate(parsing: "1000/s"), now: .seconds(0))
        limiter.observe(Self.throttled(), now: .seconds(10), unixTime: 0)
        #expect(limiter.currentRate == 500)
        limiter.observe(Self.sent, now: .seconds(10.5), unixTime: 0)
        #expect(limiter.currentRate == 500)
        limiter.observe(Self.sent, now: .seconds(11), unixTime: 0)
        #expect(limiter.currentRate == 550)
        limiter.observe(Self.sent, now: .seconds(11.9), unixTime: 0)
        #expect(limiter.currentRate == 550)
        var t = 12.0
        var rates: [Double] = []
        while t <= 25 {
            limiter.observe(Self.sent, now: .seconds(t), unixTime: 0)
            rates.append(limiter.currentRate)
            t += 1
        }
        #expect(rates.prefix(9).map { $0.rounded() } == [600, 650, 700, 750, 800, 850, 900, 950, 1000])
        #expect(rates.allSatisfy { $0 <= 1000 })
        #expect(rates.last == 1000)
        // The bucket's pace follows the rate: at 500/s a drained bucket waits 2 ms.
        var halved = ProviderRateLimiter(rate: try SendRate(parsing: "1000/s", burst: 1), now: .seconds(0))
        halved.recordThrottle(now: .seconds(0))
        #expect(halved.acquire(now: .seconds(0)) == .sendNow)
        #expect(halved.acquire(now: .seconds(0)) == .waitUntil(.seconds(0.002)))
    }

    @Test("Retry-After pauses the bucket until then; a shorter one does not shorten it")
    func retryAfterPause() throws {
        var limiter = ProviderRateLimiter(rate: try SendRate(parsing: "100/s"), now: .seconds(0))
        limiter.observe(Self.throttled(retryAfter: "30"), now: .seconds(5), unixTime: 1_000)
        #expect(limiter.pausedUntil == .seconds(35))
        #expect(limiter.acquire(now: .seconds(34.9)) == .waitUntil(.seconds(35)))
        limiter.observe(Self.throttled(retryAfter: "2"), now: .seconds(10), unixTime: 1_005)
        #expect(limiter.pausedUntil == .seconds(35))
        #expect(limiter.acquire(now: .seconds(35)) == .sendNow)
        // It restarts from one request, not from a burst saved up during the pause.
        #expect(limiter.acquire(now: .seconds(35)) != .sendNow)

        // An HTTP-date, read against the wall clock: 784111777 is 20 s after 784111757.
        var dated = ProviderRateLimiter(rate: try SendRate(parsing: "100/s"), now: .seconds(0))
        dated.observe(Self.throttled(retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT"), now: .seconds(1), unixTime: 784_111_757)
        #expect(dated.pausedUntil == .seconds(21))

        // A 503 with Retry-After pauses too; without one it does not.
        var unavailable = ProviderRateLimiter(rate: try SendRate(parsing: "100/s"), now: .seconds(0))
        unavailable.observe(ResponseClassification(outcome: .retryable(newConnection: false), status: 503, reason: "ServiceUnavailable"), now: .seconds(1), unixTime: 0)
        #expect(unavailable.pausedUntil == nil)
        unavailable.observe(ResponseClassification(outcome: .retryable(newConnection: false), status: 503, reason: "ServiceUnavailable",
                                                   retryAfter: .delay(.seconds(7))), now: .seconds(1), unixTime: 0)
        #expect(unavailable.pausedUntil == .seconds(8))
        #expect(unavailable.currentRate == 100)

        // Hostile: a day-long Retry-After pauses at most 10 minutes.
        var capped = ProviderRateLimiter(rate: try SendRate(parsing: "100/s"), now: .seconds(0))
        capped.observe(Self.throttled(retryAfter: "86400"), now: .seconds(0), unixTime: 0)
        #expect(capped.pausedUntil == .seconds(600))
    }

    @Test("FCM QUOTA_EXCEEDED pauses the project at least 60 s, longer if Retry-After says so, and halves")
    func projectQuota() throws {
        var limiter = ProviderRateLimiter(rate: .fcmDefault, now: .seconds(0))
        limiter.observe(Self.throttled(.project), now: .seconds(100), unixTime: 0)
        #expect(limiter.pausedUntil == .seconds(160))
        #expect(limiter.currentRate == 5_000)
        #expect(limiter.acquire(now: .seconds(159.999)) == .waitUntil(.seconds(160)))
        #expect(limiter.acquire(now: .seconds(160)) == .sendNow)

        var shortRetry = ProviderRateLimiter(rate: .fcmDefault, now: .seconds(0))
        shortRetry.observe(Self.throttled(.project, retryAfter: "10"), now: .seconds(0), unixTime: 0)
        #expect(shortRetry.pausedUntil == .seconds(60))
        var longRetry = ProviderRateLimiter(rate: .fcmDefault, now: .seconds(0))
        longRetry.observe(Self.throttled(.project, retryAfter: "120"), now: .seconds(0), unixTime: 0)
        #expect(longRetry.pausedUntil == .seconds(120))

        // Another provider's limiter is untouched.
        var apns = ProviderRateLimiter(rate: try SendRate(parsing: "5000/s"), now: .seconds(0))
        #expect(apns.acquire(now: .seconds(100)) == .sendNow)
    }

    @Test("answers that say nothing about load leave the rate alone")
    func neutral() throws {
        var limiter = ProviderRateLimiter(rate: try SendRate(parsing: "100/s"), now: .seconds(0))
        for outcome in [ResponseOutcome.invalidToken(timestamp: 1), .permanent, .configurationError, .refreshCredentials, .retryable(newConnection: true)] {
            limiter.observe(ResponseClassification(outcome: outcome, status: 400, reason: "x"), now: .seconds(1), unixTime: 0)
        }
        #expect(limiter.currentRate == 100)
        #expect(limiter.pausedUntil == nil)
    }
}

@Suite("In-flight limit")
struct InFlightLimitTests {
    @Test("connections × streams slots")
    func slots() {
        var limit = InFlightLimit(connections: 2, streamsPerConnection: 3)
        #expect(limit.capacity == 6)
        var taken = 0
        for _ in 0..<10 where limit.tryAcquire() { taken += 1 }
        #expect(taken == 6)
        #expect(limit.isFull)
        limit.release()
        #expect(!limit.isFull)
        let again = limit.tryAcquire()
        #expect(again)
        // A stray release does not go below zero.
        var empty = InFlightLimit(connections: 1, streamsPerConnection: 1)
        let first = empty.tryAcquire()
        empty.release()
        #expect(first && empty.inFlight == 0)
        #expect(InFlightLimit(connections: 0, streamsPerConnection: -5).capacity == 1)
        #expect(InFlightLimit(connections: .max, streamsPerConnection: .max).capacity == SendingLimits.connections.upperBound * SendingLimits.streamsPerConnection.upperBound)
    }
}

@Suite("Rate limiter invariants")
struct RateLimiterInvariantTests {
    @Test("under a seeded storm of answers the rate stays within floor…configured, waits lie ahead, pauses are bounded")
    func storm() throws {
        var random = SeededRandomSource(seed: 77)
        let rate = try SendRate(parsing: "2000/s", burst: 50)
        var limiter = ProviderRateLimiter(rate: rate, now: .seconds(0))
        var now = DeliveryInstant.seconds(0)
        let outcomes: [ResponseOutcome] = [.sent(providerID: nil), .throttled(.provider), .throttled(.project), .retryable(newConnection: false), .permanent]
        var sent = 0
        for _ in 0..<20_000 {
            now = now.advanced(by: .microseconds(Int64.random(in: 0...2_000, using: &random)))
            switch limiter.acquire(now: now) {
            case .sendNow: sent += 1
            case .waitUntil(let t):
                #expect(t > now)
                #expect(t <= now.advanced(by: .seconds(600)))
            }
            let outcome = outcomes[Int.random(in: 0..<100, using: &random) < 97 ? 0 : Int.random(in: 1..<outcomes.count, using: &random)]
            let retryAfter: RetryAfter? = Bool.random(using: &random) ? .delay(.seconds(Int64.random(in: 0...5, using: &random))) : nil
            limiter.observe(ResponseClassification(outcome: outcome, status: 429, reason: "x", retryAfter: retryAfter), now: now, unixTime: 0)
            #expect(limiter.currentRate >= limiter.floorRate && limiter.currentRate <= rate.perSecond)
            if let paused = limiter.pausedUntil { #expect(paused <= now.advanced(by: .seconds(600))) }
        }
        #expect(sent > 0)
    }
}
