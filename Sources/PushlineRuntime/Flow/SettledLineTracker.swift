/// The low-water mark of settled input: the highest line `L` such that every line ≤ `L` is
/// fully settled (every device of it has its outcome). A resume checkpoint is written from it.
///
/// Batches cover consecutive line ranges in sequence order (blank and rejected lines included)
/// and settle out of order; a batch counts once every request of it has an outcome, except
/// requests copied out for a retry, which hold their line (`hold` / `release`) so the batch can
/// be released while the mark stays below the line. Pure: no clock, no locking.
public struct SettledLineTracker: Sendable {
    /// Every line up to here belongs to a settled batch (0: none yet).
    public private(set) var contiguousLine: Int
    /// The next batch sequence the contiguous prefix waits for.
    public private(set) var nextSequence: Int
    /// Batches settled ahead of `nextSequence`: sequence → last line.
    private var ahead: [Int: Int] = [:]
    /// Lines held by outstanding requests → how many.
    private var held: [Int: Int] = [:]
    /// Held lines, a min-heap (entries whose count fell to 0 are dropped when they surface).
    private var heldHeap: [Int] = []

    /// `afterLine`: lines already settled before this run (a resume), 0 for a fresh run.
    public init(afterLine: Int = 0, firstSequence: Int = 0) {
        contiguousLine = max(0, afterLine)
        nextSequence = firstSequence
    }

    /// The highest line `L` with every line ≤ `L` settled.
    public var lowWaterMark: Int {
        guard let lowestHeld = heldHeap.first else { return contiguousLine }
        return min(contiguousLine, lowestHeld - 1)
    }

    /// Batches settled out of order, waiting for an earlier one.
    public var waitingBatches: Int { ahead.count }

    /// Batch `sequence`, whose lines end at `lastLine`, is settled (but for held lines).
    /// False for a sequence already settled.
    @discardableResult
    public mutating func settle(sequence: Int, lastLine: Int) -> Bool {
        guard sequence >= nextSequence, ahead[sequence] == nil else { return false }
        ahead[sequence] = lastLine
        while let last = ahead.removeValue(forKey: nextSequence) {
            contiguousLine = max(contiguousLine, last)
            nextSequence += 1
        }
        return true
    }

    /// A request of `line` is outstanding beyond its batch (copied out for a retry).
    public mutating func hold(line: Int) {
        held[line, default: 0] += 1
        if held[line] == 1 { push(line) }
    }

    /// The outstanding request of `line` settled. False when the line was not held.
    @discardableResult
    public mutating func release(line: Int) -> Bool {
        guard let count = held[line] else { return false }
        if count > 1 {
            held[line] = count - 1
        } else {
            held[line] = nil
            while let top = heldHeap.first, held[top] == nil { popMin() }
            // Released lines deeper in the heap surface later; rebuild when they pile up.
            if heldHeap.count > 2 * held.count + 64 {
                heldHeap = []
                for line in held.keys { push(line) }
            }
        }
        return true
    }

    // MARK: Heap

    private mutating func push(_ line: Int) {
        heldHeap.append(line)
        var i = heldHeap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heldHeap[i] < heldHeap[parent] else { break }
            heldHeap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popMin() {
        let last = heldHeap.removeLast()
        guard !heldHeap.isEmpty else { return }
        heldHeap[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heldHeap.count, heldHeap[l] < heldHeap[m] { m = l }
            if r < heldHeap.count, heldHeap[r] < heldHeap[m] { m = r }
            guard m != i else { return }
            heldHeap.swapAt(i, m)
            i = m
        }
    }
}
