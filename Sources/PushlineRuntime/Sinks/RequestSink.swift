public import PushlineEncoding
public import AsyncAlgorithms

/// Where a run hands its encoded batches: the dry-run sink writes them to files; the senders
/// (next) deliver them. A sink reads each batch's request index with the campaign's
/// `RouteTable`, gives every request exactly one `DeliveryOutcome`, records it in the counts,
/// and settles the batch with `BatchSettlement` once all of its requests have one (a request
/// copied out for a retry holds its line instead), so the reader's window moves on.
public protocol RequestSink: Sendable {
    /// Called on the encode worker once a batch is encoded, before it is handed over: work that
    /// runs in parallel on the workers (the dry run renders its lines here). Lines whose
    /// encoding failed were rolled back before it.
    func prepare(_ batch: inout EncodedBatch)

    /// Takes every batch of `input` until it finishes. Batches arrive out of order. A batch the
    /// sink is done with goes back to `pool` for reuse.
    func run(input: AsyncChannel<EncodedBatch>, settlement: BatchSettlement, recycle pool: BatchPool?) async throws(SinkError) -> SinkReport
}
