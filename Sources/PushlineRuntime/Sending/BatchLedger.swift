/// Which batch a request tag belongs to, and how many requests of each batch are still
/// outstanding: the delivery sink settles a batch once every request of it is settled or
/// deferred.
///
/// Tags are a running 64-bit counter and each batch takes a contiguous run of them, so a tag is
/// found by a binary search over the open batches (at most the batch window), with no entry per
/// request. Pure: no clock, no locking.
struct BatchLedger: Sendable {
    private struct OpenBatch: TagRun {
        var firstTag: UInt64
        var count: UInt64
        var sequence: Int
        var lastLine: Int
        var outstanding: Int
    }

    enum Completion: Equatable, Sendable {
        /// Other requests of the batch are still outstanding.
        case pending
        /// That was the batch's last outstanding request: settle it.
        case batchDone(sequence: Int, lastLine: Int)
        /// The tag belongs to no open batch (already completed, or never given): a lane broke the
        /// exactly-once contract.
        case unknown
    }

    /// Open batches by ascending `firstTag`.
    private var open: [OpenBatch] = []
    /// The tag the next batch starts at. A lane that settles a tag twice makes its batch settle
    /// early (and a later tag of it `unknown`); either way the counts then hold one outcome too
    /// many and the run fails its reconciliation instead of passing silently.
    private(set) var nextTag: UInt64 = 0

    var openBatches: Int { open.count }

    /// Opens batch `sequence` with `requests` requests (> 0); returns its first tag (the others
    /// follow contiguously).
    mutating func open(sequence: Int, lastLine: Int, requests: Int) -> UInt64 {
        let first = nextTag
        let count = UInt64(max(0, requests))
        nextTag = nextTag &+ count
        open.append(OpenBatch(firstTag: first, count: count, sequence: sequence, lastLine: lastLine, outstanding: max(0, requests)))
        return first
    }

    /// One request (`tag`) of an open batch is done (settled, or deferred to the retry queue).
    mutating func complete(tag: UInt64) -> Completion {
        guard let i = open.index(holding: tag), open[i].outstanding > 0 else { return .unknown }
        open[i].outstanding -= 1
        guard open[i].outstanding == 0 else { return .pending }
        let done = open.remove(at: i)
        return .batchDone(sequence: done.sequence, lastLine: done.lastLine)
    }

    /// Requests still outstanding in open batches.
    var outstanding: Int { open.reduce(0) { $0 + $1.outstanding } }
}

/// A batch that owns a consecutive run of request tags (`count` from `firstTag`).
protocol TagRun: Sendable {
    var firstTag: UInt64 { get }
    var count: UInt64 { get }
}

extension Array where Element: TagRun {
    /// The index of the batch whose run holds `tag`, in an array kept by ascending first tag (a
    /// binary search: at most the batch window, or the batches a retry keeps open); nil when
    /// none holds it.
    func index(holding tag: UInt64) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].firstTag <= tag { low = mid + 1 } else { high = mid }
        }
        guard low > 0, tag &- self[low - 1].firstTag < self[low - 1].count else { return nil }
        return low - 1
    }
}
