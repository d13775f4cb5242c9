/// Request latencies in a fixed number of buckets, for `summary.json`'s percentiles: memory does
/// not grow with the audience (no array of every latency), and recording is a few integer ops.
///
/// Log-linear buckets over microseconds: values below 32 µs are exact; above, each power of two
/// is split into 32 buckets, so a reported value is at most 1/32 (about 3 %) above the true one.
/// A percentile is the upper end of the bucket holding it, capped at the largest value recorded
/// (kept exactly), so it never reports more than was seen.
public struct LatencyHistogram: Sendable, Equatable {
    /// Sub-buckets per power of two (and the count of exact buckets below the first split).
    static let subBucketBits = 5
    static let subBuckets = 1 << subBucketBits
    /// Exact buckets 0..<32, then 32 per exponent 5...63.
    public static let bucketCount = subBuckets + (64 - subBucketBits) * subBuckets

    private var buckets: [Int]
    public private(set) var count = 0
    /// Largest recorded value, in microseconds.
    public private(set) var maxMicroseconds: UInt64 = 0

    public init() {
        buckets = Array(repeating: 0, count: Self.bucketCount)
    }

    /// Records one latency. Negative durations count as 0; durations beyond `UInt64.max` µs
    /// (half a million years) as that.
    public mutating func record(_ duration: Duration) {
        record(microseconds: Self.microseconds(duration))
    }

    public mutating func record(microseconds value: UInt64) {
        buckets[Self.bucket(of: value)] &+= 1
        count &+= 1
        if value > maxMicroseconds { maxMicroseconds = value }
    }

    /// The latency at fraction `p` (0…1) of the recorded values, in microseconds: the smallest
    /// bucket upper end with at least `ceil(p × count)` values at or below it, capped at the
    /// maximum. Nil when nothing was recorded.
    public func percentileMicroseconds(_ p: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let fraction = p.isNaN ? 1 : min(max(p, 0), 1)
        // ceil(p × count) in 1…count, computed in Double (count is far below 2^53).
        var rank = Int((fraction * Double(count)).rounded(.up))
        rank = min(max(rank, 1), count)
        var seen = 0
        for (bucket, n) in buckets.enumerated() where n > 0 {
            seen &+= n
            if seen >= rank { return min(Self.upperEnd(of: bucket), maxMicroseconds) }
        }
        return maxMicroseconds
    }

    public mutating func add(_ other: LatencyHistogram) {
        for i in buckets.indices { buckets[i] &+= other.buckets[i] }
        count &+= other.count
        maxMicroseconds = max(maxMicroseconds, other.maxMicroseconds)
    }

    // MARK: Buckets

    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds < 0) { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        if overflow { return .max }
        let (sum, overflow2) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000_000))
        return overflow2 ? .max : sum
    }

    /// The bucket `value` (µs) falls in.
    public static func bucket(of value: UInt64) -> Int {
        if value < UInt64(subBuckets) { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount // ≥ subBucketBits
        let sub = Int((value >> UInt64(exponent - subBucketBits)) & UInt64(subBuckets - 1))
        return subBuckets + (exponent - subBucketBits) * subBuckets + sub
    }

    /// The largest value that falls in `bucket`.
    public static func upperEnd(of bucket: Int) -> UInt64 {
        if bucket < subBuckets { return UInt64(bucket) }
        let exponent = (bucket - subBuckets) / subBuckets + subBucketBits
        let sub = UInt64((bucket - subBuckets) % subBuckets)
        let shift = UInt64(exponent - subBucketBits)
        // (32 + sub + 1) << shift − 1, saturating at the top bucket.
        let (next, overflow) = (UInt64(subBuckets) + sub + 1).multipliedReportingOverflow(by: UInt64(1) << shift)
        return overflow ? .max : next - 1
    }
}
