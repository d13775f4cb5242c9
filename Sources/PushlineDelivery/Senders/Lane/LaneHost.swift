import PushlineCore
import Synchronization

/// One provider's lane on its transfer thread: the loop (`TransferLoop`) calls `turn` between
/// curl's turns with the completions it read; the host feeds them, and whatever producers left
/// in its inbox (requests, finish / drain / cancel, credentials, verdicts), to the lane's
/// `LaneStateMachine`, and returns the transfers to start and the machine's next deadline as
/// the poll's timeout. Nothing sleeps and nothing polls: the loop waits in `curl_multi_poll`
/// until curl, that deadline or a producer's `curl_multi_wakeup`.
///
/// The machine is touched on the transfer thread only; producers reach the host through the
/// inbox, one lock, and a wake-up. Events leave in one batch per turn.
final class LaneHost: TransferLoopHost, @unchecked Sendable {
    enum Control: Sendable {
        case finish, drain, cancel
    }

    /// What producers hand the transfer thread.
    private struct Inbox {
        var offered = FIFOQueue<OutgoingRequest>()
        var control: [Control] = []
        var credentials: [Result<LaneCredential, LaneAuthenticator.Failure>] = []
        var verdicts: [(check: UInt64, decision: LaneAuthenticator.RefreshDecision)] = []
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// Waiting for a drain to be applied (the waiting requests settled).
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
        /// Waiting for a whole turn that starts after they asked (`nextTurn`).
        var turnWaiters: [CheckedContinuation<Void, Never>] = []
        /// The loop has ended: nothing more is taken.
        var closed = false
        /// Producers inside `offer`: the lane does not end under them (a send in progress when
        /// the lane is cancelled still has every request settled).
        var activeOffers = 0
        /// What the machine measured, as of the last turn.
        var report: LaneReport
        /// Set before the first request is offered (`attach(wireLog:)`).
        var wireLog: (any WireLog)?
    }

    // Confined to the transfer thread.
    private var machine: LaneStateMachine
    private var events: [SendEvent] = []
    /// When the oldest event in `events` was held back (monotonic nanoseconds; nil: none held).
    private var eventsHeldSince: UInt64?
    private var turnResult = TransferLoopTurn()
    private var wakeAt: DeliveryInstant?
    private var machineEnded = false
    /// `finish()` was called; applied once the inbox is empty.
    private var finishRequested = false
    /// Where the turn's starts and undelivered answers are written before its transfers start.
    private var wireLog: (any WireLog)?
    private var wireRecords: [WireRecord] = []

    private let inbox: Mutex<Inbox>
    /// The machine's provider, readable off the transfer thread.
    private let provider: Provider
    /// Requests the inbox holds at most before `offer` waits (the machine holds its own cap).
    private let inboxCapacity: Int
    /// A producer waiting for room resumes once the inbox is down to this (half the capacity):
    /// one wake-up per half an inbox, not one per turn (each is a futex and a thread switch
    /// on the transfer thread's critical path).
    private let inboxLowWater: Int
    private let authenticator: LaneAuthenticator
    private let clock: any DeliveryClock
    /// Times the events' hold: real time in a run, whatever the lane's clock (the hold bounds
    /// how late the reader hears); a test's own clock in `LaneEventHoldTests`.
    private let holdClock: any DeliveryClock
    private let output: LaneEvents
    private let logger: (@Sendable (String) -> Void)?
    /// Ends the lane's event stream after its last thread.
    private let ended: LaneEventsEnd
    /// Where a token or a verdict that must be waited for is asked (OAuth lanes; nil: every
    /// credential and verdict of this authenticator comes at once).
    private let credentialRequests: LaneCredentialRequests?
    /// The transport whose thread runs this host (weak: the lane owns the transport); set once
    /// it exists. It wakes the thread and counts connections.
    ///
    /// A reference, never a closure: reading a closure out of a `Mutex` (`withLock { $0 }`)
    /// writes it back wrapped in one more reabstraction thunk each time, so a closure read on
    /// every wake grew by a thunk per call, and a long run crashed releasing (or calling) a
    /// chain millions deep. `LaneHostTests` wakes a host millions of times.
    private let transport = Mutex(WeakTransport())

    private struct WeakTransport {
        weak var transport: HTTP2Transport?
    }

    init(
        machine: LaneStateMachine, authenticator: LaneAuthenticator, clock: any DeliveryClock,
        output: LaneEvents, logger: (@Sendable (String) -> Void)?, ended: LaneEventsEnd,
        credentialRequests: LaneCredentialRequests? = nil, holdClock: any DeliveryClock = SystemDeliveryClock()
    ) {
        self.holdClock = holdClock
        self.credentialRequests = credentialRequests
        self.machine = machine
        provider = machine.provider
        inboxCapacity = machine.capacity
        inboxLowWater = machine.capacity / 2
        eventsPerYield = Swift.max(1, Swift.min(128, machine.inFlightCapacity))
        inbox = Mutex(Inbox(report: LaneReport(provider: machine.provider)))
        self.authenticator = authenticator
        self.clock = clock
        self.output = output
        self.logger = logger
        self.ended = ended
    }

    /// Connects the host to its transport (weakly: the lane owns the transport).
    func attach(_ transport: HTTP2Transport) {
        self.transport.withLock { $0.transport = transport }
    }

    /// Wakes the transfer thread (nothing before `attach` or after the transport is gone).
    func wake() {
        transport.withLock { $0.transport }?.wakeLoop()
    }

    // MARK: - Producers

    /// Hands `requests` over in order, waiting while the inbox is full.
    func offer(_ requests: [OutgoingRequest]) async {
        guard !requests.isEmpty else { return }
        let open = inbox.withLock { inbox -> Bool in
            if !inbox.closed { inbox.activeOffers += 1 }
            return !inbox.closed
        }
        guard open else {
            // This thread's loop has ended (a cancel raced this send): nothing was attempted, so
            // the requests settle unsent, through the lane's stream while it is open. Once the
            // stream has finished (a send after `cancel()` returned: a caller's error) nothing
            // is left to settle them.
            let provider = self.provider
            _ = ended.yieldLate(requests.map {
                .settled(SettledRequest(request: $0, provider: provider, outcome: .unsent(attempts: 0, possibleDuplicate: false), latency: nil, wasDeferred: false))
            })
            return
        }
        var rest = requests[...]
        while !rest.isEmpty {
            let taken = inbox.withLock { inbox -> Int in
                let room = Swift.max(0, inboxCapacity - inbox.offered.count)
                let taken = Swift.min(room, rest.count)
                inbox.offered.append(contentsOf: rest.prefix(taken))
                return taken
            }
            rest = rest.dropFirst(taken)
            if taken > 0 { wake() }
            guard !rest.isEmpty else { break }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = inbox.withLock { inbox -> Bool in
                    if inbox.offered.count <= inboxLowWater { return true }
                    inbox.roomWaiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        inbox.withLock { $0.activeOffers -= 1 }
        // The loop may be waiting for this send to end before it ends.
        wake()
    }

    /// Finish or cancel (waits for the lane's end), or drain (waits until the waiting requests
    /// have settled).
    func control(_ control: Control) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // The control and its waiter go in together: the turn that applies one sees the other.
            let closed = inbox.withLock { inbox -> Bool in
                if inbox.closed { return true }
                inbox.control.append(control)
                if control == .drain {
                    inbox.drainWaiters.append(continuation)
                } else {
                    inbox.endWaiters.append(continuation)
                }
                return false
            }
            if closed {
                continuation.resume()
            } else {
                wake()
            }
        }
    }

    /// Cancel without waiting for the end (a lane whose construction failed after this host
    /// started: nobody will read its events).
    func requestCancel() {
        let closed = inbox.withLock { inbox -> Bool in
            if !inbox.closed { inbox.control.append(.cancel) }
            return inbox.closed
        }
        if !closed { wake() }
    }

    /// Returns after the thread has run a whole turn that began after the call (at once once its
    /// loop ended): what the machine decides at its clock's current reading is then in `report`.
    /// Lets a test show that nothing happened by a moment of the lane's clock without waiting
    /// for time to pass.
    func nextTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = inbox.withLock { inbox -> Bool in
                if inbox.closed { return true }
                inbox.turnWaiters.append(continuation)
                return false
            }
            if closed { continuation.resume() } else { wake() }
        }
    }

    func report() -> LaneReport {
        var report = inbox.withLock { $0.report }
        report.connectionsOpened = transport.withLock { $0.transport }?.counters.connectionsOpened ?? 0
        return report
    }

    // MARK: - The transfer thread

    func turn(_ completions: [TransportResponse], transportCancelled: Bool) -> TransferLoopTurn {
        turnResult = TransferLoopTurn()
        let now = clock.now()
        var controls: [Control] = []
        var credentials: [Result<LaneCredential, LaneAuthenticator.Failure>] = []
        var verdicts: [(check: UInt64, decision: LaneAuthenticator.RefreshDecision)] = []
        var turnWaiters: [CheckedContinuation<Void, Never>] = []
        inbox.withLock { inbox in
            swap(&turnWaiters, &inbox.turnWaiters)
            swap(&controls, &inbox.control)
            swap(&credentials, &inbox.credentials)
            swap(&verdicts, &inbox.verdicts)
            if wireLog == nil { wireLog = inbox.wireLog }
        }
        if transportCancelled { controls.append(.cancel) }
        // Drain and cancel first: what is still in the inbox then settles with the rest.
        for control in controls where control != .finish { apply(control, now: now) }
        takeOffered(now: now)
        for credential in credentials { credentialArrived(credential, now: now) }
        for (check, decision) in verdicts { perform(machine.refreshDecided(check: check, decision, now: now), now: now) }
        if !completions.isEmpty {
            let mapped = completions.map(LaneStateMachine.Completion.init)
            if wireLog != nil { noteUndelivered(mapped) }
            perform(machine.completed(mapped, now: now, unixTime: clock.unixTime()), now: now)
        }
        if controls.contains(.finish) { apply(.finish, now: now) }
        // Finish only once every request handed over is in the machine: until then the inbox
        // is part of what the lane still has to send.
        if finishRequested, inboxIsEmpty { perform(machine.finish(now: now), now: now) }
        // Whatever came due since the last turn (a retry, the rate, a pause's end).
        perform(machine.timerFired(now: now), now: now)

        let realNow = UInt64(clamping: holdClock.now().nanoseconds)
        yieldEvents(force: !controls.isEmpty || !turnWaiters.isEmpty, realNow: realNow)
        let snapshot = currentReport()
        var drained: [CheckedContinuation<Void, Never>] = []
        let drainApplied = controls.contains(.drain)
        let inboxEmpty = inbox.withLock { inbox in
            inbox.report = snapshot
            if drainApplied { swap(&drained, &inbox.drainWaiters) }
            return inbox.offered.isEmpty && inbox.activeOffers == 0
        }
        // Two loops, not `drained + turnWaiters`: no array built on every turn.
        for waiter in drained { waiter.resume() }
        for waiter in turnWaiters { waiter.resume() }
        // Requests handed over after the end still get a turn (they settle unsent).
        turnResult.ended = machineEnded && inboxEmpty
        turnResult.timeoutMilliseconds = timeout(now: now, realNow: realNow)
        if let wireLog { writeWireRecords(to: wireLog) }
        // Handed over, not shared: the loop moves the requests out of its own array.
        var result = TransferLoopTurn()
        swap(&result, &turnResult)
        return result
    }

    /// Events held back at most before they go to the reader: 128, or fewer when fewer
    /// requests can be in flight. Held settlements are of answered devices whose result lines
    /// are not written yet, so a kill marks them possible duplicates; with this cap, what a kill
    /// can find answered-but-unwritten plus in flight stays within twice the streams
    /// (docs/resume.md, "The bound").
    private let eventsPerYield: Int
    /// How long events may wait for more to join them while transfers are in flight.
    static let eventsHoldNanoseconds: UInt64 = 2_000_000

    /// Hands the turn's events to the reader: each hand-over wakes a task on another thread
    /// (a futex and a switch that compete with this loop), so while transfers are in flight a
    /// few turns' events go together, up to `eventsPerYield` or `eventsHoldNanoseconds`. The
    /// sink's batch window holds far more requests than that, so no producer waits on them.
    private func yieldEvents(force: Bool, realNow: UInt64) {
        guard !events.isEmpty else { return }
        if !force, !machineEnded, machine.inFlightCount > 0, events.count < eventsPerYield {
            guard let since = eventsHeldSince else {
                eventsHeldSince = realNow
                return
            }
            if realNow &- since < Self.eventsHoldNanoseconds { return }
        }
        output.yield(events)
        events.removeAll(keepingCapacity: true)
        eventsHeldSince = nil
    }

    /// Answers that prove their device was not delivered: a status other than 2xx (APNs, FCM,
    /// Web Push, ADM and webhooks all accept with 2xx only), or a stream the server refused
    /// unprocessed. Read before the machine forgets their slots.
    private func noteUndelivered(_ completions: [LaneStateMachine.Completion]) {
        for completion in completions where completion.provenUnprocessed || (completion.status > 0 && !(200..<300).contains(completion.status)) {
            guard let entry = machine.inFlightEntry(slot: completion.slot) else { continue }
            wireRecords.append(WireRecord(line: entry.line, device: entry.device, kind: .notDelivered))
        }
    }

    /// The turn's records, in one write, before the loop starts the turn's transfers: a device
    /// can be on the wire only once its start reached the kernel.
    private func writeWireRecords(to wireLog: any WireLog) {
        for index in turnResult.start.indices {
            guard let entry = machine.inFlightEntry(slot: turnResult.start[index].slot) else { continue }
            wireRecords.append(WireRecord(line: entry.line, device: entry.device, kind: .started))
        }
        guard !wireRecords.isEmpty else { return }
        wireRecords.withUnsafeBufferPointer { wireLog.record($0) }
        wireRecords.removeAll(keepingCapacity: true)
    }

    /// Sets the wire log, before the first request is offered.
    func attach(wireLog: any WireLog) {
        inbox.withLock { $0.wireLog = wireLog }
    }

    /// Moves requests from the inbox into the machine: what it has room for, or all of them once
    /// it settles offers at once (stopped, draining, cancelled); wakes producers waiting for room.
    private func takeOffered(now: DeliveryInstant) {
        let room = machine.settlesOffersAtOnce ? Int.max : Swift.max(0, machine.capacity - machine.held)
        var taken: [OutgoingRequest] = []
        var resumed: [CheckedContinuation<Void, Never>] = []
        inbox.withLock { inbox in
            while taken.count < room, let request = inbox.offered.popFirst() { taken.append(request) }
            if inbox.offered.count <= inboxLowWater, !inbox.roomWaiters.isEmpty { swap(&resumed, &inbox.roomWaiters) }
        }
        for waiter in resumed { waiter.resume() }
        guard !taken.isEmpty else { return }
        let (accepted, actions) = machine.offer(taken[...], now: now)
        assert(accepted == taken.count, "the machine had room for what the host took")
        perform(actions, now: now)
    }

    private var inboxIsEmpty: Bool { inbox.withLock { $0.offered.isEmpty } }

    func loopEnded() {
        let (ends, rooms) = inbox.withLock { inbox in
            inbox.closed = true
            let ends = inbox.endWaiters + inbox.drainWaiters + inbox.turnWaiters
            let rooms = inbox.roomWaiters
            inbox.endWaiters = []
            inbox.drainWaiters = []
            inbox.turnWaiters = []
            inbox.roomWaiters = []
            return (ends, rooms)
        }
        ended.hostEnded()
        for waiter in ends + rooms { waiter.resume() }
    }

    private func apply(_ control: Control, now: DeliveryInstant) {
        switch control {
        case .finish:
            finishRequested = true
        case .drain:
            perform(machine.drain(now: now), now: now)
        case .cancel:
            perform(machine.cancel(now: now), now: now)
            turnResult.cancelInFlight = true
        }
    }

    private func credentialArrived(_ result: Result<LaneCredential, LaneAuthenticator.Failure>, now: DeliveryInstant) {
        switch result {
        case .success(let credential): perform(machine.credentialReady(credential, now: now), now: now)
        case .failure(let failure): perform(machine.credentialFailed(failure, now: now, unixTime: clock.unixTime()), now: now)
        }
    }

    private func perform(_ actions: consuming LaneStateMachine.Actions, now: DeliveryInstant) {
        // Moved, not copied, when there is nothing to add to: a copy retains every reference
        // of every request and event.
        if events.isEmpty { swap(&events, &actions.events) } else { events.append(contentsOf: actions.events) }
        for notice in actions.notices { logger?(notice) }
        if turnResult.start.isEmpty { swap(&turnResult.start, &actions.transfers) } else { turnResult.start.append(contentsOf: actions.transfers) }
        wakeAt = actions.wakeAt
        if actions.ended { machineEnded = true }
        for (check, credential) in actions.rejectedCredentials { askAbout(credential, check: check) }
        if actions.fetchCredential { fetchCredential(now: now) }
    }

    private func fetchCredential(now: DeliveryInstant) {
        if let immediate = authenticator.immediateCredential() {
            credentialArrived(immediate, now: now)
            return
        }
        guard let credentialRequests else {
            credentialArrived(.failure(.fatal("internal error: a lane whose credential is fetched was built without anyone to fetch it")), now: now)
            return
        }
        credentialRequests.ask(.token { [self] result in
            inbox.withLock { $0.credentials.append(result) }
            wake()
        })
    }

    /// The verdict comes through the inbox either way, so the machine sees it at its next turn
    /// as it would an answer from the token endpoint.
    private func askAbout(_ credential: LaneCredential, check: UInt64) {
        if let decision = authenticator.immediateVerdict(on: credential) {
            inbox.withLock { $0.verdicts.append((check, decision)) }
            wake()
            return
        }
        guard let credentialRequests else {
            inbox.withLock { $0.verdicts.append((check, .stop("internal error: a lane whose credential is judged remotely was built without anyone to ask"))) }
            wake()
            return
        }
        credentialRequests.ask(.verdict(on: credential) { [self] decision in
            inbox.withLock { $0.verdicts.append((check, decision)) }
            wake()
        })
    }

    /// Until the machine's next deadline (`now`, the lane's clock) or the held events'
    /// (`realNow`, the hold's clock: they go out by it even if the network stays quiet),
    /// whichever comes first;
    /// without either, until a wake-up (every producer, control, credential and verdict wakes
    /// the loop), the network or the engine's own timers: nothing polls.
    private func timeout(now: DeliveryInstant, realNow: UInt64) -> Int32 {
        var nanoseconds: Int64?
        if let wakeAt, !machineEnded { nanoseconds = wakeAt.nanoseconds &- now.nanoseconds }
        if let eventsHeldSince {
            let held = Swift.min(Self.eventsHoldNanoseconds, realNow &- eventsHeldSince)
            let left = Int64(Self.eventsHoldNanoseconds &- held)
            nanoseconds = Swift.min(nanoseconds ?? left, left)
        }
        guard let nanoseconds else { return TransferLoopTurn.untilWoken }
        if nanoseconds <= 0 { return 0 }
        // Rounded up: waking a little late starts the request; waking early only turns again.
        let milliseconds = (nanoseconds + 999_999) / 1_000_000
        return Int32(Swift.min(milliseconds, Int64(Int32.max)))
    }

    private func currentReport() -> LaneReport {
        var report = LaneReport(provider: machine.provider)
        report.stoppedBecause = machine.stoppedBecause
        report.attempts = machine.wireSends
        report.retries = machine.resends
        report.finalRatePerSecond = machine.currentRate
        report.slowdowns = machine.slowdowns
        report.pauses = machine.pauses
        report.inFlight = machine.inFlightCount
        return report
    }
}

extension LaneStateMachine.Completion {
    init(_ response: TransportResponse) {
        self.init(
            slot: response.slot, result: response.result, status: response.status, body: response.body,
            bodyTruncatedAt: response.bodyTruncated ? response.body.count : nil,
            messageID: response.headers.bytes(named: "apns-id") ?? response.headers.bytes(named: "x-amzn-requestid"),
            retryAfter: response.headers.bytes(named: "retry-after"),
            failure: response.failure?.kind, curlErrorDescription: response.problemDescription,
            mayHaveBeenDelivered: response.mayHaveBeenDelivered, wireSends: response.wireSends,
            provenUnprocessed: response.provenUnprocessed, end: response.end
        )
    }
}
