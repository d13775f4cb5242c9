import PushlineCore

/// What the sink counts per lane, by lane index: requests handed over, requests the lane
/// settled, whether its events ended, and what a lane that broke its contract left unsettled.
/// A value, mutated in place on the sink's thread.
struct LaneTallies {
    private(set) var handed: [Int]
    private(set) var settled: [Int]
    private(set) var ended: [Bool]
    /// Requests a lane never settled before its events ended.
    private(set) var lost = 0
    /// Lanes whose events ended before the sink finished or cancelled them.
    private(set) var endedEarly: [Provider] = []
    private let providers: [Provider]

    init(lanes providers: [Provider]) {
        self.providers = providers
        handed = Array(repeating: 0, count: providers.count)
        settled = Array(repeating: 0, count: providers.count)
        ended = Array(repeating: false, count: providers.count)
    }

    mutating func handed(lane: Int, count: Int) { handed[lane] += count }

    mutating func settled(lane: Int) { settled[lane] += 1 }

    /// Lane `lane`'s events ended (`early`: before its order); returns how many requests it
    /// was given and never settled (lost: a defect in the lane).
    mutating func ended(lane: Int, early: Bool) -> Int {
        ended[lane] = true
        if early { endedEarly.append(providers[lane]) }
        let missing = Swift.max(0, handed[lane] - settled[lane])
        lost += missing
        return missing
    }

    /// Requests handed to the lanes and not settled yet (in their queues, retry heaps or in
    /// flight). A lane whose events ended holds none: what it did not settle is `lost`, and
    /// counting it here would shrink the sink's window for the other lanes for good.
    var unsettled: Int {
        var total = 0
        for lane in handed.indices where !ended[lane] { total += handed[lane] - settled[lane] }
        return total
    }
}
