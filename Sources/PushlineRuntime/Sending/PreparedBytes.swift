import PushlineDelivery
import Synchronization

/// Each batch's arena copied into `RequestBytes` on the encode worker (`DeliverySink.prepare`),
/// kept by sequence number until the sink takes it: the copy runs in parallel on the workers
/// instead of on the sink's one thread, and `EncodedBatch` (Encoding's type) stays as it is.
/// Holds at most one entry per batch in flight (the batch window bounds it).
final class PreparedBytes: Sendable {
    private let bySequence = Mutex<[Int: RequestBytes]>([:])

    func put(_ bytes: RequestBytes, sequence: Int) {
        bySequence.withLock { $0[sequence] = bytes }
    }

    func take(sequence: Int) -> RequestBytes? {
        bySequence.withLock { $0.removeValue(forKey: sequence) }
    }

    var count: Int { bySequence.withLock { $0.count } }
}
