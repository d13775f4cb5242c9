public import PushlineEncoding
import Synchronization

/// Encoded batches the sink has written, handed back to the encode workers for reuse.
///
/// A batch holds about a megabyte per provider; allocating those afresh for every batch made
/// the kernel map and zero new pages each time (page faults were 5% of a run). Recycling keeps
/// the same few buffers in use for the whole run, and the bound keeps memory flat.
public final class BatchPool: Sendable {
    private let batches = Mutex<[EncodedBatch]>([])
    private let limit: Int

    public init(limit: Int) {
        self.limit = limit
    }

    /// A batch for `sequence`: a recycled one emptied (capacity kept), or a new one.
    public func take(sequence: Int) -> EncodedBatch {
        if var batch = batches.withLock({ $0.popLast() }) {
            batch.removeAll(sequence: sequence)
            return batch
        }
        return EncodedBatch(sequence: sequence)
    }

    /// Returns a written batch; beyond the bound it is simply freed.
    public func give(_ batch: consuming EncodedBatch) {
        let batch = batch
        batches.withLock { pool in
            if pool.count < limit { pool.append(batch) }
        }
    }
}
