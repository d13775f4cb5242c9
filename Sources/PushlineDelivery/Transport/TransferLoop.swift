import Foundation
import Synchronization

/// A sender that runs on a transfer thread (a lane's state machine): called once per turn of
/// the loop, on that thread only.
protocol TransferLoopHost: AnyObject {
    /// This turn's completions (every transfer started gets exactly one, in some turn); returns
    /// what to start and how long the loop may wait for the network before the next turn.
    /// `transportCancelled`: the transport is being dropped; cancel everything.
    func turn(_ completions: [TransportResponse], transportCancelled: Bool) -> TransferLoopTurn
    /// The loop has ended and freed its engine; no turn follows.
    func loopEnded()
}

/// What a host's turn asks of the loop.
struct TransferLoopTurn {
    var start: [TransportRequest] = []
    /// Cancel every transfer in flight (each completes `.cancelled` in a later turn).
    var cancelInFlight = false
    /// Nothing more will start; the loop ends once nothing is in flight.
    var ended = false
    /// The longest the loop waits for the network or a wake-up before the next turn (the host's
    /// next deadline) in milliseconds, or `untilWoken`.
    var timeoutMilliseconds: Int32 = TransferLoopTurn.untilWoken

    /// No deadline of the host's: the wait ends at a wake-up, the network or the engine's timers.
    static let untilWoken: Int32 = -1
}

/// The transfer thread: one engine (nghttp2 or libcurl), driven as
/// perform → publish completions (or the host's turn) → start → wait.
///
/// Everything but `shared` is confined to this thread; producers reach it only through the lock
/// and the engine's `wake` (never called once the engine is closed: `engineClosed`).
final class TransferLoop: @unchecked Sendable {
    let shared: Mutex<TransportState>
    let engine: any TransferEngine
    private let configuration: TransportConfiguration
    private let trustAnchors: TrustAnchors?
    private var batch: [TransportResponse] = []

    /// The combined CA bundle file, when `ca_file` made one (tests).
    var trustBundlePath: String? { trustAnchors?.bundlePath }

    init(configuration: TransportConfiguration, trustAnchors: TrustAnchors?) throws(TransportError) {
        self.configuration = configuration
        self.trustAnchors = trustAnchors
        shared = Mutex(TransportState(capacity: configuration.capacity))
        switch configuration.effectiveEngine {
        case .curl: engine = try CurlTransferEngine(configuration: configuration, trustAnchors: trustAnchors)
        case .nghttp2: engine = try NGHTTP2TransferEngine(configuration: configuration, trustAnchors: trustAnchors)
        }
    }

    // MARK: - The loop

    /// The sender that runs on this thread (a lane's state machine), if any: it gets every
    /// completion as it is read and hands back the transfers to start, instead of producers
    /// and a consumer going through the lock. Set before the thread starts.
    var host: (any TransferLoopHost)?

    func run() {
        if let host {
            runHosted(host)
            return
        }
        while true {
            engine.perform(into: &batch)
            let phase = publish(finished: false)
            if phase == .cancelling { cancelEverything() }
            let queueEmpty = admit()
            if phase != .running, queueEmpty, engine.inFlightCount == 0, batch.isEmpty { break }
            if !batch.isEmpty { continue }
            engine.wait(timeoutMilliseconds: 1000, into: &batch)
        }
        _ = publish(finished: true)
        close()
    }

    /// perform → the host's turn with what ended (its machine decides) → start what it asked
    /// for → wait until the network, the host's next deadline or a wake-up.
    private func runHosted(_ host: any TransferLoopHost) {
        var cancelled = false
        var started = 0
        var clean = HTTP2Transport.CleanURLParts()
        while true {
            engine.perform(into: &batch)
            let completions = batch
            batch.removeAll(keepingCapacity: true)
            let phase = account(completions, started: started)
            var turn = host.turn(completions, transportCancelled: phase == .cancelling)
            if turn.cancelInFlight, !cancelled {
                cancelled = true
                engine.cancelAll(into: &batch)
            }
            // Each request is moved to the engine (reversed, then taken from the end), not copied:
            // a copy would retain and release each of its references.
            started = turn.start.count
            turn.start.reverse()
            while let request = turn.start.popLast() {
                // The host's own checks exclude these; the transport refuses them all the same.
                do throws(TransportError) {
                    try HTTP2Transport.check(request, clean: &clean)
                } catch {
                    batch.append(TransportResponse.unsent(request, failure: TransportFailure(.other, error.description)))
                    continue
                }
                engine.start(request, into: &batch)
            }
            if turn.ended, engine.inFlightCount == 0, batch.isEmpty { break }
            // Completions waiting (a start that failed, a cancel): another turn at once.
            if !batch.isEmpty { continue }
            engine.wait(timeoutMilliseconds: turn.timeoutMilliseconds, into: &batch)
        }
        close()
        host.loopEnded()
    }

    /// Counts a hosted turn's transfers and connections in the shared counters (one lock per
    /// turn); returns the phase.
    private func account(_ completions: [TransportResponse], started: Int) -> TransportState.Phase {
        let counters = engine.takeCounters()
        return shared.withLock { state in
            state.wakePending = false
            state.submitted &+= UInt64(started)
            state.inFlight += started - completions.count
            state.completedCount &+= UInt64(completions.count)
            state.connectionsOpened += counters.connectionsOpened
            state.wireSends &+= counters.wireSends
            return state.phase
        }
    }

    /// Hands this loop's completions over (to a waiting consumer directly) and reads the phase.
    private func publish(finished: Bool) -> TransportState.Phase {
        let completions = batch
        batch.removeAll(keepingCapacity: true)
        let counters = engine.takeCounters()
        var handOver: (CheckedContinuation<[TransportResponse]?, Never>, [TransportResponse]?)?
        var resumed: [CheckedContinuation<Void, Never>] = []
        let phase = shared.withLock { state in
            state.inFlight -= completions.count
            state.completedCount &+= UInt64(completions.count)
            state.connectionsOpened += counters.connectionsOpened
            state.wireSends &+= counters.wireSends
            state.completed.append(contentsOf: completions)
            if finished { state.loopFinished = true }
            if let consumer = state.consumer, !state.completed.isEmpty || state.loopFinished {
                state.consumer = nil
                if state.completed.isEmpty {
                    handOver = (consumer, nil)
                } else {
                    let taken = state.takeCompleted()
                    handOver = (consumer, taken.batch)
                    resumed = taken.resumed
                }
            }
            return state.phase
        }
        if let (consumer, value) = handOver { consumer.resume(returning: value) }
        for producer in resumed { producer.resume() }
        return phase
    }

    /// Hands queued requests to the engine while transfers are below the concurrency; returns
    /// whether the queue is empty.
    private func admit() -> Bool {
        let maxInFlight = configuration.maxInFlight
        var admitted: [TransportRequest] = []
        let queueEmpty = shared.withLock { state in
            state.wakePending = false
            while state.inFlight < maxInFlight, let request = state.queue.popFirst() {
                admitted.append(request)
                state.inFlight += 1
            }
            return state.queue.isEmpty
        }
        for request in admitted { engine.start(request, into: &batch) }
        return queueEmpty
    }

    // MARK: - Shutdown

    /// Cancels what is queued and what is in flight, each with a `.cancelled` completion.
    private func cancelEverything() {
        let queued = shared.withLock { state in
            var taken: [TransportRequest] = []
            while let request = state.queue.popFirst() { taken.append(request) }
            // Counted as in flight until published, like any other completion.
            state.inFlight += taken.count
            return taken
        }
        for request in queued {
            batch.append(TransportResponse.unsent(request, result: .cancelled))
        }
        engine.cancelAll(into: &batch)
        if !batch.isEmpty { _ = publish(finished: false) }
    }

    private func close() {
        // No producer may wake the engine once it is closed.
        shared.withLock { $0.engineClosed = true }
        engine.close()
        trustAnchors?.remove()
        let joiners = shared.withLock { state in
            state.loopJoined = true
            let joiners = state.joinWaiters
            state.joinWaiters = []
            return joiners
        }
        for joiner in joiners { joiner.resume() }
    }
}

extension TransportResponse {
    /// A request that ended before it was written: never processed.
    static func unsent(_ request: TransportRequest, result: TransportResult = .failed, failure: TransportFailure? = nil, curlCode: Int32 = 0) -> TransportResponse {
        TransportResponse(
            slot: request.slot, result: result, status: 0, headers: .none([]), body: [],
            bodyTruncated: false, curlCode: curlCode, mayHaveBeenDelivered: false, httpVersion: 0,
            wireSends: 0, provenUnprocessed: true, curlErrorDetail: nil,
            end: result == .cancelled ? .cancelled : .notSent, failure: result == .cancelled ? nil : failure
        )
    }
}
