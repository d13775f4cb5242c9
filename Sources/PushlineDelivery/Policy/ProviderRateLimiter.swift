/// The sending rate of one provider (one APNs key, one FCM project): a token bucket with
/// adaptive slowdown and pauses. It never waits itself: `acquire` says "send now" or "not
/// before T", and the sender schedules. A value type over an injected time; one per provider,
/// so a throttled provider never slows another.
///
/// - Bucket: refills at the current rate up to a burst that scales with it.
/// - Slowdown (AIMD): a throttle halves the rate, at most once per `decreaseCooldown` (the
///   requests in flight when a provider starts refusing all report it), never below the
///   floor; each `increaseInterval` that saw a success and no throttle adds
///   `increaseFraction` of the configured rate, up to the configured rate.
/// - Pauses: a Retry-After on a throttled or retryable answer pauses the bucket until then
///   (at most `maximumPause`); FCM QUOTA_EXCEEDED pauses it at least `projectQuotaPause`.
///   A later, shorter pause never shortens one in force.
public struct ProviderRateLimiter: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The rate never drops below this fraction of the configured rate (nor 1/s).
        public var floorFraction: Double = 1.0 / 64
        public var decreaseCooldown: Duration = .seconds(1)
        public var increaseInterval: Duration = .seconds(1)
        /// From half the rate back to full in 10 intervals.
        public var increaseFraction: Double = 0.05
        public var maximumPause: Duration = .seconds(600)
        /// Google: back off at least a minute when the message-rate quota is spent.
        public var projectQuotaPause: Duration = .seconds(60)

        public init() {}

        /// Fractions within 0…1 (NaN as the default), durations not negative: a setting read from
        /// configuration cannot make a rate of zero or NaN.
        var sanitized: Settings {
            var s = self
            let defaults = Settings()
            func fraction(_ value: Double, _ fallback: Double) -> Double {
                value.isNaN ? fallback : Swift.min(Swift.max(value, 0), 1)
            }
            s.floorFraction = fraction(floorFraction, defaults.floorFraction)
            s.increaseFraction = fraction(increaseFraction, defaults.increaseFraction)
            s.decreaseCooldown = Swift.max(decreaseCooldown, .zero)
            s.increaseInterval = Swift.max(increaseInterval, .zero)
            s.maximumPause = Swift.max(maximumPause, .zero)
            s.projectQuotaPause = Swift.max(projectQuotaPause, .zero)
            return s
        }
    }

    public enum Decision: Sendable, Equatable {
        case sendNow
        /// Ask again at this instant (nothing was taken).
        case waitUntil(DeliveryInstant)
    }

    public let configured: SendRate
    public let settings: Settings
    /// Requests per second now (configured, or less after throttles).
    public private(set) var currentRate: Double
    /// The bucket is paused until this instant (none before it).
    public private(set) var pausedUntil: DeliveryInstant?
    private var tokens: Double
    private var lastRefill: DeliveryInstant
    private var lastDecrease: DeliveryInstant?
    private var lastChange: DeliveryInstant

    public init(rate: SendRate, settings: Settings = Settings(), now: DeliveryInstant) {
        configured = rate
        self.settings = settings.sanitized
        currentRate = rate.perSecond
        tokens = Double(rate.burst)
        lastRefill = now
        lastChange = now
    }

    public var floorRate: Double { Swift.max(1, configured.perSecond * settings.floorFraction).clamped(to: 0...configured.perSecond) }

    /// The bucket's size at the current rate: the burst shrinks with the rate (at least 1).
    public var currentBurst: Double {
        Swift.max(1, Double(configured.burst) * currentRate / configured.perSecond)
    }

    /// One request's permission: taken now, or the instant to ask again.
    public mutating func acquire(now: DeliveryInstant) -> Decision {
        if let pausedUntil {
            if now < pausedUntil { return .waitUntil(pausedUntil) }
            self.pausedUntil = nil
        }
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return .sendNow
        }
        let seconds = (1 - tokens) / currentRate
        // At most a second at the floor rate of 1/s; the conversion cannot fail.
        let wait = DurationMath.duration(seconds: seconds) ?? .seconds(1)
        return .waitUntil(now.advanced(by: Swift.max(wait, .nanoseconds(1))))
    }

    /// Feeds the limiter what a response means (call for every classified answer).
    public mutating func observe(_ response: ResponseClassification, now: DeliveryInstant, unixTime: Int64) {
        switch response.outcome {
        case .sent:
            recordSuccess(now: now)
        case .throttled(.device):
            // About one device token: that request backs off; the provider's rate stands.
            break
        case .throttled(let scope):
            recordThrottle(now: now)
            var pause = response.retryAfter?.delay(unixTimeNow: unixTime) ?? .zero
            if scope == .project { pause = Swift.max(pause, settings.projectQuotaPause) }
            if pause > .zero { self.pause(for: pause, now: now) }
        case .retryable:
            // A 503 with Retry-After asks the whole service to wait, not this request only.
            if let delay = response.retryAfter?.delay(unixTimeNow: unixTime), delay > .zero {
                pause(for: delay, now: now)
            }
        case .invalidToken, .permanent, .configurationError, .refreshCredentials:
            break
        }
    }

    /// A request was accepted: after a slowdown, climb back a step per interval.
    public mutating func recordSuccess(now: DeliveryInstant) {
        guard currentRate < configured.perSecond, now.duration(since: lastChange) >= settings.increaseInterval else { return }
        refill(now: now)
        currentRate = Swift.min(configured.perSecond, currentRate + configured.perSecond * settings.increaseFraction)
        lastChange = now
    }

    /// The provider pushed back: halve the rate (once per cooldown), down to the floor.
    public mutating func recordThrottle(now: DeliveryInstant) {
        if let lastDecrease, now.duration(since: lastDecrease) < settings.decreaseCooldown { return }
        refill(now: now)
        currentRate = Swift.max(floorRate, currentRate / 2)
        tokens = Swift.min(tokens, currentBurst)
        lastDecrease = now
        lastChange = now
    }

    /// Sends nothing for `duration` (at most `maximumPause`) from `now`; extends, never shortens.
    public mutating func pause(for duration: Duration, now: DeliveryInstant) {
        let until = now.advanced(by: Swift.min(duration, settings.maximumPause))
        if let pausedUntil, pausedUntil >= until { return }
        pausedUntil = until
        // The bucket restarts from one request at the pause's end, not from a burst saved up
        // during it.
        tokens = Swift.min(tokens, 1)
        lastRefill = until
    }

    private mutating func refill(now: DeliveryInstant) {
        let elapsed = now.duration(since: lastRefill)
        guard elapsed > .zero else { return }
        tokens = Swift.min(currentBurst, tokens + DurationMath.seconds(elapsed) * currentRate)
        lastRefill = now
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
