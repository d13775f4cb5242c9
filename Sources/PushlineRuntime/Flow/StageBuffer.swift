import AsyncAlgorithms

/// Room for a few batches between two stages, so that neither waits on the other's hand-off.
///
/// An `AsyncChannel` is a rendezvous: a send returns only once a receiver takes the element.
/// Between the reader and the workers that let the reader get one batch ahead at most; between
/// the workers and the sink it held a worker at every hand-off while the writer wrote. On two
/// cores a tenth of the CPU time went idle in those waits (docs/benchmarks.md, "Room between the
/// stages"). `forward` takes from `input` into a bounded buffer (swift-async-algorithms'
/// `buffer(policy: .bounded)`) and sends on to `output` in order, then finishes `output`.
///
/// Nothing is dropped: every element taken is sent on. The stages never see task cancellation
/// (`CampaignRunService` stops a run through `RunStop`), and a finished `input` is drained to the
/// last element before `output` finishes. Memory stays bounded by the batch window, which counts
/// the batches held here (`CampaignRun.batchWindow`).
enum StageBuffer {
    /// Batches held between the reader and the workers, besides the one being handed on.
    static let readAhead = 2
    /// Encoded batches held between the workers and the sink, besides the one being handed on.
    static let writeBehind = 3

    static func forward<Element: Sendable>(_ input: AsyncChannel<Element>, to output: AsyncChannel<Element>, holding depth: Int) async {
        for await element in input.buffer(policy: .bounded(max(1, depth))) {
            await output.send(element)
        }
        output.finish()
    }
}
