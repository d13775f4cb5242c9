/// Counting by reason, with the number of distinct reasons bounded: provider reasons come off the
/// wire (an unknown APNs reason or FCM code is kept as its wire text, 64 bytes at most), so a
/// misbehaving server answering a new reason per request must not grow the counts and the
/// summary by one key per device. Reasons past the first `maxDistinct` are counted as `other`, so a
/// tally holds at most `maxDistinct + 1` keys (the result files keep every device's own reason).
public enum ReasonTally {
    public static let maxDistinct = 256
    public static let overflowReason = "other"

    /// Adds `count` under `reason`, or under `other` when `reason` is new and the tally is full.
    public static func add(_ count: Int, to reason: String, in tally: inout [String: Int]) {
        // One lookup while the tally has room (every run but a hostile one).
        if tally.count < maxDistinct || tally[reason] != nil {
            tally[reason, default: 0] += count
        } else {
            tally[overflowReason, default: 0] += count
        }
    }

    /// Adds every reason of `other`.
    public static func merge(_ other: [String: Int], into tally: inout [String: Int]) {
        for (reason, count) in other { add(count, to: reason, in: &tally) }
    }
}
