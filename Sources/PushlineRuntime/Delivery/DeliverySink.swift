public import PushlineCore
public import PushlineEncoding
public import PushlineDelivery
import PushlineIO
public import AsyncAlgorithms
public import Logging

/// Stage 3 (sending): hands each batch's requests to the providers' lanes and accounts for every
/// one of them.
///
/// - `prepare` (on the encode worker) copies the batch's arena into `RequestBytes`, so requests
///   outlive the batch and the batch goes back to the pool as soon as its requests are cut.
/// - Batches are taken as they come (out of order). Each request gets a tag (`BatchLedger`) and
///   goes to its provider's lane through a feeder task of that lane: a lane that is slow or full
///   holds up only its own feeder, never another provider's sends (what waits is bounded by the
///   batch window, since a batch settles only when its requests have).
/// - One reader task per lane forwards its events here. A batch settles once each of its
///   requests is settled or deferred; a deferred request holds its line (`BatchSettlement.hold`)
///   until its `.settled` event, so the window moves on while retries wait.
/// - Outcomes are recorded on top of each batch's `encodeCounts`; result lines are written as
///   events arrive (completion order) to `sent.ndjson`, `invalid-tokens.ndjson`,
///   `failed.ndjson`, and rejects to `rejects.ndjson`, each under a temporary name renamed on
///   close (written, empty, even when nothing lands in them).
/// - Requests for a provider with no lane settle as failed (`provider_not_configured`);
///   providers in `skip` (APNs under `--validate-only`) settle as skipped. None is lost.
///
/// Runs on its own thread, like the dry-run sink: `write(2)` blocks.
public actor DeliverySink: RequestSink {
    private let executor: DedicatedThreadExecutor
    private let routes: RouteTable
    private let lanes: [any DeliveryLane]
    private let skip: [Provider: SkipReason]
    private let folder: String
    private let logger: Logger
    private let prepared = PreparedBytes()
    private var started = false
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Reason code of a request whose provider has no lane.
    public static let noLaneReason = "provider_not_configured"
    /// Reason code of a request given to a lane whose events ended before it settled it (a
    /// defect in the lane): the run fails.
    public static let laneEndedReason = "lane_ended"

    /// `lanes`: one per provider (a second lane for the same provider is ignored).
    public init(executor: DedicatedThreadExecutor, routes: RouteTable, lanes: [any DeliveryLane], skip: [Provider: SkipReason] = [:], folder: String, logger: Logger) {
        self.executor = executor
        self.routes = routes
        var seen = Set<Provider>()
        self.lanes = lanes.filter { seen.insert($0.provider).inserted }
        self.skip = skip
        self.folder = folder
        self.logger = logger
    }

    /// Copies the batch's arena into bytes of their own, on the encode worker.
    public nonisolated func prepare(_ batch: inout EncodedBatch) {
        guard !batch.index.isEmpty else { return }
        prepared.put(RequestBytes.arena(of: batch.index), sequence: batch.sequence)
    }

    private enum Item: Sendable {
        case batch(EncodedBatch)
        case inputEnded
        case events(lane: Int, [SendEvent])
        case eventsEnded(lane: Int)
        /// Every two seconds, so progress is logged while everything waits (retries, a pause).
        case tick
    }

    public func run(input: AsyncChannel<EncodedBatch>, settlement: BatchSettlement, recycle pool: BatchPool? = nil) async throws(SinkError) -> SinkReport {
        guard !started else { throw SinkError(message: "a DeliverySink runs once") }
        started = true
        let state: SendState
        do throws(OutputFileError) {
            state = try SendState(folder: folder, routes: routes, lanes: lanes.map(\.provider), skip: skip, logger: logger)
        } catch {
            for lane in lanes { await lane.cancel() }
            throw SinkError(message: error.description)
        }

        let (items, itemSink) = AsyncStream<Item>.makeStream()
        var feeders: [AsyncStream<[OutgoingRequest]>.Continuation] = []
        var feederStreams: [AsyncStream<[OutgoingRequest]>] = []
        for _ in lanes {
            let (stream, continuation) = AsyncStream<[OutgoingRequest]>.makeStream()
            feeders.append(continuation)
            feederStreams.append(stream)
        }
        let lanes = self.lanes

        // Helpers off the sink's thread (detached: not isolated to this actor), joined below.
        var helpers: [Task<Void, Never>] = []
        helpers.append(Task.detached {
            for await batch in input { itemSink.yield(.batch(batch)) }
            itemSink.yield(.inputEnded)
        })
        for (i, lane) in lanes.enumerated() {
            let requests = feederStreams[i]
            helpers.append(Task.detached {
                for await chunk in requests { await lane.send(chunk) }
                await lane.finish()
            })
            helpers.append(Task.detached {
                for await events in lane.events { itemSink.yield(.events(lane: i, events)) }
                itemSink.yield(.eventsEnded(lane: i))
            })
        }

        let ticker = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                itemSink.yield(.tick)
            }
        }

        var inputEnded = false
        var lanesEnded = 0
        var cancelled = false
        for await item in items {
            switch item {
            case .batch(let batch):
                let chunks = state.accept(batch, bytes: prepared.take(sequence: batch.sequence), settlement: settlement, pool: pool)
                for (lane, chunk) in chunks.enumerated() where !chunk.isEmpty { feeders[lane].yield(chunk) }
            case .inputEnded:
                inputEnded = true
                for feeder in feeders { feeder.finish() }
            case .events(let lane, let events):
                state.handle(events, lane: lane, settlement: settlement)
            case .eventsEnded(let lane):
                lanesEnded += 1
                // Before `finish()` (which follows the end of input) or `cancel()`, a lane's
                // events may not end: it broke the contract even if it settled what it had.
                state.laneEnded(lane, early: !inputEnded && !cancelled, settlement: settlement)
            case .tick:
                break
            }
            if state.writeFailure != nil, !cancelled {
                // Results cannot be written: stop sending; everything still settles (counted)
                // so the run drains and ends.
                cancelled = true
                for lane in lanes { await lane.cancel() }
            }
            state.progress()
            if inputEnded && lanesEnded == lanes.count { break }
        }
        ticker.cancel()
        itemSink.finish()
        for helper in helpers { await helper.value }

        for lane in lanes {
            state.delivery[lane.provider, default: ProviderDeliveryReport(provider: lane.provider)].lane = await lane.report()
        }
        do throws(OutputFileError) {
            return try state.close()
        } catch {
            throw SinkError(message: error.description)
        }
    }
}
