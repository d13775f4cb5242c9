import PushlineCore

/// A sending run's checkpoint bookkeeping: the watermark of lines whose every device has its
/// final outcome, and the counts of exactly those lines (docs/resume.md). Pure: no clock, no I/O.
///
/// Each batch keeps its own tally from the moment it is accepted (its encode counts, then each
/// request's outcome as it settles, retries included) and is folded into the committed counts
/// once it and every earlier batch are done, in sequence order: the watermark moves by whole
/// batches, and the counts always describe exactly the lines up to it. A batch with an `unsent`
/// outcome (a stopped run) is never folded: a resume sends its devices.
struct CheckpointLedger: Sendable {
    private struct Batch: TagRun {
        var sequence: Int
        var lastLine: Int
        var firstTag: UInt64
        var count: UInt64
        var outstanding: Int
        var tally: RunCounts
        var blocked = false
        /// Bytes of the in-order files (rejects, deferred, holdout) once this batch's lines are in them.
        var marks: [Int]?
    }

    /// Every line through here is settled, and `committed` counts exactly those lines.
    private(set) var watermark: Int
    private(set) var committed: RunCounts
    /// In-order file sizes at the watermark.
    private(set) var committedMarks: [Int]
    /// The sequence the watermark waits for.
    private var nextSequence: Int
    /// Open batches by ascending first tag (tags are handed out in accept order).
    private var open: [Batch] = []
    /// Done batches waiting for an earlier one, by sequence.
    private var done: [Int: Batch] = [:]
    /// An unsent outcome stopped the watermark for good.
    private(set) var stalled = false

    init(watermark: Int, counts: RunCounts, marks: [Int]) {
        self.watermark = watermark
        self.committed = counts
        self.committedMarks = marks
        nextSequence = 0
    }

    /// Batches not folded yet (open or waiting).
    var pendingBatches: Int { open.count + done.count }

    /// Opens batch `sequence` with `requests` requests whose tags start at `firstTag`, and the
    /// counts its encoding produced.
    mutating func accept(sequence: Int, lastLine: Int, firstTag: UInt64, requests: Int, encodeCounts: RunCounts) {
        let batch = Batch(sequence: sequence, lastLine: lastLine, firstTag: firstTag, count: UInt64(max(0, requests)), outstanding: max(0, requests), tally: encodeCounts)
        if requests > 0 {
            open.append(batch)
        } else {
            done[sequence] = batch
        }
    }

    /// The in-order files now hold batch `sequence`'s lines: their sizes.
    mutating func written(sequence: Int, marks: [Int]) {
        if let i = open.firstIndex(where: { $0.sequence == sequence }) {
            open[i].marks = marks
        } else if done[sequence] != nil {
            done[sequence]!.marks = marks
        }
        fold()
    }

    /// Request `tag`'s final outcome (never a deferral). False for a tag of no open batch.
    @discardableResult
    mutating func record(tag: UInt64, outcome: DeliveryOutcome, provider: Provider?, arm: Int? = nil) -> Bool {
        guard let i = open.index(holding: tag), open[i].outstanding > 0 else { return false }
        open[i].tally.record(outcome, provider: provider, arm: arm)
        if outcome.kind == .unsent { open[i].blocked = true }
        open[i].outstanding -= 1
        if open[i].outstanding == 0 {
            let batch = open.remove(at: i)
            done[batch.sequence] = batch
            fold()
        }
        return true
    }

    private mutating func fold() {
        while !stalled, let batch = done[nextSequence], let marks = batch.marks {
            if batch.blocked {
                stalled = true
                return
            }
            done[nextSequence] = nil
            committed.add(batch.tally)
            committedMarks = marks
            watermark = max(watermark, batch.lastLine)
            nextSequence += 1
        }
    }
}
