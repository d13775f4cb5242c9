/// A provider-wide outage breaker for one lane: when most of what the provider did within a
/// window was fail (a 5xx answer, or a request lost, reset or never connected), the whole lane
/// stops sending for a while, then sends one probe at a time until one is answered, then
/// resumes. A value over an injected instant: it reads no clock and never waits; the lane asks
/// it whether a request may start and tells it how each one ended (docs/delivery.md, "Outages").
///
/// - **Closed** (sending): outcomes are counted in a sliding window of `window` (ten buckets).
///   When at least `minimumOutcomes` outcomes fell in it and at least `failureFraction` of them
///   were failures, the breaker opens; so it does after `minimumOutcomes` failures in a row
///   within one window, however healthy the window was before them (an outage that starts in the middle of a
///   good run would otherwise need the window's successes outnumbered first, and every
///   request in flight would spend its attempts meanwhile).
/// - **Open** until an instant: nothing starts. The first pause is `initialPause`; each failed
///   probe doubles it, up to `maximumPause`.
/// - **Half-open**: one probe at a time. A healthy answer closes the breaker (the window starts
///   empty again); a failed probe opens it again for the next, longer pause; a probe that ended
///   neither way (refused, cancelled) lets the next probe go.
/// - **Exhausted**: the outage outlasted `maximumOutage` (a failed probe found it so): the
///   breaker stops holding the lane, so every request spends its own retry budget and the run
///   ends, until a healthy answer arms it again.
///
/// While the breaker holds the lane (open or half-open), the lane does not count the failures
/// it reports against a request's attempts: the retry budget spans the outage (the time budget
/// still runs).
public struct OutageBreaker: Sendable {
    public struct Settings: Sendable, Equatable {
        /// How far back outcomes count.
        public var window: Duration = .seconds(10)
        /// Fewer outcomes than this in the window never open the breaker: a lane sending a
        /// handful of requests is judged per request.
        public var minimumOutcomes = 20
        /// The share of failures among the window's outcomes that opens the breaker.
        public var failureFraction = 0.8
        /// The first pause; each failed probe doubles it.
        public var initialPause: Duration = .seconds(1)
        public var maximumPause: Duration = .seconds(30)
        /// From the first opening, how long the breaker may hold the lane before it gives up
        /// (the lane sets it to the retry policy's total time: no request could wait longer).
        public var maximumOutage: Duration = .seconds(600)

        public init() {}

        /// Durations positive, counts at least 1, the fraction within (0, 1] (NaN as the default).
        var sanitized: Settings {
            var s = self
            let defaults = Settings()
            if !(s.failureFraction > 0) { s.failureFraction = defaults.failureFraction }
            s.failureFraction = Swift.min(s.failureFraction, 1)
            s.minimumOutcomes = Swift.max(s.minimumOutcomes, 1)
            s.window = Swift.max(s.window, .milliseconds(10))
            s.initialPause = Swift.max(s.initialPause, .milliseconds(1))
            s.maximumPause = Swift.max(s.maximumPause, s.initialPause)
            s.maximumOutage = Swift.max(s.maximumOutage, .zero)
            return s
        }
    }

    /// What one finished request says about the provider.
    public enum Outcome: Sendable, Equatable {
        /// The provider answered, and not with a 5xx.
        case healthy
        /// A 5xx, or the request was lost, reset or could not be sent for want of a connection.
        case failure
        /// Says nothing about an outage (refused unprocessed, cancelled, an answer we rejected).
        case neutral
    }

    public enum State: Sendable, Equatable {
        case closed
        case open(until: DeliveryInstant)
        case halfOpen(probing: Bool)
        case exhausted
    }

    /// Whether a request may start now.
    public enum Permission: Sendable, Equatable {
        /// As many as the lane's other limits allow.
        case any
        /// One probe (call `probeStarted` when it goes).
        case probe
        /// None; ask again at this instant (nil: when the probe in flight ends).
        case none(until: DeliveryInstant?)
    }

    /// What a recorded outcome changed, for the lane's log.
    public enum Transition: Sendable, Equatable {
        case opened(failures: Int, outcomes: Int, pause: Duration)
        case reopened(pause: Duration)
        case closed(outage: Duration)
        case gaveUp(outage: Duration)
    }

    private struct Bucket {
        var epoch: Int64 = .min
        var failures = 0
        var outcomes = 0
    }

    private static let bucketCount = 10

    public let settings: Settings
    public private(set) var state = State.closed
    /// Times the breaker opened from closed (one outage, however many probes it took).
    public private(set) var outages = 0
    private var buckets: [Bucket]
    private let bucketNanoseconds: Int64
    private var pause: Duration
    private var outageStart: DeliveryInstant?
    /// Failures since the last healthy answer, all within one `window` of the first (closed
    /// only).
    private var failuresInARow = 0
    private var runStartedAt = DeliveryInstant(nanoseconds: 0)

    public init(settings: Settings = Settings()) {
        self.settings = settings.sanitized
        buckets = Array(repeating: Bucket(), count: Self.bucketCount)
        bucketNanoseconds = Swift.max(1, DurationMath.nanoseconds(self.settings.window) / Int64(Self.bucketCount))
        pause = self.settings.initialPause
    }

    /// The breaker holds the lane: open or half-open (failures now are the outage's, not the
    /// request's).
    public var holdsLane: Bool {
        switch state {
        case .open, .halfOpen: true
        case .closed, .exhausted: false
        }
    }

    /// Failures and outcomes within the window ending at `now` (closed only; zero otherwise).
    public func windowCounts(now: DeliveryInstant) -> (failures: Int, outcomes: Int) {
        let current = now.nanoseconds / bucketNanoseconds
        var failures = 0
        var outcomes = 0
        for bucket in buckets where bucket.epoch > current - Int64(Self.bucketCount) && bucket.epoch <= current {
            failures += bucket.failures
            outcomes += bucket.outcomes
        }
        return (failures, outcomes)
    }

    /// May a request start at `now`? An open breaker whose pause is over turns half-open here.
    public mutating func permission(now: DeliveryInstant) -> Permission {
        switch state {
        case .closed, .exhausted:
            return .any
        case .open(let until):
            guard now >= until else { return .none(until: until) }
            state = .halfOpen(probing: false)
            return .probe
        case .halfOpen(let probing):
            return probing ? .none(until: nil) : .probe
        }
    }

    /// The probe `permission` allowed went on its way.
    public mutating func probeStarted() {
        if case .halfOpen = state { state = .halfOpen(probing: true) }
    }

    /// How a request ended; `probe`: it was the half-open breaker's probe.
    public mutating func record(_ outcome: Outcome, probe: Bool, now: DeliveryInstant) -> Transition? {
        switch state {
        case .closed:
            guard outcome != .neutral else { return nil }
            add(failure: outcome == .failure, now: now)
            guard outcome == .failure else {
                failuresInARow = 0
                return nil
            }
            if failuresInARow == 0 || now.duration(since: runStartedAt) > settings.window {
                failuresInARow = 0
                runStartedAt = now
            }
            failuresInARow &+= 1
            let (failures, outcomes) = windowCounts(now: now)
            let mostlyFailing = outcomes >= settings.minimumOutcomes && Double(failures) >= settings.failureFraction * Double(outcomes)
            guard mostlyFailing || failuresInARow >= settings.minimumOutcomes else { return nil }
            failuresInARow = 0
            outages &+= 1
            outageStart = now
            pause = settings.initialPause
            state = .open(until: now.advanced(by: pause))
            return .opened(failures: failures, outcomes: outcomes, pause: pause)
        case .open:
            // Answers to requests sent before the breaker opened: stale either way.
            return nil
        case .halfOpen(let probing):
            if outcome == .healthy { return close(now: now) }
            guard probe else { return nil }
            if outcome == .neutral {
                if probing { state = .halfOpen(probing: false) }
                return nil
            }
            let outage = now.duration(since: outageStart ?? now)
            if outage >= settings.maximumOutage {
                state = .exhausted
                return .gaveUp(outage: outage)
            }
            pause = Swift.min(pause * 2, settings.maximumPause)
            state = .open(until: now.advanced(by: pause))
            return .reopened(pause: pause)
        case .exhausted:
            return outcome == .healthy ? close(now: now) : nil
        }
    }

    private mutating func close(now: DeliveryInstant) -> Transition {
        let outage = now.duration(since: outageStart ?? now)
        state = .closed
        outageStart = nil
        failuresInARow = 0
        pause = settings.initialPause
        buckets = Array(repeating: Bucket(), count: Self.bucketCount)
        return .closed(outage: outage)
    }

    private mutating func add(failure: Bool, now: DeliveryInstant) {
        let epoch = now.nanoseconds / bucketNanoseconds
        let index = Int(((epoch % Int64(Self.bucketCount)) + Int64(Self.bucketCount)) % Int64(Self.bucketCount))
        if buckets[index].epoch != epoch { buckets[index] = Bucket(epoch: epoch) }
        buckets[index].outcomes += 1
        if failure { buckets[index].failures += 1 }
    }
}
