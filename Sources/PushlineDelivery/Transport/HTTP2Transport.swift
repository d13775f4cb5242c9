import Foundation
import Synchronization

/// An HTTP/2-over-TLS client for one host on one libcurl multi handle and its own thread.
///
/// A sender submits `TransportRequest`s (suspending while the transport holds `capacity`
/// requests), reads `completions` (batches of `TransportResponse`, one per request, exactly
/// once), and ends with `shutdown`. Read completions from one task only.
public final class HTTP2Transport: Sendable {
    public let configuration: TransportConfiguration
    private let loop: TransferLoop
    /// What `top -H`, `perf` and /proc call a transport's transfer thread.
    public static let threadName = "pushline-http2"

    public convenience init(_ configuration: TransportConfiguration) throws(TransportError) {
        try self.init(configuration, host: nil)
    }

    /// A transport whose transfer thread runs `host` (a lane's state machine) between curl's
    /// turns: the host starts transfers and takes completions on the thread itself, so neither
    /// `submit` nor `completions` is used.
    init(_ configuration: TransportConfiguration, host: (any TransferLoopHost)?) throws(TransportError) {
        let configuration = try configuration.validated()
        self.configuration = configuration
        // The combined bundle is libcurl's (TrustAnchors says why); the nghttp2 engine reads
        // `ca_file` beside the system store itself.
        let anchors = try configuration.caFile.flatMap { path throws(TransportError) -> TrustAnchors? in
            guard configuration.effectiveEngine == .curl else {
                _ = try TrustAnchors.readPEM(path)
                return nil
            }
            return try TrustAnchors(caFile: path, systemBundlePath: CurlGlobal.defaultCABundlePath)
        }
        do {
            loop = try TransferLoop(configuration: configuration, trustAnchors: anchors)
        } catch {
            anchors?.remove()
            throw error
        }
        let loop = self.loop
        loop.host = host
        // Named from inside (`ThreadName` says why), so `top -H` and `perf` tell it from the
        // encode workers.
        let thread = Thread {
            ThreadName.setCurrent(HTTP2Transport.threadName)
            loop.run()
        }
        thread.start()
    }

    deinit {
        // Dropped without shutdown: cancel so the thread ends and frees curl.
        requestShutdown(.cancelInFlight)
    }

    // MARK: - Submitting

    /// Takes one request, suspending while the transport is full. Throws `TransportError.shutDown`
    /// (and takes nothing) once shutdown has begun, or `invalidRequest` for a malformed request.
    public func submit(_ request: TransportRequest) async throws(TransportError) {
        let taken = try await submit(contentsOf: [request])
        if taken == 0 { throw TransportError.shutDown }
    }

    /// Takes requests in order, suspending while the transport is full. Returns how many were
    /// taken: all of them, or fewer when shutdown began meanwhile (the rest get no completion).
    /// A malformed request throws before any of them is taken.
    public func submit(contentsOf requests: [TransportRequest]) async throws(TransportError) -> Int {
        for request in requests { try Self.check(request) }
        guard !requests.isEmpty else { return 0 }
        var pending = requests[...]
        let accepted: Bool = loop.shared.withLock { state in
            guard state.phase == .running else { return false }
            if state.waiters.isEmpty {
                pending = pending.dropFirst(state.enqueue(pending))
                if !pending.isEmpty || state.queue.count > 0 { wake(&state) }
            }
            return true
        }
        guard accepted else { return 0 }
        if pending.isEmpty { return requests.count }
        let remaining = pending
        var waiter: TransportState.SubmitWaiter?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed: [CheckedContinuation<Void, Never>] = loop.shared.withLock { state in
                guard state.phase == .running else { return [continuation] }
                let entry = TransportState.SubmitWaiter(remaining: remaining, continuation: continuation)
                waiter = entry
                state.waiters.append(entry)
                // Room may have opened since the first attempt.
                let resumed = state.admitWaiters()
                if state.queue.count > 0 { wake(&state) }
                return resumed
            }
            for producer in resumed { producer.resume() }
        }
        // All taken, unless shutdown ended the wait first.
        let left = loop.shared.withLock { _ in waiter?.remaining.count ?? remaining.count }
        return requests.count - left
    }

    // MARK: - Completions

    /// Completed requests in batches (one per loop of the transfer thread at most), ending after
    /// shutdown once every taken request has completed.
    public var completions: TransportCompletions { TransportCompletions(transport: self) }

    func nextBatch() async -> [TransportResponse]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[TransportResponse]?, Never>) in
            var value: [TransportResponse]?? = .none
            var resumed: [CheckedContinuation<Void, Never>] = []
            loop.shared.withLock { state in
                if !state.completed.isEmpty {
                    let taken = state.takeCompleted()
                    value = .some(taken.batch)
                    resumed = taken.resumed
                    if state.queue.count > 0 { wake(&state) }
                } else if state.loopFinished || state.consumer != nil {
                    // Finished, or another task is already reading (one reader only).
                    value = .some(nil)
                } else {
                    state.consumer = continuation
                }
            }
            for producer in resumed { producer.resume() }
            if let value { continuation.resume(returning: value) }
        }
    }

    /// Wakes the transfer thread for a hosted turn (a producer handed its host work).
    func wakeLoop() {
        loop.shared.withLock { state in wake(&state) }
    }

    // MARK: - Shutdown and counters

    public enum ShutdownMode: Sendable {
        /// Send what was taken (queued and in flight), then stop.
        case finishInFlight
        /// Complete what is queued or in flight as `.cancelled` now.
        case cancelInFlight
    }

    /// Stops taking requests, finishes or cancels the rest (each still gets its one completion),
    /// and returns once the transfer thread has ended and freed curl. Producers waiting for room
    /// are released and take nothing more.
    public func shutdown(_ mode: ShutdownMode = .finishInFlight) async {
        requestShutdown(mode)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let joined = loop.shared.withLock { state in
                if state.loopJoined { return true }
                state.joinWaiters.append(continuation)
                return false
            }
            if joined { continuation.resume() }
        }
    }

    /// Starts the shutdown (`shutdown` without the wait for the thread's end).
    func requestShutdown(_ mode: ShutdownMode) {
        let released = loop.shared.withLock { state in
            switch (state.phase, mode) {
            case (.running, .finishInFlight): state.phase = .draining
            case (.running, .cancelInFlight), (.draining, .cancelInFlight): state.phase = .cancelling
            default: break
            }
            wake(&state, force: true)
            return state.releaseWaiters()
        }
        for producer in released { producer.resume() }
    }

    /// The combined CA bundle file, when `ca_file` made one (tests).
    var trustBundlePath: String? { loop.trustBundlePath }

    /// Producers parked in `submit` until there is room (what a test waits for, not a clock).
    var producersWaiting: Int { loop.shared.withLock { $0.waiters.count } }

    public var counters: TransportCounters {
        loop.shared.withLock { state in
            TransportCounters(
                queued: state.queue.count,
                inFlight: state.inFlight,
                awaitingConsumer: state.completed.count,
                submitted: state.submitted,
                completed: state.completedCount,
                connectionsOpened: state.connectionsOpened,
                wireSends: state.wireSends
            )
        }
    }

    // MARK: - Helpers

    /// Wakes the transfer thread from its wait, once per batch of producers. Called under the
    /// lock so the engine cannot be closed meanwhile.
    private func wake(_ state: inout TransportState, force: Bool = false) {
        guard !state.engineClosed, force || !state.wakePending else { return }
        state.wakePending = true
        loop.engine.wake()
    }

    /// What the transport refuses to hand an engine: also run by a hosted loop on what its host
    /// starts.
    static func check(_ request: TransportRequest) throws(TransportError) {
        var clean = CleanURLParts()
        try check(request, clean: &clean)
    }

    /// The URL prefix and suffix last found free of CR, LF and NUL. A lane's requests share a
    /// few of them (one per route), so a loop that keeps this scans each once, not per request;
    /// equal strings compare in one step when they share storage, as a route's do.
    struct CleanURLParts {
        var prefix: String?
        var suffix: String?
    }

    static func check(_ request: TransportRequest, clean: inout CleanURLParts) throws(TransportError) {
        let prefixClean = clean.prefix == request.urlPrefix || !TransportHeaderLines.holdsControl(request.urlPrefix.utf8)
        let suffixClean = clean.suffix == request.urlSuffix || !TransportHeaderLines.holdsControl(request.urlSuffix.utf8)
        if prefixClean { clean.prefix = request.urlPrefix }
        if suffixClean { clean.suffix = request.urlSuffix }
        guard request.urlByteCount <= TransportRequest.maxURLBytes, prefixClean, suffixClean, !TransportHeaderLines.holdsControl(request.urlTarget)
        else {
            throw TransportError.invalidRequest("the URL is longer than \(TransportRequest.maxURLBytes) bytes or holds CR, LF or NUL")
        }
        // Shared lines were checked once, when they were made.
        if let problem = request.headers.problem ?? request.lastHeaders?.problem {
            throw TransportError.invalidRequest(problem)
        }
        let items = request.headerItemsMeasure
        guard !items.holdsControl else { throw TransportError.invalidRequest("a header line holds CR, LF or NUL") }
        let lines = request.headers.count &+ items.lines &+ (request.lastHeaders?.count ?? 0)
        guard lines <= TransportRequest.maxHeaderLines, items.bytes <= TransportRequest.maxHeaderItemBytes else {
            throw TransportError.invalidRequest(
                "more than \(TransportRequest.maxHeaderLines) header lines or \(TransportRequest.maxHeaderItemBytes) bytes of per-request headers"
            )
        }
        guard request.timeoutMilliseconds >= 0, request.timeoutMilliseconds <= 86_400_000 else {
            throw TransportError.invalidRequest("timeout must be 0...86400000 ms, got \(request.timeoutMilliseconds)")
        }
        guard request.method != .get || request.body.isEmpty else {
            throw TransportError.invalidRequest("a GET request carries no body")
        }
    }
}

/// The completions of one transport, in batches.
public struct TransportCompletions: AsyncSequence, Sendable {
    public typealias Element = [TransportResponse]
    let transport: HTTP2Transport

    public struct AsyncIterator: AsyncIteratorProtocol {
        let transport: HTTP2Transport
        public mutating func next() async -> [TransportResponse]? { await transport.nextBatch() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(transport: transport) }
}
