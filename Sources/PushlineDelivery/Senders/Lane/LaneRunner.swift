import PushlineCore

/// Carries out a `LaneStateMachine`'s actions: hands transfers to the transport, fetches and
/// checks credentials, emits events, keeps one timer for the machine's next deadline, and
/// feeds every outcome back as an event. It decides nothing itself.
///
/// Nothing polls: the timer sleeps until the one instant the machine asked for (a later event
/// replaces it), and everything else is an event.
actor LaneRunner {
    private var machine: LaneStateMachine
    private let transport: HTTP2Transport
    private let authenticator: LaneAuthenticator
    private let clock: any DeliveryClock
    private let output: AsyncStream<[SendEvent]>.Continuation
    private let logger: (@Sendable (String) -> Void)?
    /// Shuts down what the lane owns besides the transport (the OAuth exchange).
    private let onEnd: @Sendable () async -> Void

    private var roomWaiters: [CheckedContinuation<Void, Never>] = []
    private var endWaiters: [CheckedContinuation<Void, Never>] = []
    private var machineEnded = false
    private var closed = false
    private var timer: (deadline: DeliveryInstant, generation: UInt64, task: Task<Void, Never>)?
    private var timerGeneration: UInt64 = 0

    init(
        machine: LaneStateMachine, transport: HTTP2Transport, authenticator: LaneAuthenticator, clock: any DeliveryClock,
        output: AsyncStream<[SendEvent]>.Continuation, logger: (@Sendable (String) -> Void)?, onEnd: @escaping @Sendable () async -> Void
    ) {
        self.machine = machine
        self.transport = transport
        self.authenticator = authenticator
        self.clock = clock
        self.output = output
        self.logger = logger
        self.onEnd = onEnd
    }

    // MARK: - Events in

    /// Offers `requests` in order, waiting while the lane holds `capacity` requests.
    func offer(_ requests: [OutgoingRequest]) async {
        var rest = requests[...]
        while !rest.isEmpty {
            let (taken, actions) = machine.offer(rest, now: clock.now())
            rest = rest.dropFirst(taken)
            perform(actions)
            if !rest.isEmpty, taken == 0 {
                await withCheckedContinuation { roomWaiters.append($0) }
            }
        }
    }

    func completed(_ responses: [TransportResponse]) {
        let completions = responses.map(LaneStateMachine.Completion.init)
        perform(machine.completed(completions, now: clock.now(), unixTime: clock.unixTime()))
    }

    func finish() async {
        perform(machine.finish(now: clock.now()))
        await waitForEnd()
    }

    func drain() async {
        perform(machine.drain(now: clock.now()))
        await waitForEnd()
    }

    func cancel() async {
        perform(machine.cancel(now: clock.now()))
        // What is in flight completes as cancelled, which ends the machine.
        if !machineEnded { await transport.shutdown(.cancelInFlight) }
        await waitForEnd()
    }

    /// Looks at the clock now (a test's clock that jumped; the timer covers the system clock).
    func clockMoved() {
        perform(machine.timerFired(now: clock.now()))
    }

    /// The transport's completions ended (it shut down): nothing more will complete.
    func transportEnded() {
        if !machineEnded {
            // Only after a cancel that raced the last completions; the machine settles the rest.
            perform(machine.cancel(now: clock.now()))
        }
        close()
    }

    func report() -> LaneReport {
        var report = LaneReport(provider: machine.provider)
        report.stoppedBecause = machine.stoppedBecause
        report.attempts = machine.wireSends
        report.retries = machine.resends
        report.finalRatePerSecond = machine.currentRate
        report.slowdowns = machine.slowdowns
        report.pauses = machine.pauses
        report.connectionsOpened = transport.counters.connectionsOpened
        return report
    }

    // MARK: - Actions out

    private func perform(_ actions: LaneStateMachine.Actions) {
        if !actions.events.isEmpty { output.yield(actions.events) }
        for notice in actions.notices { logger?(notice) }
        if !actions.transfers.isEmpty { submit(actions.transfers) }
        if actions.fetchCredential { fetchCredential() }
        for (check, credential) in actions.rejectedCredentials { askAbout(credential, check: check) }
        if actions.hasRoom, !roomWaiters.isEmpty {
            let waiting = roomWaiters
            roomWaiters.removeAll()
            for waiter in waiting { waiter.resume() }
        }
        if let wakeAt = actions.wakeAt { schedule(wakeAt) }
        if actions.ended, !machineEnded {
            machineEnded = true
            timer?.task.cancel()
            timer = nil
            let transport = self.transport
            let onEnd = self.onEnd
            // The transport's completions end once it has shut down; `transportEnded` closes.
            Task {
                await transport.shutdown(.finishInFlight)
                await onEnd()
            }
        }
    }

    private func submit(_ transfers: [TransportRequest]) {
        let taken: Int
        do {
            taken = try transport.submitNow(transfers[...])
        } catch {
            // A request the transport refuses (the lane's own checks exclude them): none was taken.
            taken = 0
        }
        if taken < transfers.count {
            perform(machine.notTaken(transfers[taken...].lazy.map(\.slot), now: clock.now()))
        }
    }

    private func fetchCredential() {
        if let immediate = authenticator.immediateCredential() {
            credentialResult(immediate)
            return
        }
        let authenticator = self.authenticator
        Task {
            let result: Result<LaneCredential, LaneAuthenticator.Failure>
            do throws(LaneAuthenticator.Failure) {
                result = .success(try await authenticator.credential())
            } catch {
                result = .failure(error)
            }
            self.credentialResult(result)
        }
    }

    private func credentialResult(_ result: Result<LaneCredential, LaneAuthenticator.Failure>) {
        switch result {
        case .success(let credential): perform(machine.credentialReady(credential, now: clock.now()))
        case .failure(let failure): perform(machine.credentialFailed(failure, now: clock.now(), unixTime: clock.unixTime()))
        }
    }

    private func askAbout(_ credential: LaneCredential, check: UInt64) {
        let authenticator = self.authenticator
        Task {
            let decision = await authenticator.rejected(credential)
            self.refreshDecided(check: check, decision)
        }
    }

    private func refreshDecided(check: UInt64, _ decision: LaneAuthenticator.RefreshDecision) {
        perform(machine.refreshDecided(check: check, decision, now: clock.now()))
    }

    /// One timer, for the earliest instant asked for; a later instant waits for it.
    private func schedule(_ deadline: DeliveryInstant) {
        if let timer, timer.deadline <= deadline { return }
        timer?.task.cancel()
        timerGeneration &+= 1
        let generation = timerGeneration
        let delay = deadline.duration(since: clock.now())
        let task = Task { [weak self] in
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return }
            }
            await self?.timerFired(generation)
        }
        timer = (deadline, generation, task)
    }

    private func timerFired(_ generation: UInt64) {
        guard let timer, timer.generation == generation else { return }
        self.timer = nil
        perform(machine.timerFired(now: clock.now()))
    }

    // MARK: - Ending

    private func close() {
        guard !closed else { return }
        closed = true
        output.finish()
        let waiting = endWaiters
        endWaiters.removeAll()
        for waiter in waiting { waiter.resume() }
        let rooms = roomWaiters
        roomWaiters.removeAll()
        for waiter in rooms { waiter.resume() }
    }

    private func waitForEnd() async {
        guard !closed else { return }
        await withCheckedContinuation { endWaiters.append($0) }
    }
}

extension LaneStateMachine.Completion {
    init(_ response: TransportResponse) {
        self.init(
            slot: response.slot, result: response.result, status: response.status, body: response.body,
            apnsID: response.headers["apns-id"].map { Array($0.utf8) },
            retryAfter: response.headers["retry-after"].map { Array($0.utf8) },
            curlCode: response.curlCode, curlErrorDescription: response.curlErrorDescription,
            mayHaveBeenDelivered: response.mayHaveBeenDelivered || (response.result == .response && response.status > 0)
        )
    }
}
