import PushlineCore

/// Every decision of one provider's lane, as a value: the main queue, the retry heap, the
/// requests in flight, the rate limiter, the in-flight limit, warm-up, the credential's state
/// and the lane's phase (running, finishing, draining, cancelled, ended).
///
/// It does no I/O, never waits and reads no clock: its driver (`LaneHost`, on the transfer
/// thread) feeds it events with the time they happened — requests offered, a credential ready or failed, transfers
/// completed, a timer fired, a rejected credential's verdict, finish, drain,
/// cancel — and carries out the `Actions` each returns: start these transfers, emit these
/// events, fetch a credential, ask about a rejected one, log these notices, wake at this
/// instant, end. Tests drive it with instants of their own, through every answer a provider
/// gives, without a network and without sleeping (in the manner of swift-nio's
/// `NIOThrowingAsyncSequenceProducerStateMachine`).
///
/// Bounded by construction: requests queued, in flight, waiting for a retry and waiting for a
/// credential verdict together never exceed `capacity`. `offer` takes only what fits, and a
/// retry moves a request from in flight to the heap, so the heap can never grow past the cap.
struct LaneStateMachine {
    /// What the driver must do after an event, in this order: emit `events`, log `notices`,
    /// start `transfers`, fetch a credential, ask about `rejectedCredentials`, then wait until
    /// `wakeAt` (or the next event); `ended` once every request has settled after finish,
    /// drain or cancel.
    struct Actions {
        var events: [SendEvent] = []
        var notices: [String] = []
        var transfers: [TransportRequest] = []
        var fetchCredential = false
        var rejectedCredentials: [(check: UInt64, credential: LaneCredential)] = []
        /// The next instant something becomes due (a retry, the rate, a credential retry, a
        /// pause's end); nil when only an event can move the lane on.
        var wakeAt: DeliveryInstant?
        /// Offers may go on: fewer than `capacity` requests are held.
        var hasRoom = true
        var ended = false
    }

    /// One completed transfer, as the machine needs it (built from a `TransportResponse`).
    struct Completion: Sendable {
        var slot: UInt64
        var result: TransportResult
        var status: Int
        var body: [UInt8]
        /// The transport cut the body at this many bytes (it is then classified by its status).
        var bodyTruncatedAt: Int?
        /// The message's id as the provider's header gave it: `apns-id` (APNs), `x-amzn-RequestId` (ADM).
        var messageID: [UInt8]?
        var retryAfter: [UInt8]?
        /// Why the transfer failed, whichever engine sent it; nil for an answer.
        var failure: TransportFailure.Kind?
        var curlErrorDescription: String
        /// The request may have reached the server on one of its sends.
        var mayHaveBeenDelivered: Bool
        /// How many times the transport put it on the wire (libcurl re-sends a dropped
        /// connection's streams on its own); 0 when it never was.
        var wireSends: Int
        /// The server proved it did not process the last send (REFUSED_STREAM, or a stream above
        /// a GOAWAY's last-stream-id): a resend is safe.
        var provenUnprocessed: Bool
        /// How the stream ended (the transport's word; derived from the flags above when not
        /// given, the way `TransportResponse` derives it for libcurl). The lane decides by it:
        /// refused or not sent → resent unmarked; lost or reset → at most one more copy, marked;
        /// an answer we rejected, or one that broke its connection → failed at once, marked.
        var end: TransportStreamEnd

        init(
            slot: UInt64, result: TransportResult, status: Int = 0, body: [UInt8] = [], bodyTruncatedAt: Int? = nil, messageID: [UInt8]? = nil,
            retryAfter: [UInt8]? = nil, failure: TransportFailure.Kind? = nil, curlErrorDescription: String = "",
            mayHaveBeenDelivered: Bool? = nil, wireSends: Int? = nil, provenUnprocessed: Bool = false, end: TransportStreamEnd? = nil
        ) {
            self.slot = slot
            self.result = result
            self.status = status
            self.body = body
            self.bodyTruncatedAt = bodyTruncatedAt
            self.messageID = messageID
            self.retryAfter = retryAfter
            self.failure = failure
            self.curlErrorDescription = curlErrorDescription
            let answered = result == .response && status > 0
            self.mayHaveBeenDelivered = mayHaveBeenDelivered ?? answered
            self.wireSends = Swift.max(0, wireSends ?? (answered || (mayHaveBeenDelivered ?? false) ? 1 : 0))
            self.provenUnprocessed = provenUnprocessed
            if let end {
                self.end = end
            } else if result == .cancelled {
                self.end = .cancelled
            } else if answered {
                self.end = .answered
            } else if self.wireSends == 0 {
                self.end = .notSent
            } else if provenUnprocessed {
                self.end = .refused
            } else {
                self.end = .lost
            }
        }
    }

    enum Phase: Equatable {
        /// Taking requests and sending.
        case running
        /// No more requests: send what is queued, wait out the retries (or, draining, only
        /// what is in flight).
        case finishing
        /// Stop now (the run's immediate stop): what waits settles unsent; the driver cancels
        /// what is in flight, whose completions settle unsent too.
        case cancelled
        /// Everything given has settled; nothing more happens.
        case ended
    }

    private enum CredentialState {
        case idle
        case fetching
        /// The token endpoint failed: ask again not before this instant.
        case retryAt(DeliveryInstant)
    }

    /// A request waiting for the authenticator's verdict on the credential it was refused with.
    private struct RefreshWaiter {
        var item: LaneItem
        var classification: ResponseClassification
    }

    // MARK: Configuration

    let provider: Provider
    private let retryPolicy: RetryPolicy
    private var routes: LaneRoutes
    private let timeoutMilliseconds: Int
    /// Who the provider refuses (key and team, or service account), for stop messages.
    private let identity: String
    private let endpointText: String
    /// Requests held at most: queued + in flight + waiting for a retry + waiting for a verdict.
    let capacity: Int
    static let maxBatch = 256
    /// How long the lane waits for a token endpoint that does not answer (or answers 429 / 5xx)
    /// before it stops: patient, since nothing can be sent meanwhile anyway (about a minute of
    /// jittered waits, at most ten).
    static let credentialRetryPolicy = RetryPolicy(
        maximumAttempts: 8, initialBackoff: .seconds(1), maximumBackoff: .seconds(60), maximumTotalTime: .seconds(600)
    )

    // MARK: State

    private(set) var phase = Phase.running
    /// Graceful stop (`drain`): nothing new starts; what waits and what is offered settles
    /// unsent; what is in flight gets its answer. The lane still ends only after finish or
    /// cancel (requests handed over before the drain may still be on their way).
    private(set) var draining = false
    /// The run is stopping (drained, cancelled, or ended): nothing starts, and a request that
    /// cannot be sent any more settles unsent (`run_stopped`), never failed, unless it got a
    /// definite answer (docs/delivery.md, "Ending").
    var runStopping: Bool { draining || phase == .cancelled || phase == .ended }
    /// Set when a configuration error stopped the provider.
    private(set) var stoppedBecause: String?
    private var queue = FIFOQueue<LaneItem>()
    private var retries = RetryHeap<LaneItem>()
    private var inFlight: [UInt64: LaneItem] = [:]
    private var awaitingVerdict: [UInt64: [RefreshWaiter]] = [:]
    private var awaitingVerdictCount = 0
    private var limit: InFlightLimit
    private var limiter: ProviderRateLimiter
    /// The limiter said "not before": no credential is fetched for a batch until then.
    private var rateWaitUntil: DeliveryInstant?
    private var random: SeededRandomSource
    private var credential = CredentialState.idle
    private var credentialRetry: RetryPolicy.State?
    private var nextSlot: UInt64 = 1
    private var nextCheck: UInt64 = 1
    /// One request at a time until an answer shows the credential is accepted: a fresh APNs
    /// connection allows one stream until then, and a wrong key then costs one request, not a
    /// window. Once anything was answered the lane never serializes again: a request that gets
    /// no answer slows the lane (the rate is halved), it does not make every other wait its turn.
    private(set) var warming = true
    private var everAnswered = false
    /// Requests in a row that ended without an answer while nothing has been answered yet.
    private var unansweredInARow = 0
    private var pausedUntil: DeliveryInstant?
    /// Pauses the whole lane through a provider-wide outage, then probes one request at a time
    /// (docs/delivery.md, "Outages").
    private(set) var breaker: OutageBreaker
    /// The half-open breaker's probe in flight.
    private var probeSlot: UInt64?

    // MARK: Counters (the lane's report)

    /// Sends put on the wire: the transport's count, libcurl's own re-sends included.
    private(set) var wireSends = 0
    /// Resends the lane decided (retries and credential refreshes).
    private(set) var resends = 0
    private(set) var slowdowns = 0
    private(set) var pauses = 0

    init(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, identity: String, seed: UInt64, now: DeliveryInstant
    ) {
        self.provider = provider
        retryPolicy = settings.retry
        self.routes = routes
        self.identity = identity
        endpointText = settings.endpoint ?? "the provider's host"
        let milliseconds = DurationMath.nanoseconds(settings.requestTimeout) / 1_000_000
        timeoutMilliseconds = Int(Swift.min(Swift.max(milliseconds, 1), 86_400_000))
        limit = InFlightLimit(connections: settings.connections, streamsPerConnection: settings.streamsPerConnection)
        limiter = ProviderRateLimiter(rate: settings.rate, now: now)
        random = SeededRandomSource(seed: seed)
        capacity = Self.capacity(inFlight: limit.capacity)
        var breakerSettings = OutageBreaker.Settings()
        // No request could wait out a longer outage: its time budget ends first.
        breakerSettings.maximumOutage = settings.retry.maximumTotalTime
        breaker = OutageBreaker(settings: breakerSettings)
    }

    /// In flight at most, plus as much again waiting (at least 1,024): enough queued that the
    /// connections never starve while the sink cuts the next batch.
    static func capacity(inFlight: Int) -> Int {
        let (doubled, overflow) = inFlight.addingReportingOverflow(Swift.max(inFlight, 1024))
        return overflow ? Int.max : doubled
    }

    /// Requests held now (queued, in flight, waiting for a retry or a verdict).
    var held: Int { queue.count + inFlight.count + retries.count + awaitingVerdictCount }
    var inFlightCount: Int { inFlight.count }
    /// Requests in flight at most (connections × streams).
    var inFlightCapacity: Int { limit.capacity }
    /// The request a transfer in flight carries: the host's wire log reads its line and device.
    func inFlightEntry(slot: UInt64) -> RequestEntry? { inFlight[slot]?.request.entry }
    var retryCount: Int { retries.count }
    var currentRate: Double { limiter.currentRate }
    /// Offers are settled at once, whatever the room (stopped, draining, cancelled, ended).
    var settlesOffersAtOnce: Bool { refusalReason != nil }

    // MARK: - Events

    /// Takes as many of `requests` as fit (all of them, settled at once, once the lane stopped
    /// or no longer takes requests); returns how many were taken.
    mutating func offer(_ requests: ArraySlice<OutgoingRequest>, now: DeliveryInstant) -> (taken: Int, actions: Actions) {
        var actions = Actions()
        guard !requests.isEmpty else {
            advance(now: now, into: &actions)
            return (0, actions)
        }
        if let reason = refusalReason {
            for request in requests {
                settle(LaneItem(request), reason.outcome(LaneItem(request), status: 0), now: nil, into: &actions)
            }
            advance(now: now, into: &actions)
            return (requests.count, actions)
        }
        let room = Swift.max(0, capacity - held)
        let taken = Swift.min(room, requests.count)
        for request in requests.prefix(taken) { queue.append(LaneItem(request)) }
        advance(now: now, into: &actions)
        return (taken, actions)
    }

    /// The credential asked for is here: start what the limits allow with it.
    mutating func credentialReady(_ ready: LaneCredential, now: DeliveryInstant) -> Actions {
        var actions = Actions()
        guard case .fetching = credential else {
            advance(now: now, into: &actions)
            return actions
        }
        credential = .idle
        credentialRetry = nil
        if canStart { dispatch(with: ready, now: now, into: &actions) }
        advance(now: now, into: &actions)
        return actions
    }

    /// The credential could not be had: try again later, or stop the provider.
    mutating func credentialFailed(_ failure: LaneAuthenticator.Failure, now: DeliveryInstant, unixTime: Int64) -> Actions {
        var actions = Actions()
        guard case .fetching = credential else {
            advance(now: now, into: &actions)
            return actions
        }
        credential = .idle
        switch failure {
        case .fatal(let message):
            stop(message, now: now, into: &actions)
        case .retryable(let message):
            var state = credentialRetry ?? RetryPolicy.State(firstSentAt: now)
            switch Self.credentialRetryPolicy.decide(after: RetryPolicy.Failure(), state: &state, now: now, unixTime: unixTime, random: &random) {
            case .retry(let at, _):
                state.recordSend()
                credentialRetry = state
                credential = .retryAt(at)
                actions.notices.append("\(provider.rawValue): \(message); trying again in \(at.duration(since: now))")
            case .giveUp:
                stop("\(message) (\(state.attempts) tries)", now: now, into: &actions)
            }
        }
        advance(now: now, into: &actions)
        return actions
    }

    /// Time passed: whatever became due (a retry, the rate, a pause's end) may start.
    mutating func timerFired(now: DeliveryInstant) -> Actions {
        var actions = Actions()
        advance(now: now, into: &actions)
        return actions
    }

    /// No more requests will be offered: send what is queued, wait out the retries, then end.
    mutating func finish(now: DeliveryInstant) -> Actions {
        var actions = Actions()
        if phase == .running { phase = .finishing }
        advance(now: now, into: &actions)
        return actions
    }

    /// Graceful stop: nothing new starts; what is queued or waiting for a retry settles now as
    /// unsent (`run_stopped`), and so does everything offered later; what is in flight gets its
    /// answer. The lane ends after `finish` or `cancel`, as always.
    mutating func drain(now: DeliveryInstant) -> Actions {
        var actions = Actions()
        if !draining, phase == .running || phase == .finishing {
            draining = true
            settleWaiting(.runStopped, now: now, into: &actions)
        }
        advance(now: now, into: &actions)
        return actions
    }

    /// Stop now (with or without a drain before): what is queued, waiting for a retry or
    /// waiting for a credential verdict settles unsent (`run_stopped`, with the attempts made,
    /// marked when an earlier attempt may have been delivered), and so does everything offered
    /// later; the driver cancels the transfers in flight, whose completions (`.cancelled`) then
    /// settle unsent too (marked when the cancelled attempt may have reached the provider). A
    /// request never fails because of a cancel: only an answer (or a spent retry budget, or the
    /// provider stopping) fails it.
    mutating func cancel(now: DeliveryInstant) -> Actions {
        var actions = Actions()
        switch phase {
        case .running, .finishing:
            phase = .cancelled
            settleWaiting(refusalReason ?? .runStopped, now: now, into: &actions)
            settleAwaitingVerdict(now: now, into: &actions)
        case .cancelled, .ended:
            break
        }
        advance(now: now, into: &actions)
        return actions
    }

    /// The authenticator's verdict on a refused credential (check `check` of `rejectedCredentials`).
    mutating func refreshDecided(check: UInt64, _ decision: LaneAuthenticator.RefreshDecision, now: DeliveryInstant) -> Actions {
        var actions = Actions()
        guard let waiters = awaitingVerdict.removeValue(forKey: check) else {
            advance(now: now, into: &actions)
            return actions
        }
        awaitingVerdictCount -= waiters.count
        switch decision {
        case .resend:
            for waiter in waiters {
                let item = waiter.item
                if let reason = refusalReason {
                    settle(item, reason.outcome(item, status: waiter.classification.status), now: now, into: &actions)
                } else if (item.retry?.countedAttempts ?? 0) >= retryPolicy.maximumAttempts {
                    settle(item, .failed(reason: RetryPolicy.GiveUpReason.attemptsExhausted.rawValue, httpStatus: waiter.classification.status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
                } else {
                    // Resent at once with the new credential, ahead of the main queue.
                    retries.insert(item, due: now)
                }
            }
        case .stop(let message):
            let status = waiters.first?.classification.status ?? 0
            let reason = waiters.first?.classification.reason ?? ""
            stop("\(Self.name(provider)) answered HTTP \(status) \(reason): \(message)", now: now, into: &actions)
            for waiter in waiters {
                settle(waiter.item, .failed(reason: waiter.classification.reason, httpStatus: waiter.classification.status, attempts: waiter.item.wireSends, possibleDuplicate: waiter.item.possibleDuplicate), now: now, into: &actions)
            }
        }
        advance(now: now, into: &actions)
        return actions
    }

    // MARK: - Completions

    /// Decides the outcome of each completed transfer.
    mutating func completed(_ completions: [Completion], now: DeliveryInstant, unixTime: Int64) -> Actions {
        var actions = Actions()
        var refused: [String: (check: UInt64, credential: LaneCredential)] = [:]
        for completion in completions {
            guard var item = inFlight.removeValue(forKey: completion.slot) else { continue }
            let probe = probeSlot == completion.slot
            if probe { probeSlot = nil }
            limit.release()
            item.wireSends &+= completion.wireSends
            wireSends &+= completion.wireSends
            // libcurl put it on the wire more than once by itself (a dropped connection's
            // streams go again on a new one): an earlier copy may have been delivered.
            if completion.wireSends > 1 { item.possibleDuplicate = true }
            if completion.result == .cancelled || completion.end == .cancelled {
                noteBreaker(.neutral, probe: probe, now: now, into: &actions)
                // The device may have been notified by a copy that reached the provider.
                // Its outcome is unknown, whatever else happened to the lane: unsent (a resume
                // sends it again, marked when this attempt may have been delivered).
                if completion.mayHaveBeenDelivered, !completion.provenUnprocessed { item.possibleDuplicate = true }
                settle(item, StopReason.runStopped.outcome(item, status: item.lastStatus), now: now, into: &actions)
                continue
            }
            if completion.result == .notHTTP2 {
                // Refused before a byte of the request was written: the endpoint is not an
                // HTTP/2 server (APNs and FCM v1 speak nothing else).
                stop("\(Self.name(provider)): \(completion.curlErrorDescription); check endpoint; stopping this provider", now: now, into: &actions)
                // Unsent when the run's stop came first (the provider is then not stopped).
                settle(item, (refusalReason ?? .providerStopped).outcome(item, status: 0), now: now, into: &actions)
                continue
            }
            switch completion.end {
            case .answerRejected(let problem):
                // The provider answered (it processed the request), but the answer broke a limit
                // of ours: the same answer would come again, so it is not resent; the device may
                // have been notified.
                noteBreaker(.neutral, probe: probe, now: now, into: &actions)
                item.possibleDuplicate = true
                let reason = LaneFailureReason.answerRejected(problem)
                settle(item, .failed(reason: reason, httpStatus: completion.status, attempts: item.wireSends, possibleDuplicate: true), now: now, into: &actions)
                continue
            case .answerBrokeConnection:
                // Its answer killed the connection (and the streams on it): resending it would
                // risk the same for others; the provider processed it.
                noteBreaker(.neutral, probe: probe, now: now, into: &actions)
                item.possibleDuplicate = true
                let reason = LaneFailureReason.answerBrokeConnection
                settle(item, .failed(reason: reason, httpStatus: completion.status, attempts: item.wireSends, possibleDuplicate: true), now: now, into: &actions)
                continue
            case .answered, .notSent, .refused, .resetByPeer, .lost, .cancelled:
                break
            }
            let classification = classify(completion, of: item.request)
            item.lastStatus = classification.status
            noteAnswer(classification, completion: completion, now: now, into: &actions)
            let health = Self.health(completion, classification)
            noteBreaker(health, probe: probe, now: now, into: &actions)
            // Failures while the breaker holds the lane are the outage's: no attempt is spent.
            let duringOutage = health == .failure && breaker.holdsLane
            switch classification.outcome {
            case .sent(let providerID):
                limiter.recordSuccess(now: now)
                let outcome = DeliveryOutcome.sent(
                    providerID: providerID, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate,
                    replacementToken: classification.replacementToken
                )
                settle(item, outcome, now: now, into: &actions)
            case .invalidToken(let timestamp):
                settle(item, .invalidToken(reason: classification.reason, timestamp: timestamp), now: now, into: &actions)
            case .permanent:
                settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
            case .configurationError:
                stop(configurationMessage(classification), now: now, into: &actions)
                settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
            case .refreshCredentials:
                if let reason = refusalReason {
                    // Stopping (or stopped): it will not be resent by this lane, whatever the
                    // verdict; the refusal proved it was not delivered.
                    settle(item, reason.outcome(item, status: classification.status), now: now, into: &actions)
                    continue
                }
                guard let used = item.credential else {
                    stop("internal error: a request without a credential", now: now, into: &actions)
                    settle(item, .failed(reason: classification.reason, httpStatus: classification.status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
                    continue
                }
                // One verdict per credential refused in this batch: a refusal of an older token
                // than the current one resends without signing again.
                let key = used.headerLine ?? ""
                let check: UInt64
                if let known = refused[key] {
                    check = known.check
                } else {
                    check = nextCheck
                    nextCheck &+= 1
                    refused[key] = (check, used)
                    actions.rejectedCredentials.append((check, used))
                }
                awaitingVerdict[check, default: []].append(RefreshWaiter(item: item, classification: classification))
                awaitingVerdictCount += 1
            case .retryable, .throttled:
                if let message = unreachableMessage(completion) { stop(message, now: now, into: &actions) }
                retry(item, classification, completion: completion, duringOutage: duringOutage, now: now, unixTime: unixTime, into: &actions)
            }
        }
        advance(now: now, into: &actions)
        return actions
    }

    /// What an answer (or its absence) says about the lane as a whole: warm-up, the rate,
    /// timeouts.
    private mutating func noteAnswer(_ classification: ResponseClassification, completion: Completion, now: DeliveryInstant, into actions: inout Actions) {
        if classification.status > 0 {
            unansweredInARow = 0
            everAnswered = true
            switch classification.outcome {
            case .configurationError, .refreshCredentials: break
            default: warming = false
            }
            if case .throttled(let scope) = classification.outcome, scope != .device {
                slowDown(now: now, because: "\(Self.name(provider)) answered HTTP \(classification.status) \(classification.reason)", into: &actions)
            }
        } else if completion.result == .timedOut, everAnswered {
            slowDown(now: now, because: "a request got no answer within \(timeoutMilliseconds) ms", into: &actions)
        }
    }

    private mutating func slowDown(now: DeliveryInstant, because cause: String, into actions: inout Actions) {
        let before = limiter.currentRate
        limiter.recordThrottle(now: now)
        guard limiter.currentRate < before else { return }
        slowdowns &+= 1
        actions.notices.append("\(provider.rawValue): slowing down to \(Self.rate(limiter.currentRate))/s (from \(Self.rate(before))/s): \(cause)")
    }

    /// What a completion says about the provider as a whole, for the outage breaker: a 5xx, or a
    /// request lost, reset or not sent for want of a connection, is a failure; any other answer
    /// is healthy; a refusal, a cancel or an answer we rejected says nothing.
    static func health(_ completion: Completion, _ classification: ResponseClassification) -> OutageBreaker.Outcome {
        switch completion.end {
        case .answered:
            return (500...599).contains(classification.status) ? .failure : .healthy
        case .lost, .resetByPeer:
            return .failure
        case .notSent:
            switch completion.failure {
            case .resolve, .connect, .tls, .timeout, .connectionLost: return .failure
            case .certificate, .notHTTP2, .other: return .neutral
            case nil: return completion.result == .timedOut || completion.result == .noResponse ? .failure : .neutral
            }
        case .refused, .cancelled, .answerRejected, .answerBrokeConnection:
            return .neutral
        }
    }

    /// Tells the breaker how a request ended, and logs what that changed. When an outage ends,
    /// the lane resumes at half its rate from a bucket of one request (climbing back as after a
    /// slowdown), not with a burst of everything that waited.
    private mutating func noteBreaker(_ outcome: OutageBreaker.Outcome, probe: Bool, now: DeliveryInstant, into actions: inout Actions) {
        guard let transition = breaker.record(outcome, probe: probe, now: now) else { return }
        let name = provider.rawValue
        switch transition {
        case .opened(let failures, let outcomes, let pause):
            actions.notices.append("\(name): provider-wide outage: \(failures) of the last \(outcomes) requests failed (5xx or no connection) within \(breaker.settings.window); pausing the lane for \(pause), then probing one request at a time; failures meanwhile spend no retries")
        case .reopened(let pause):
            actions.notices.append("\(name): outage probe failed; pausing the lane for \(pause)")
        case .closed(let outage):
            actions.notices.append("\(name): outage over after \(outage): resuming at half rate")
            limiter.recordThrottle(now: now)
            limiter.pause(for: .zero, now: now)
        case .gaveUp(let outage):
            actions.notices.append("\(name): outage lasted \(outage), as long as a request may wait: no longer pausing the lane; requests spend their retries")
        }
    }

    /// A retryable or throttled answer, or none: resend later, or give up.
    private mutating func retry(
        _ item: LaneItem, _ classification: ResponseClassification, completion: Completion, duringOutage: Bool,
        now: DeliveryInstant, unixTime: Int64, into actions: inout Actions
    ) {
        var item = item
        // Lost or reset unanswered: it may have been processed. Refused or never written: it
        // was not (an earlier copy libcurl resent by itself already marked the item).
        let ambiguous: Bool
        let unprocessed: Bool
        switch completion.end {
        case .lost, .resetByPeer:
            (ambiguous, unprocessed) = (classification.status == 0, false)
        case .refused, .notSent:
            (ambiguous, unprocessed) = (false, true)
        case .answered, .answerRejected, .answerBrokeConnection, .cancelled:
            (ambiguous, unprocessed) = (false, false)
        }
        if let reason = refusalReason, reason != .runStopped {
            if ambiguous { item.possibleDuplicate = true }
            settle(item, reason.outcome(item, status: classification.status), now: now, into: &actions)
            return
        }
        if ambiguous, item.possibleDuplicate {
            // A copy may already have been delivered (our resend, or libcurl's own): a further
            // copy is never risked.
            let reason = RetryPolicy.GiveUpReason.ambiguousDeliveryAlreadyResent.rawValue
            settle(item, .failed(reason: reason, httpStatus: 0, attempts: item.wireSends, possibleDuplicate: true), now: now, into: &actions)
            return
        }
        var state = item.retry ?? RetryPolicy.State(firstSentAt: now)
        let failure = RetryPolicy.Failure(
            retryAfter: classification.retryAfter, mayHaveBeenDelivered: ambiguous, unprocessed: unprocessed, duringOutage: duringOutage
        )
        let decision = retryPolicy.decide(after: failure, state: &state, now: now, unixTime: unixTime, random: &random)
        item.retry = state
        switch decision {
        case .retry(let at, _):
            if ambiguous { item.possibleDuplicate = true }
            if runStopping {
                // Stopping: no retry; not delivered by this run (a resume sends it again).
                settle(item, StopReason.runStopped.outcome(item, status: classification.status), now: now, into: &actions)
                return
            }
            pauseIfAsked(classification, now: now, unixTime: unixTime, into: &actions)
            if !item.deferred {
                // The batch may go back to the pool: keep this request's own copy.
                item.deferred = true
                item.request = item.request.detached()
                actions.events.append(.deferred(tag: item.request.tag, line: item.request.entry.line))
            }
            retries.insert(item, due: at)
        case .giveUp(let reason):
            if ambiguous { item.possibleDuplicate = true }
            if reason == .deadlineExceeded, let delay = classification.retryAfter?.delay(unixTimeNow: unixTime), delay > .zero {
                actions.notices.append("\(provider.rawValue): HTTP \(classification.status) \(classification.reason) asked to wait \(delay) (Retry-After), past the request's retry budget: that request fails, the lane goes on")
            }
            settle(item, .failed(reason: reason.rawValue, httpStatus: classification.status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
        }
    }

    /// A Retry-After on a 503 or a provider-wide 429, and FCM's project quota, ask the whole
    /// provider to wait. Called only when the request is retried, so a wait longer than a
    /// request's own budget (which failed that request instead) never pauses the lane.
    private mutating func pauseIfAsked(_ classification: ResponseClassification, now: DeliveryInstant, unixTime: Int64, into actions: inout Actions) {
        var wait = Duration.zero
        var cause = ""
        if let delay = classification.retryAfter?.delay(unixTimeNow: unixTime), delay > .zero {
            wait = delay
            cause = "Retry-After"
        }
        switch classification.outcome {
        case .throttled(.device):
            // About one device token (APNs TooManyRequests): only that request waits.
            return
        case .throttled(.project) where wait < limiter.settings.projectQuotaPause:
            wait = limiter.settings.projectQuotaPause
            cause = "project quota exhausted"
        default:
            break
        }
        guard wait > .zero else { return }
        let wasPaused = pausedUntil.map { $0 > now } ?? false
        limiter.pause(for: wait, now: now)
        let end = now.advanced(by: Swift.min(wait, limiter.settings.maximumPause))
        if let current = pausedUntil, current >= end, wasPaused { return }
        pausedUntil = end
        // A new pause is said once, with its cause; one pushed later by the same cause is not.
        guard !wasPaused else { return }
        pauses &+= 1
        actions.notices.append("\(provider.rawValue): pausing for \(end.duration(since: now)): HTTP \(classification.status) \(classification.reason), \(cause)")
    }

    // MARK: - Starting transfers

    /// Whether requests may start now: sending, the provider not stopped, and no credential in
    /// question (while the authenticator judges a refused one, another send with it would be
    /// refused too).
    private var canStart: Bool {
        stoppedBecause == nil && !draining && (phase == .running || phase == .finishing) && awaitingVerdictCount == 0
    }

    /// Takes what the limits allow from the due retries and the queue and builds their
    /// transfers with `credential`.
    private mutating func dispatch(with credential: LaneCredential, now: DeliveryInstant, into actions: inout Actions) {
        var shared: TransportHeaderLines?
        if let line = credential.headerLine { shared = routes.authorizationLines(line) }
        var started = 0
        sending: while started < Self.maxBatch {
            if warming, limit.inFlight > 0 { break }
            if limit.isFull { break }
            let probe: Bool
            switch breaker.permission(now: now) {
            case .any: probe = false
            case .probe: probe = true
            case .none: break sending
            }
            let fromRetries: Bool
            if let due = retries.earliest, due <= now {
                fromRetries = true
            } else if !queue.isEmpty {
                fromRetries = false
            } else {
                break
            }
            switch limiter.acquire(now: now) {
            case .waitUntil(let instant):
                rateWaitUntil = instant
                return
            case .sendNow:
                break
            }
            guard var item = fromRetries ? retries.popDue(now: now) : queue.popFirst() else { break }
            let slot = nextSlot
            nextSlot &+= 1
            guard let authorization = shared ?? credential.requestLines(item.request) else {
                settle(item, .failed(reason: LaneFailureReason.noRoute, httpStatus: 0, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
                continue
            }
            switch routes.build(item.request, slot: slot, authorization: authorization, timeoutMilliseconds: timeoutMilliseconds) {
            case .unsendable(let reason):
                settle(item, .failed(reason: reason, httpStatus: 0, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate), now: now, into: &actions)
            case .request(let request):
                if var state = item.retry {
                    state.recordSend()
                    item.retry = state
                    resends &+= 1
                } else {
                    item.retry = RetryPolicy.State(firstSentAt: now)
                    item.firstSentAt = now
                }
                item.credential = credential
                _ = limit.tryAcquire()
                if probe {
                    breaker.probeStarted()
                    probeSlot = slot
                }
                inFlight[slot] = item
                actions.transfers.append(request)
                started += 1
            }
        }
        rateWaitUntil = nil
    }

    /// After every event: ask for a credential when something can start, say when to wake, and
    /// end when everything has settled.
    private mutating func advance(now: DeliveryInstant, into actions: inout Actions) {
        actions.hasRoom = held < capacity
        guard phase != .ended else {
            actions.hasRoom = true
            return
        }
        if canStart {
            var wake: DeliveryInstant?
            func wakeAt(_ instant: DeliveryInstant?) {
                guard let instant else { return }
                if wake == nil || instant < wake! { wake = instant }
            }
            // An open outage breaker holds every start until its pause ends (or its probe's answer).
            var breakerHolds = false
            if case .none(let until) = breaker.permission(now: now) {
                breakerHolds = true
                if !queue.isEmpty || !retries.isEmpty { wakeAt(until) }
            }
            let roomInFlight = !breakerHolds && !limit.isFull && !(warming && limit.inFlight > 0)
            let hasDue = !queue.isEmpty || (retries.earliest.map { $0 <= now } ?? false)
            switch credential {
            case .fetching:
                break
            case .retryAt(let at) where now < at:
                wakeAt(at)
            case .idle, .retryAt:
                if case .retryAt = credential { credential = .idle }
                if let until = rateWaitUntil, now < until, hasDue, roomInFlight {
                    wakeAt(until)
                } else if hasDue, roomInFlight {
                    rateWaitUntil = nil
                    credential = .fetching
                    actions.fetchCredential = true
                } else if roomInFlight {
                    wakeAt(retries.earliest)
                }
            }
            actions.wakeAt = wake
        }
        let settling = phase == .finishing || phase == .cancelled
        if settling, queue.isEmpty, retries.isEmpty, inFlight.isEmpty, awaitingVerdictCount == 0 {
            phase = .ended
            actions.ended = true
            actions.wakeAt = nil
            actions.hasRoom = true
            actions.fetchCredential = false
        }
    }

    // MARK: - Stopping

    /// Why a request is not sent (any more), in order of precedence.
    private enum StopReason {
        /// A configuration error stopped the provider: failed `provider_stopped`.
        case providerStopped
        /// The run is stopping (drain, cancel) or the lane ended: not sent by this run, unsent;
        /// a resume sends it again. Never a failure: the run's stop proves nothing about the
        /// device (docs/output.md, "Stopping a run").
        case runStopped

        func outcome(_ item: LaneItem, status: Int) -> DeliveryOutcome {
            switch self {
            case .providerStopped:
                .failed(reason: LaneFailureReason.providerStopped, httpStatus: status, attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate)
            case .runStopped:
                .unsent(attempts: item.wireSends, possibleDuplicate: item.possibleDuplicate)
            }
        }
    }

    /// Why a request given now, or due now, is settled without being sent; nil while sending.
    /// A stopped provider fails what it is given (a configuration error, whatever the run does);
    /// otherwise a run that stops (drained, cancelled, ended) leaves it unsent.
    private var refusalReason: StopReason? {
        if stoppedBecause != nil { return .providerStopped }
        return runStopping ? .runStopped : nil
    }

    /// A configuration error: everything queued or waiting for a retry fails now, everything
    /// given later at once; what is in flight gets its answer.
    private mutating func stop(_ message: String, now: DeliveryInstant, into actions: inout Actions) {
        guard stoppedBecause == nil, phase != .cancelled, phase != .ended else { return }
        stoppedBecause = message
        actions.notices.append("\(provider.rawValue): stopped: \(message)")
        settleWaiting(.providerStopped, now: now, into: &actions)
    }

    private mutating func settleWaiting(_ reason: StopReason, now: DeliveryInstant, into actions: inout Actions) {
        for item in queue.removeAll() + retries.removeAll() {
            settle(item, reason.outcome(item, status: item.lastStatus), now: now, into: &actions)
        }
    }

    /// At a cancel, requests waiting for a credential verdict do not wait for it: they settle
    /// as the lane refuses them now (unsent with their attempts; failed `provider_stopped` if
    /// the provider stopped). A verdict that comes later finds none.
    private mutating func settleAwaitingVerdict(now: DeliveryInstant, into actions: inout Actions) {
        guard awaitingVerdictCount > 0, let reason = refusalReason else { return }
        for check in awaitingVerdict.keys.sorted() {
            for waiter in awaitingVerdict[check] ?? [] {
                settle(waiter.item, reason.outcome(waiter.item, status: waiter.classification.status), now: now, into: &actions)
            }
        }
        awaitingVerdict = [:]
        awaitingVerdictCount = 0
    }

    // MARK: - Helpers

    private func settle(_ item: LaneItem, _ outcome: DeliveryOutcome, now: DeliveryInstant?, into actions: inout Actions) {
        let latency: Duration? = if let first = item.firstSentAt, let now { now.duration(since: first) } else { nil }
        actions.events.append(.settled(SettledRequest(request: item.request, provider: provider, outcome: outcome, latency: latency, wasDeferred: item.deferred)))
    }

    private func classify(_ completion: Completion, of request: OutgoingRequest) -> ResponseClassification {
        provider.profile.classify(ProviderAnswer(
            status: completion.result == .response ? completion.status : 0, body: completion.body,
            bodyTruncatedAt: completion.bodyTruncatedAt, messageID: completion.messageID, retryAfter: completion.retryAfter,
            sentTarget: request.bytes[request.entry.target]
        ))
    }

    /// Whether the provider cannot be reached at all, while nothing has answered yet: a
    /// certificate that does not verify stops the lane at once; a host that does not resolve,
    /// refuses connections or never answers stops it after `retry.maximumAttempts` such
    /// requests in a row (one at a time: the lane is warming), rather than trying every device
    /// of the audience five times.
    private mutating func unreachableMessage(_ completion: Completion) -> String? {
        guard !everAnswered else { return nil }
        if completion.result == .failed, completion.failure == .certificate {
            return "\(Self.name(provider)): the TLS certificate of \(endpointText) does not verify: \(completion.curlErrorDescription); check endpoint and ca_file; stopping this provider"
        }
        // A refused stream came from a server that is there and speaks HTTP/2.
        if completion.end == .refused { return nil }
        unansweredInARow += 1
        guard unansweredInARow >= retryPolicy.maximumAttempts else { return nil }
        let detail = completion.result == .timedOut ? "timed out" : completion.curlErrorDescription
        return "\(Self.name(provider)): cannot reach \(endpointText): \(unansweredInARow) requests in a row got no answer, the last: \(detail); check endpoint; stopping this provider"
    }

    private func configurationMessage(_ classification: ResponseClassification) -> String {
        let message = classification.message.map { ": " + $0 } ?? ""
        return "\(Self.name(provider)) answered HTTP \(classification.status) \(classification.reason)\(message) for \(identity): a configuration error; stopping this provider (\(provider.profile.credentialHint))"
    }

    static func name(_ provider: Provider) -> String { provider.profile.displayName }

    private static func rate(_ perSecond: Double) -> String {
        perSecond >= 10 ? String(Int(perSecond.rounded())) : String(Double(Int(perSecond * 100)) / 100)
    }
}

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
    /// Sends that reached the wire, libcurl's own re-sends included (the reported attempts).
    var wireSends = 0
    /// A copy may already have been delivered (an unanswered send that was resent, or a send
    /// libcurl repeated by itself).
    var possibleDuplicate = false

    init(_ request: OutgoingRequest) { self.request = request }
}
