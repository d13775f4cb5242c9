#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point on a monotonic clock, in nanoseconds since an arbitrary origin. Our own type, not
/// `ContinuousClock.Instant`, so that tests can make any instant.
public struct DeliveryInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `self + duration`, saturating at the ends of the range (a hostile Retry-After cannot overflow).
    public func advanced(by duration: Duration) -> Self {
        Self(nanoseconds: DurationMath.saturatingAdd(nanoseconds, DurationMath.nanoseconds(duration)))
    }

    /// `self - other` (negative when `other` is later).
    public func duration(since other: Self) -> Duration {
        let (difference, overflow) = nanoseconds.subtractingReportingOverflow(other.nanoseconds)
        if overflow { return other.nanoseconds > 0 ? .nanoseconds(Int64.min) : .nanoseconds(Int64.max) }
        return .nanoseconds(difference)
    }

    public var description: String { "t+\(nanoseconds)ns" }
}

/// What the delivery policies read time from. Both readings come from one call site so tests
/// control them together; wall-clock time only goes into tokens (`iat`) and HTTP dates,
/// every interval is measured on the monotonic clock so a stepped system clock cannot shorten one.
public protocol DeliveryClock: Sendable {
    /// The monotonic instant now.
    func now() -> DeliveryInstant
    /// Wall-clock UNIX time now, in whole seconds.
    func unixTime() -> Int64
}

/// The system clocks: `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
public struct SystemDeliveryClock: DeliveryClock {
    public init() {}

    public func now() -> DeliveryInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        // Seconds since boot: far below the overflow bound of Int64 nanoseconds (292 years).
        return DeliveryInstant(nanoseconds: Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec))
    }

    public func unixTime() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}

/// Checked conversions between `Duration` and integer nanoseconds.
enum DurationMath {
    /// The duration in whole nanoseconds, saturating at Int64's range (±292 years).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (fromSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return saturatingAdd(fromSeconds, attoseconds / 1_000_000_000)
    }

    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return b > 0 ? .max : .min }
        return sum
    }

    /// The duration in seconds as a Double (for rates).
    static func seconds(_ duration: Duration) -> Double {
        Double(nanoseconds(duration)) / 1e9
    }

    /// A Double number of seconds as a duration; nil unless finite and within ±292 years.
    static func duration(seconds: Double) -> Duration? {
        guard seconds.isFinite else { return nil }
        let nanos = (seconds * 1e9).rounded()
        guard nanos > -9.2e18, nanos < 9.2e18 else { return nil }
        return .nanoseconds(Int64(nanos))
    }
}
