@testable import PushlineDelivery
import Testing

/// The outage breaker under instants of the test's own: no clock, no sleeping.
@Suite("Outage breaker")
struct OutageBreakerTests {
    static let t0 = DeliveryInstant.seconds(1_000)

    static func at(_ seconds: Double) -> DeliveryInstant { t0.advanced(by: .milliseconds(Int64((seconds * 1000).rounded()))) }

    /// Records `count` outcomes at `now`; returns the transitions they made.
    @discardableResult
    static func record(_ breaker: inout OutageBreaker, _ outcome: OutageBreaker.Outcome, count: Int, at now: DeliveryInstant) -> [OutageBreaker.Transition] {
        (0..<count).compactMap { _ in breaker.record(outcome, probe: false, now: now) }
    }

    /// Opens a default breaker at `t0` with twenty failures.
    static func opened() -> OutageBreaker {
        var breaker = OutageBreaker()
        record(&breaker, .failure, count: 20, at: t0)
        return breaker
    }

    @Test("it opens only on at least 20 outcomes within 10 s of which at least 80 % failed")
    func threshold() {
        var breaker = OutageBreaker()
        // 19 failures: too few outcomes to judge, whatever their share.
        #expect(Self.record(&breaker, .failure, count: 19, at: Self.t0).isEmpty)
        #expect(breaker.state == .closed)
        #expect(breaker.permission(now: Self.t0) == .any)
        // The 20th opens it for the first pause, 1 s.
        #expect(breaker.record(.failure, probe: false, now: Self.t0) == .opened(failures: 20, outcomes: 20, pause: .seconds(1)))
        #expect(breaker.state == .open(until: Self.at(1)))
        #expect(breaker.holdsLane)
        #expect(breaker.outages == 1)

        // With 5 healthy answers among them, 20 failures of 25 (80 %) are needed: 19 of 24 (79 %)
        // are not enough.
        var mixed = OutageBreaker()
        Self.record(&mixed, .healthy, count: 5, at: Self.t0)
        #expect(Self.record(&mixed, .failure, count: 19, at: Self.t0).isEmpty)
        #expect(mixed.windowCounts(now: Self.t0) == (failures: 19, outcomes: 24))
        #expect(mixed.record(.failure, probe: false, now: Self.t0) == .opened(failures: 20, outcomes: 25, pause: .seconds(1)))
    }

    @Test("an outage in the middle of a good run opens it after 20 failures in a row, though the window's successes outnumber them")
    func outageAfterAGoodRun() {
        var breaker = OutageBreaker()
        // 100 answers, then the provider fails everything: within the same 10 s, 20 failures
        // are 17 % of the window, yet they are an outage.
        Self.record(&breaker, .healthy, count: 100, at: Self.t0)
        #expect(Self.record(&breaker, .failure, count: 19, at: Self.at(0.5)).isEmpty)
        #expect(breaker.record(.failure, probe: false, now: Self.at(0.5)) == .opened(failures: 20, outcomes: 120, pause: .seconds(1)))
        // One healthy answer among them starts the count again.
        var mixed = OutageBreaker()
        Self.record(&mixed, .healthy, count: 100, at: Self.t0)
        Self.record(&mixed, .failure, count: 19, at: Self.at(0.5))
        Self.record(&mixed, .healthy, count: 1, at: Self.at(0.5))
        #expect(Self.record(&mixed, .failure, count: 19, at: Self.at(0.6)).isEmpty)
        #expect(mixed.state == .closed)
    }

    @Test("neutral outcomes (refused, cancelled) do not count, and a healthy one never opens it")
    func neutralAndHealthy() {
        var breaker = OutageBreaker()
        Self.record(&breaker, .neutral, count: 100, at: Self.t0)
        Self.record(&breaker, .failure, count: 19, at: Self.t0)
        #expect(breaker.windowCounts(now: Self.t0) == (failures: 19, outcomes: 19))
        #expect(breaker.state == .closed)
        // A healthy answer is an outcome, but never the one that opens it.
        #expect(breaker.record(.healthy, probe: false, now: Self.t0) == nil)
        #expect(breaker.state == .closed)
    }

    @Test("the window slides: failures more than 10 s old no longer count")
    func windowSlides() {
        var recent = OutageBreaker()
        Self.record(&recent, .failure, count: 19, at: Self.t0)
        // 9 s later the 19 still count: the 20th opens it.
        #expect(recent.record(.failure, probe: false, now: Self.at(9)) != nil)

        var stale = OutageBreaker()
        Self.record(&stale, .failure, count: 19, at: Self.t0)
        // 11 s later they are gone: one failure of one outcome is below the minimum.
        #expect(stale.record(.failure, probe: false, now: Self.at(11)) == nil)
        #expect(stale.windowCounts(now: Self.at(11)) == (failures: 1, outcomes: 1))
        #expect(stale.state == .closed)
    }

    @Test("open: nothing starts until the pause ends, then one probe at a time")
    func probesOneAtATime() {
        var breaker = Self.opened()
        #expect(breaker.permission(now: Self.at(0.5)) == .none(until: Self.at(1)))
        #expect(breaker.permission(now: Self.at(1)) == .probe)
        breaker.probeStarted()
        // While the probe is out, nothing else starts, and no time is named: its end decides.
        #expect(breaker.permission(now: Self.at(1.5)) == .none(until: nil))
        #expect(breaker.holdsLane)
    }

    @Test("failed probes double the pause up to 30 s: 2, 4, 8, 16, 30, 30")
    func backoff() {
        var breaker = Self.opened()
        var now = Self.at(1)
        var pauses: [Duration] = []
        for _ in 0..<6 {
            #expect(breaker.permission(now: now) == .probe)
            breaker.probeStarted()
            guard case .reopened(let pause) = breaker.record(.failure, probe: true, now: now) else {
                Issue.record("a failed probe reopens the breaker")
                return
            }
            pauses.append(pause)
            #expect(breaker.permission(now: now) == .none(until: now.advanced(by: pause)))
            now = now.advanced(by: pause)
        }
        #expect(pauses == [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
    }

    @Test("a healthy probe closes it; the window starts empty, the next outage starts from 1 s again")
    func closes() {
        var breaker = Self.opened()
        _ = breaker.permission(now: Self.at(1))
        breaker.probeStarted()
        _ = breaker.record(.failure, probe: true, now: Self.at(1))
        _ = breaker.permission(now: Self.at(3))
        breaker.probeStarted()
        #expect(breaker.record(.healthy, probe: true, now: Self.at(3.25)) == .closed(outage: .milliseconds(3250)))
        #expect(breaker.state == .closed)
        #expect(!breaker.holdsLane)
        #expect(breaker.permission(now: Self.at(3.25)) == .any)
        // The twenty failures before the outage were forgotten: 19 more do not open it.
        #expect(Self.record(&breaker, .failure, count: 19, at: Self.at(4)).isEmpty)
        #expect(breaker.record(.failure, probe: false, now: Self.at(4)) == .opened(failures: 20, outcomes: 20, pause: .seconds(1)))
        #expect(breaker.outages == 2)
    }

    @Test("while open, answers to requests sent before it opened change nothing; half-open, any healthy answer closes it")
    func staleAnswers() {
        var breaker = Self.opened()
        #expect(breaker.record(.healthy, probe: false, now: Self.at(0.5)) == nil)
        #expect(breaker.state == .open(until: Self.at(1)))
        _ = breaker.permission(now: Self.at(1))
        breaker.probeStarted()
        // Half-open: a stale failure is not the probe's, so it reopens nothing.
        #expect(breaker.record(.failure, probe: false, now: Self.at(1.1)) == nil)
        #expect(breaker.state == .halfOpen(probing: true))
        // But a healthy answer, from whichever request, shows the provider answers again.
        #expect(breaker.record(.healthy, probe: false, now: Self.at(1.2)) == .closed(outage: .milliseconds(1200)))
    }

    @Test("a probe that ends neither way (refused, cancelled) lets the next probe go")
    func neutralProbe() {
        var breaker = Self.opened()
        _ = breaker.permission(now: Self.at(1))
        breaker.probeStarted()
        #expect(breaker.record(.neutral, probe: true, now: Self.at(1.1)) == nil)
        #expect(breaker.permission(now: Self.at(1.1)) == .probe)
    }

    @Test("an outage longer than maximumOutage: the breaker stops holding the lane until a healthy answer arms it again")
    func givesUp() {
        var settings = OutageBreaker.Settings()
        settings.maximumOutage = .seconds(60)
        var breaker = OutageBreaker(settings: settings)
        Self.record(&breaker, .failure, count: 20, at: Self.t0)
        var now = Self.t0
        var transitions: [OutageBreaker.Transition] = []
        while breaker.holdsLane, transitions.count < 20 {
            if case .none(let until?) = breaker.permission(now: now) { now = until }
            #expect(breaker.permission(now: now) == .probe)
            breaker.probeStarted()
            if let transition = breaker.record(.failure, probe: true, now: now) { transitions.append(transition) }
        }
        // 1 + 2 + 4 + 8 + 16 = 31 s, + 30 = 61 s ≥ 60 s: the probe at 61 s gives up.
        #expect(transitions.last == .gaveUp(outage: .seconds(61)))
        #expect(breaker.state == .exhausted)
        #expect(breaker.permission(now: now) == .any)
        // Failures no longer open it.
        #expect(Self.record(&breaker, .failure, count: 50, at: now).isEmpty)
        #expect(breaker.record(.healthy, probe: false, now: now) == .closed(outage: .seconds(61)))
        #expect(Self.record(&breaker, .failure, count: 20, at: now).count == 1)
        #expect(breaker.holdsLane)
    }

    @Test("hostile settings are made sane: no zero window, no zero pause, no fraction above one")
    func sanitized() {
        var settings = OutageBreaker.Settings()
        settings.window = .zero
        settings.minimumOutcomes = -3
        settings.failureFraction = .nan
        settings.initialPause = .zero
        settings.maximumPause = .zero
        let breaker = OutageBreaker(settings: settings)
        #expect(breaker.settings.minimumOutcomes == 1)
        #expect(breaker.settings.failureFraction == 0.8)
        #expect(breaker.settings.initialPause > .zero)
        #expect(breaker.settings.maximumPause >= breaker.settings.initialPause)
        var one = breaker
        #expect(one.record(.failure, probe: false, now: Self.t0) != nil)
    }
}
