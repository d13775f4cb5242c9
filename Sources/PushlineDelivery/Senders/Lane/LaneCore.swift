import PushlineCore

/// One request inside a lane, with what the lane learned about it.
struct LaneItem: Sendable {
    var request: OutgoingRequest
    /// Nil until its first send.
    var retry: RetryPolicy.State?
    var firstSentAt: DeliveryInstant?
    /// A `.deferred` event went out (and `request` is a detached copy).
    var deferred = false
    /// The status of its last answer (0: none).
    var lastStatus = 0
    /// The credential of its current send.
    var credential: LaneCredential?

    init(_ request: OutgoingRequest) { self.request = request }

    var attempts: Int { retry?.attempts ?? 0 }
}

/// The state of one lane, on one actor: the main queue, the retry heap, the requests in
/// flight, the rate limiter, the in-flight limit and the retry policy. The pump task asks it
/// for batches to send (`nextBatch`), the reader task hands it the transport's completions
/// (`completed`); it decides every outcome and emits the events. It never waits for the
/// network itself.
actor LaneCore {
    let provider: Provider
    private let settings: SenderSettings
    private let routes: LaneRoutes
    private let authenticator: LaneAuthenticator
    private let clock: any DeliveryClock
    private let logger: (@Sendable (String) -> Void)?
    private let output: AsyncStream<[SendEvent]>.Continuation
    private let timeoutMilliseconds: Int
    /// Called once when the lane has nothing left: shuts the transports down.
    private let onDone: @Sendable () async -> Void
    private let counters: @Sendable () -> Int

    /// The main queue's size at which `send` suspends.
    let queueCapacity: Int
    /// The retry heap's size at which `send` suspends (each holds its own copy of its bytes).
    let retryCapacity: Int
    static let maxBatch = 256
    /// How long the lane waits for a token endpoint that does not answer (or answers 429 / 5xx)
    /// before it stops: patient, since nothing can be sent meanwhile anyway (about a minute
    /// of jittered waits, at most ten).
    static let credentialRetryPolicy = RetryPolicy(
        maximumAttempts: 8, initialBackoff: .seconds(1), maximumBackoff: .seconds(60), maximumTotalTime: .seconds(600)
    )
    /// The longest the pump sleeps before looking at the clock again (a test clock may jump).
    static let maxSleep: Duration = .milliseconds(50)

    private var queue = FIFOQueue<LaneItem>()
    private var retries = RetryHeap<LaneItem>()
    private var inFlight: [UInt64: LaneItem] = [:]
    private var limit: InFlightLimit
    private var limiter: ProviderRateLimiter
    private var random: SeededRandomSource
    private var nextSlot: UInt64 = 1
    /// One request at a time until an answer shows the credential is accepted: a fresh APNs
    /// connection allows one stream until then, and a wrong key then costs one request, not a
    /// window. Set again after a request ended without an answer (a lost or refused connection).
    private var warming = true
    private var everAnswered = false
    /// Requests that ended without an answer since the lane started, while none has been
    /// answered yet: the endpoint is unreachable after `retry.maximumAttempts` of them.
    private var unansweredFailures = 0
    /// Items taken by the pump and not yet dispatched, and items waiting for a credential
    /// decision: not in any queue, but not settled either.
    private var pumpHolding = 0
    private var limbo = 0

    private var stoppedBecause: String?
    private var cancelled = false
    /// `drain()` came (the run is stopping): nothing new starts, and every request that will
    /// get no answer settles as unsent (`run_stopped`), not failed, unless the provider stopped.
    private var draining = false
    private var finishing = false
    private var done = false
    private var ended = false

    private var credentialRetry: RetryPolicy.State?
    private var credentialRetryAt: DeliveryInstant?

    private var sendWaiters: [CheckedContinuation<Void, Never>] = []
    private var pumpWaiter: CheckedContinuation<Void, Never>?
    private var waitGeneration: UInt64 = 0
    private var endWaiters: [CheckedContinuation<Void, Never>] = []

    private var attempts = 0
    private var resends = 0
    private var slowdowns = 0

    init(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, authenticator: LaneAuthenticator,
        clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?,
        output: AsyncStream<[SendEvent]>.Continuation, connectionsOpened: @escaping @Sendable () -> Int,
        onDone: @escaping @Sendable () async -> Void
    ) {
        self.provider = provider
        self.settings = settings
        self.routes = routes
        self.authenticator = authenticator
        self.clock = clock
        self.logger = logger
        self.output = output
        self.onDone = onDone
        self.counters = connectionsOpened
        let milliseconds = DurationMath.nanoseconds(settings.requestTimeout) / 1_000_000
        timeoutMilliseconds = Int(Swift.min(Swift.max(milliseconds, 1), 86_400_000))
        limit = InFlightLimit(connections: settings.connections, streamsPerConnection: settings.streamsPerConnection)
        limiter = ProviderRateLimiter(rate: settings.rate, now: clock.now())
        random = SeededRandomSource(seed: seed)
        queueCapacity = Swift.max(256, Swift.min(limit.capacity * 2, 65_536))
        retryCapacity = Swift.max(1024, Swift.min(limit.capacity * 2, 16_384))
    }

    // MARK: - Taking requests

    /// Queues `requests` (or settles them at once when the lane stopped or was cancelled), then
    /// waits while the queue or the retry heap is full.
    func enqueue(_ requests: [OutgoingRequest]) async {
        guard !requests.isEmpty else { return }
        if draining, stoppedBecause == nil {
            var events: [SendEvent] = []
            events.reserveCapacity(requests.count)
            for request in requests {
                settle(LaneItem(request), .unsent(attempts: 0, possibleDuplicate: false), now: nil, into: &events)
            }
            emit(events)
            return
        }
        if stoppedBecause != nil || cancelled || done {
            let reason = cancelled || done ? LaneFailureReason.cancelled : LaneFailureReason.providerStopped
            var events: [SendEvent] = []
            events.reserveCapacity(requests.count)
            for request in requests {
                settle(LaneItem(request), .failed(reason: reason, httpStatus: 0, attempts: 0), now: nil, into: &events)
            }
            emit(events)
            return
        }
        for request in requests { queue.append(LaneItem(request)) }
        signalPump()
        while isFull, stoppedBecause == nil, !cancelled, !done, !draining {
            await withCheckedContinuation { sendWaiters.append($0) }
        }
    }

    private var isFull: Bool { queue.count >= queueCapacity || retries.count >= retryCapacity }

    private func releaseSendWaiters(all: Bool = false) {
        guard all || !isFull, !sendWaiters.isEmpty else { return }
        let waiting = sendWaiters
        sendWaiters.removeAll()
        for waiter in waiting { waiter.resume() }
    }

    // MARK: - The pump's side

    /// The next requests to send, already counted against the in-flight limit and the rate
    /// limiter; nil when the pump should end (done, stopped or cancelled).
    func nextBatch() async -> [LaneItem]? {
        while true {
            if done || stoppedBecause != nil || cancelled { return nil }
            let now = clock.now()
            var wakeAt: DeliveryInstant?
            if let at = credentialRetryAt, now < at {
                wakeAt = at
            } else {
                credentialRetryAt = nil
                var batch: [LaneItem] = []
                taking: while batch.count < Self.maxBatch {
                    if warming, limit.inFlight > 0 { break }
                    if limit.isFull { break }
                    let fromRetries: Bool
                    if let due = retries.earliest, due <= now {
                        fromRetries = true
                    } else if !queue.isEmpty {
                        fromRetries = false
                    } else {
                        wakeAt = retries.earliest
                        break
                    }
                    switch limiter.acquire(now: now) {
                    case .waitUntil(let instant):
                        wakeAt = instant
                        break taking
                    case .sendNow:
                        break
                    }
                    let item = fromRetries ? retries.popDue(now: now) : queue.popFirst()
                    guard let item else { break }
                    _ = limit.tryAcquire()
                    batch.append(item)
                }
                if !batch.isEmpty {
                    pumpHolding += batch.count
                    releaseSendWaiters()
                    return batch
                }
            }
            await waitForSignal(until: wakeAt)
        }
    }

    /// Sleeps until signalled, or until `deadline` (looking at the clock at least every
    /// `maxSleep`).
    private func waitForSignal(until deadline: DeliveryInstant?) async {
        waitGeneration &+= 1
        let generation = waitGeneration
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pumpWaiter = continuation
            if let deadline {
                let delay = Swift.min(Swift.max(deadline.duration(since: clock.now()), .microseconds(100)), Self.maxSleep)
                Task { [weak self] in
                    try? await Task.sleep(for: delay)
                    await self?.wake(generation)
                }
            }
        }
    }

    private func wake(_ generation: UInt64) {
        guard generation == waitGeneration else { return }
        signalPump()
    }

    private func signalPump() {
        guard let waiter = pumpWaiter else { return }
        pumpWaiter = nil
        waiter.resume()
    }

    /// The credential for `items` could not be had: wait and try again, or stop.
    func credentialFailed(_ items: [LaneItem], _ failure: LaneAuthenticator.Failure) {
        pumpHolding -= items.count
        for _ in items { limit.release() }
        let now = clock.now()
        if draining {
            // Stopping: no credential retry; the items were never sent with this credential.
            var events: [SendEvent] = []
            for item in items { settle(item, unsentOutcome(item), now: now, into: &events) }
            emit(events)
            if case .fatal(let message) = failure { stop(message) }
            checkDone()
            return
        }
        switch failure {
        case .fatal(let message):
            for item in items { queue.append(item) }
            stop(message)
        case .retryable(let message):
            var state = credentialRetry ?? RetryPolicy.State(firstSentAt: now)
            switch Self.credentialRetryPolicy.decide(after: RetryPolicy.Failure(), state: &state, now: now, unixTime: clock.unixTime(), random: &random) {
            case .retry(let at, _):
                state.recordSend()
                credentialRetry = state
                credentialRetryAt = at
                logger?("\(provider.rawValue): \(message); trying again in \(at.duration(since: now))")
                for item in items { retries.insert(item, due: at) }
            case .giveUp:
                for item in items { queue.append(item) }
                stop("\(message) (\(state.attempts) tries)")
            }
        }
        checkDone()
    }

    func credentialSucceeded() {
        credentialRetry = nil
    }

    /// Builds the transport requests of `items` sent with `credential` and records them in
    /// flight; settles at once what cannot be sent.
    func dispatch(_ items: [LaneItem], credential: LaneCredential) -> [TransportRequest] {
        pumpHolding -= items.count
        var requests: [TransportRequest] = []
        requests.reserveCapacity(items.count)
        var events: [SendEvent] = []
        let now = clock.now()
        let authorization = credential.headerLine
        for var item in items {
            if draining, stoppedBecause == nil {
                limit.release()
                settle(item, unsentOutcome(item), now: now, into: &events)
                continue
            }
            if stoppedBecause != nil || cancelled {
                limit.release()
                settle(item, .failed(reason: cancelled ? LaneFailureReason.cancelled : LaneFailureReason.providerStopped, httpStatus: item.lastStatus, attempts: item.attempts), now: now, into: &events)
                continue
            }
            let slot = nextSlot
            nextSlot &+= 1
            switch routes.build(item.request, slot: slot, authorization: authorization, timeoutMilliseconds: timeoutMilliseconds) {
            case .unsendable(let reason):
                limit.release()
                settle(item, .failed(reason: reason, httpStatus: 0, attempts: item.attempts), now: now, into: &events)
            case .request(let request):
                if var state = item.retry {
                    state.recordSend()
                    item.retry = state
                    resends &+= 1
                } else {
                    item.retry = RetryPolicy.State(firstSentAt: now)
                    item.firstSentAt = now
                }
                attempts &+= 1
                item.credential = credential
                inFlight[slot] = item
                requests.append(request)
            }
        }
        emit(events)
        checkDone()
        return requests
    }

    /// The transport did not take these (it is shutting down): they get no completion.
    func notTaken(_ slots: [UInt64]) {
        var events: [SendEvent] = []
        let now = clock.now()
        for slot in slots {
            guard let item = inFlight.removeValue(forKey: slot) else { continue }
            limit.release()
            if draining, stoppedBecause == nil {
                // `dispatch` counted a send the transport never took.
                settle(item, unsentOutcome(item, attempts: item.attempts - 1), now: now, into: &events)
                continue
            }
            let reason = stoppedBecause != nil && !cancelled ? LaneFailureReason.providerStopped : LaneFailureReason.cancelled
            settle(item, .failed(reason: reason, httpStatus: item.lastStatus, attempts: item.attempts), now: now, into: &events)
        }
        emit(events)
        checkDone()
    }

    // MARK: - The reader's side

    /// Decides the outcome of each completion.
    func completed(_ responses: [TransportResponse]) async {
        var events: [SendEvent] = []
        var refresh: [(LaneItem, ResponseClassification)] = []
        let now = clock.now()
        let unixTime = clock.unixTime()
        for response in responses {
            guard var item = inFlight.removeValue(forKey: response.slot) else { continue }
            limit.release()
            if response.result == .cancelled {
                // Cancelled after it may have reached the provider: the device may have been
                // notified, so the outcome says so (a resend would be a possible duplicate).
                if draining {
                    settle(item, unsentOutcome(item, mayHaveBeenDelivered: response.mayHaveBeenDelivered), now: now, into: &events)
                } else {
                    let duplicate = response.mayHaveBeenDelivered || (item.retry?.possibleDuplicate ?? false)
                    settle(item, .failed(reason: LaneFailureReason.cancelled, httpStatus: item.lastStatus, attempts: item.attempts, possibleDuplicate: duplicate), now: now, into: &events)
                }
                continue
            }
            let classification = classify(response)
            item.lastStatus = classification.status
            let rateBefore = limiter.currentRate
            limiter.observe(classification, now: now, unixTime: unixTime)
            if limiter.currentRate < rateBefore { slowdowns &+= 1 }
            if classification.status > 0 {
                everAnswered = true
                switch classification.outcome {
                case .configurationError, .refreshCredentials: break
                default: warming = false
                }
            } else {
                warming = true
            }
            let attempts = item.attempts
            switch classification.outcome {
            case .sent(let providerID):
                settle(item, .sent(providerID: providerID, attempts: attempts, possibleDuplicate: item.retry?.possibleDuplicate ?? false), now: now, into: &events)
            case .invalidToken(let timestamp):
                settle(item, .invalidToken(reason: classification.reason, timestamp: timestamp), now: now, into: &events)
            case .permanent:
                settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: attempts), now: now, into: &events)
            case .configurationError:
                stop(configurationMessage(classification))
                settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: attempts), now: now, into: &events)
            case .refreshCredentials:
                refresh.append((item, classification))
            case .retryable, .throttled:
                if let message = unreachableMessage(response) {
                    stop(message)
                }
                retry(item, classification, mayHaveBeenDelivered: response.mayHaveBeenDelivered, now: now, unixTime: unixTime, into: &events)
            }
        }
        emit(events)
        if !refresh.isEmpty { await refreshCredentials(refresh) }
        signalPump()
        checkDone()
    }

    private func retry(
        _ item: LaneItem, _ classification: ResponseClassification, mayHaveBeenDelivered: Bool,
        now: DeliveryInstant, unixTime: Int64, into events: inout [SendEvent]
    ) {
        var item = item
        // Cancelled while draining: decided below, so it settles unsent (or failed if its retry
        // budget is spent anyway).
        if stoppedBecause != nil || (cancelled && !draining) {
            let reason = cancelled ? LaneFailureReason.cancelled : LaneFailureReason.providerStopped
            settle(item, .failed(reason: reason, httpStatus: classification.status, attempts: item.attempts), now: now, into: &events)
            return
        }
        var state = item.retry ?? RetryPolicy.State(firstSentAt: now)
        let failure = RetryPolicy.Failure(classification, bodyMayHaveBeenWritten: mayHaveBeenDelivered)
        let decision = settings.retry.decide(after: failure, state: &state, now: now, unixTime: unixTime, random: &random)
        item.retry = state
        switch decision {
        case .retry where draining:
            // Stopping: the retry is not made; the device is unsent (its state knows whether an
            // attempt may have been delivered).
            settle(item, unsentOutcome(item), now: now, into: &events)
        case .retry(let at, _):
            if !item.deferred {
                // The batch may go back to the pool: keep this request's own copy.
                item.deferred = true
                item.request = item.request.detached()
                events.append(.deferred(tag: item.request.tag, line: item.request.entry.line))
            }
            retries.insert(item, due: at)
        case .giveUp(let reason):
            settle(item, .failed(reason: reason.rawValue, httpStatus: classification.status, attempts: item.attempts), now: now, into: &events)
        }
    }

    /// APNs 403 ExpiredProviderToken / FCM 401: a new credential once and resend at once, or stop.
    private func refreshCredentials(_ items: [(LaneItem, ResponseClassification)]) async {
        limbo += items.count
        for (item, classification) in items {
            let decision: LaneAuthenticator.RefreshDecision
            if let credential = item.credential {
                decision = await authenticator.rejected(credential)
            } else {
                decision = .stop("internal error: a request without a credential")
            }
            limbo -= 1
            var events: [SendEvent] = []
            let now = clock.now()
            switch decision {
            case .resend:
                if draining, stoppedBecause == nil {
                    settle(item, unsentOutcome(item), now: now, into: &events)
                } else if stoppedBecause != nil || cancelled {
                    let reason = cancelled ? LaneFailureReason.cancelled : LaneFailureReason.providerStopped
                    settle(item, .failed(reason: reason, httpStatus: classification.status, attempts: item.attempts), now: now, into: &events)
                } else if item.attempts >= settings.retry.maximumAttempts {
                    settle(item, .failed(reason: RetryPolicy.GiveUpReason.attemptsExhausted.rawValue, httpStatus: classification.status, attempts: item.attempts), now: now, into: &events)
                } else {
                    // Resent at once with the new credential, ahead of the main queue.
                    retries.insert(item, due: now)
                }
            case .stop(let message):
                stop("\(Self.name(provider)) answered HTTP \(classification.status) \(classification.reason): \(message)")
                settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: item.attempts), now: now, into: &events)
            }
            emit(events)
        }
    }

    private func classify(_ response: TransportResponse) -> ResponseClassification {
        let status = response.result == .response ? response.status : 0
        let retryAfter = response.headers["retry-after"].map { Array($0.utf8) }
        switch provider {
        case .apns:
            return APNsResponseClassifier.classify(
                status: status, body: response.body, apnsID: response.headers["apns-id"].map { Array($0.utf8) }, retryAfter: retryAfter
            )
        default:
            return FCMResponseClassifier.classify(status: status, body: response.body, retryAfter: retryAfter)
        }
    }

    /// Whether the provider cannot be reached at all, while nothing has answered yet: a
    /// certificate that does not verify (no `ca_file` for a test server, or the wrong one) stops
    /// the lane at once; a host that does not resolve, refuses connections or never answers
    /// stops it after `retry.maximumAttempts` such requests in a row (one at a time: the lane
    /// is warming), rather than trying every device of the audience five times.
    private func unreachableMessage(_ response: TransportResponse) -> String? {
        guard !everAnswered else { return nil }
        let code = response.curlCode
        let endpoint = settings.endpoint ?? "the provider's host"
        // CURLE_SSL_CERTPROBLEM 58, CURLE_PEER_FAILED_VERIFICATION 60, CURLE_SSL_CACERT_BADFILE 77,
        // CURLE_SSL_ISSUER_ERROR 83.
        if response.result == .failed, [58, 60, 77, 83].contains(code) {
            return "\(Self.name(provider)): the TLS certificate of \(endpoint) does not verify: \(response.curlErrorDescription) (curl error \(code)); check endpoint and ca_file; stopping this provider"
        }
        unansweredFailures += 1
        guard unansweredFailures >= settings.retry.maximumAttempts else { return nil }
        let detail = response.result == .timedOut ? "timed out" : "\(response.curlErrorDescription) (curl error \(code))"
        return "\(Self.name(provider)): cannot reach \(endpoint): \(unansweredFailures) requests in a row got no answer, the last: \(detail); check endpoint; stopping this provider"
    }

    private func configurationMessage(_ classification: ResponseClassification) -> String {
        let hint: String
        switch provider {
        case .apns: hint = "check team_id, key_id, key_file and environment"
        default: hint = "check the service account, project_id and the account's Firebase roles"
        }
        let message = classification.message.map { ": " + $0 } ?? ""
        return "\(Self.name(provider)) answered HTTP \(classification.status) \(classification.reason)\(message) for \(authenticator.identity): a configuration error; stopping this provider (\(hint))"
    }

    static func name(_ provider: Provider) -> String {
        switch provider {
        case .apns: "APNs"
        case .fcm: "FCM"
        default: provider.rawValue
        }
    }

    // MARK: - Stopping and ending

    /// A configuration error: everything queued or waiting for a retry fails now, everything
    /// given later at once; what is in flight gets its answer.
    private func stop(_ message: String) {
        guard stoppedBecause == nil, !cancelled else { return }
        stoppedBecause = message
        logger?("\(provider.rawValue): stopped: \(message)")
        failWaiting(reason: LaneFailureReason.providerStopped)
        releaseSendWaiters(all: true)
        signalPump()
    }

    private func failWaiting(reason: String) {
        var events: [SendEvent] = []
        let now = clock.now()
        for item in queue.removeAll() + retries.removeAll() {
            settle(item, .failed(reason: reason, httpStatus: item.lastStatus, attempts: item.attempts), now: now, into: &events)
        }
        emit(events)
    }

    func cancel() {
        guard !cancelled, !done else { return }
        cancelled = true
        // After `drain()` nothing waits any more (it all settled as unsent).
        failWaiting(reason: LaneFailureReason.cancelled)
        releaseSendWaiters(all: true)
        signalPump()
        checkDone()
    }

    /// Graceful stop (`DeliveryLane.drain()`): what is queued or waiting for a retry settles as
    /// unsent now, later requests at once; what is in flight gets its answer. The lane ends at
    /// `finish()` (or `cancel()`) as usual: until then requests may still come, and their events
    /// must have a stream to go to.
    func drain() {
        guard !draining else { return }
        draining = true
        if stoppedBecause == nil {
            var events: [SendEvent] = []
            let now = clock.now()
            for item in queue.removeAll() + retries.removeAll() {
                settle(item, unsentOutcome(item), now: now, into: &events)
            }
            emit(events)
        }
        releaseSendWaiters(all: true)
        signalPump()
        checkDone()
    }

    /// A request that will not get an answer because the run is stopping. `attempts`: sends
    /// made (the item's own count unless told otherwise).
    private func unsentOutcome(_ item: LaneItem, attempts: Int? = nil, mayHaveBeenDelivered: Bool = false) -> DeliveryOutcome {
        let duplicate = mayHaveBeenDelivered || (item.retry?.possibleDuplicate ?? false)
        return .unsent(attempts: Swift.max(0, attempts ?? item.attempts), possibleDuplicate: duplicate)
    }

    /// No more requests: ends once everything has settled.
    func finish() async {
        finishing = true
        signalPump()
        checkDone()
        await waitForEnd()
    }

    func waitForEnd() async {
        guard !ended else { return }
        await withCheckedContinuation { endWaiters.append($0) }
    }

    private func checkDone() {
        guard !done, finishing || cancelled,
              queue.isEmpty, retries.isEmpty, inFlight.isEmpty, pumpHolding == 0, limbo == 0
        else { return }
        done = true
        signalPump()
        releaseSendWaiters(all: true)
        let onDone = self.onDone
        Task { await onDone() }
    }

    /// The transport's completions ended: the event stream ends.
    func transportEnded() {
        // Nothing should be left; if the transport ended on its own, settle what it held.
        var events: [SendEvent] = []
        let now = clock.now()
        for item in inFlight.values {
            if draining, stoppedBecause == nil {
                settle(item, unsentOutcome(item), now: now, into: &events)
            } else {
                settle(item, .failed(reason: LaneFailureReason.cancelled, httpStatus: item.lastStatus, attempts: item.attempts), now: now, into: &events)
            }
        }
        inFlight.removeAll()
        emit(events)
        done = true
        ended = true
        output.finish()
        signalPump()
        releaseSendWaiters(all: true)
        let waiting = endWaiters
        endWaiters.removeAll()
        for waiter in waiting { waiter.resume() }
    }

    // MARK: - Events and report

    private func settle(_ item: LaneItem, _ outcome: DeliveryOutcome, now: DeliveryInstant?, into events: inout [SendEvent]) {
        let latency: Duration? = if let first = item.firstSentAt, let now { now.duration(since: first) } else { nil }
        events.append(.settled(SettledRequest(request: item.request, provider: provider, outcome: outcome, latency: latency, wasDeferred: item.deferred)))
    }

    private func emit(_ events: [SendEvent]) {
        guard !events.isEmpty else { return }
        output.yield(events)
    }

    func report() -> LaneReport {
        var report = LaneReport(provider: provider)
        report.stoppedBecause = stoppedBecause
        report.attempts = attempts
        report.retries = resends
        report.finalRatePerSecond = limiter.currentRate
        report.slowdowns = slowdowns
        report.connectionsOpened = counters()
        return report
    }
}
