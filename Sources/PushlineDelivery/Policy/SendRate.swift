/// A provider's configured sending rate, as the pipeline writes it: `rate: 10000/s`
/// (units `/s`, `/min`, `/h`), with an optional `burst`.
public struct SendRate: Sendable, Equatable, CustomStringConvertible {
    /// Requests per second.
    public let perSecond: Double
    /// How many requests may go at once after an idle spell (the bucket's size).
    public let burst: Int

    /// FCM's default project quota: 600,000 messages a minute.
    public static let fcmDefault = SendRate(validPerSecond: 10_000, burst: nil)
    /// Far above what one process sends: a bound for hostile numbers, not a quota.
    public static let maximumPerSecond: Double = 10_000_000
    public static let maximumBurst = 10_000_000

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Default burst: a tenth of a second's worth (at least 1): enough to keep connections busy
    /// without a spike that trips a provider's own limiter.
    public init(perSecond: Double, burst: Int? = nil) throws(Invalid) {
        guard perSecond.isFinite, perSecond > 0 else { throw Invalid(description: "rate must be a positive number") }
        guard perSecond <= Self.maximumPerSecond else {
            throw Invalid(description: "rate must be at most \(Int(Self.maximumPerSecond))/s")
        }
        if let burst {
            guard (1...Self.maximumBurst).contains(burst) else {
                throw Invalid(description: "burst must be 1…\(Self.maximumBurst)")
            }
        }
        self.init(validPerSecond: perSecond, burst: burst)
    }

    private init(validPerSecond perSecond: Double, burst: Int?) {
        self.perSecond = perSecond
        // perSecond ≤ 10^7 so the product fits an Int.
        self.burst = burst ?? Swift.max(1, Int((perSecond / 10).rounded(.up)))
    }

    /// This rate shared by `parts` senders: each gets its share of the rate and of the burst
    /// (at least one request).
    public func divided(by parts: Int) -> SendRate {
        let n = Double(Swift.max(parts, 1))
        return SendRate(validPerSecond: perSecond / n, burst: Swift.max(1, burst / Swift.max(parts, 1)))
    }

    /// Parses `N/s`, `N/sec`, `N/second`, `N/m`, `N/min`, `N/minute`, `N/h`, `N/hour` with `N` a
    /// positive integer of at most 12 digits (spaces around `/` allowed).
    public init(parsing text: String, burst: Int? = nil) throws(Invalid) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw Invalid(description: "rate '\(PrintableText.bounded(text, limit: 40))' must be written like 10000/s (units: s, min, h)")
        }
        let digits = parts[0].trimmingSpaces
        guard (1...12).contains(digits.utf8.count),
              digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let count = Int(digits), count > 0
        else {
            throw Invalid(description: "rate '\(PrintableText.bounded(text, limit: 40))' must start with a positive whole number")
        }
        let seconds: Double
        switch parts[1].trimmingSpaces.lowercased() {
        case "s", "sec", "second": seconds = 1
        case "m", "min", "minute": seconds = 60
        case "h", "hour": seconds = 3600
        default:
            throw Invalid(description: "rate '\(PrintableText.bounded(text, limit: 40))' has an unknown unit (s, min or h)")
        }
        try self.init(perSecond: Double(count) / seconds, burst: burst)
    }

    public var description: String {
        perSecond.rounded() == perSecond ? "\(Int(perSecond))/s (burst \(burst))" : "\(perSecond)/s (burst \(burst))"
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
