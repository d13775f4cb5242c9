/// Which batches may be in flight: a window of sequence numbers.
///
/// Batch `s` is admitted only while `s < lowestUnsettled + size`, so however batches settle
/// (out of order, one of them slow), at most `size` are read, encoded or waiting to be sent or
/// written: one slow batch stops admission instead of letting memory grow. Pure: no clock, no
/// locking; `BatchSettlement` shares one between the reader and the sink.
public struct BatchWindow: Sendable, Equatable {
    public let size: Int
    /// The sequence number the next admitted batch gets.
    public private(set) var nextSequence = 0
    /// The lowest sequence admitted and not settled (`nextSequence` when none is in flight).
    public private(set) var lowestUnsettled = 0
    /// Settled flags for sequences `lowestUnsettled ..< nextSequence`, in a ring of `size`.
    private var settled: [Bool]

    public init(size: Int) {
        self.size = max(1, size)
        settled = Array(repeating: false, count: self.size)
    }

    /// Whether the next batch may be admitted now.
    public var canAdmit: Bool { nextSequence &- lowestUnsettled < size }

    /// Batches admitted and not settled.
    public var inFlight: Int {
        var count = 0
        var s = lowestUnsettled
        while s < nextSequence {
            if !settled[s % size] { count += 1 }
            s += 1
        }
        return count
    }

    /// Admits the next batch and returns its sequence number, or nil when the window is full.
    public mutating func admit() -> Int? {
        guard canAdmit else { return nil }
        let sequence = nextSequence
        settled[sequence % size] = false
        nextSequence += 1
        return sequence
    }

    /// Marks `sequence` settled; the window slides past every settled batch at its low end.
    /// False (and nothing changes) for a sequence not in flight: never admitted, or settled already.
    @discardableResult
    public mutating func settle(_ sequence: Int) -> Bool {
        guard sequence >= lowestUnsettled, sequence < nextSequence, !settled[sequence % size] else { return false }
        settled[sequence % size] = true
        while lowestUnsettled < nextSequence, settled[lowestUnsettled % size] {
            settled[lowestUnsettled % size] = false
            lowestUnsettled += 1
        }
        return true
    }
}
