import PushlineCore
@testable import PushlineDelivery
import Testing

/// The run's stop against the pure `LaneStateMachine`, in every order: drain, cancel (a second
/// signal), the drain deadline (time passes, then a cancel), time passing (retries fall due),
/// requests still being handed over (the host's inbox), transfers completing (answered, or
/// cancelled on the wire), a credential verdict, and finish. Each test builds a lane with
/// requests in every state a stop can find them in, then runs every distinct permutation of its
/// events from a copy of that lane, completes what is left, and checks each request's outcome
/// against its own history: a definite answer keeps its outcome; anything else ends unsent with
/// the attempts that reached the wire, marked `possibleDuplicate` exactly when one of them may
/// have been delivered unanswered. No stop ever fails a request.
@Suite("Lane state machine: every interleaving of a stop")
struct LaneStopInterleavingTests {
    enum Event: Hashable, Comparable, CustomStringConvertible {
        case drain
        /// A second signal: cancel now.
        case cancel
        /// The drain deadline: 30 s pass, then a cancel.
        case deadline
        /// Two hours pass (every retry's backoff ends) and the timer fires.
        case tick
        /// The requests still in the host's inbox reach the machine.
        case offerLate
        /// The oldest transfer in flight completes.
        case complete
        /// The authenticator's verdict on a refused credential: resend.
        case verdict
        /// The sink's last send returned: finish.
        case finish

        var description: String {
            switch self {
            case .drain: "drain"
            case .cancel: "cancel"
            case .deadline: "deadline"
            case .tick: "tick"
            case .offerLate: "offerLate"
            case .complete: "complete"
            case .verdict: "verdict"
            case .finish: "finish"
            }
        }
    }

    /// What one completion told the lane about one attempt.
    enum Attempt: Equatable {
        case sent, invalidToken, failedPermanently, retryable, ambiguous, refused
        /// Cancelled on the wire; `mayHaveBeenDelivered`: its bytes may have left.
        case cancelled(mayHaveBeenDelivered: Bool)

        var definite: Bool { self == .sent || self == .invalidToken || self == .failedPermanently }
        /// It reached the wire (the transport counts it).
        var onTheWire: Bool { self != .cancelled(mayHaveBeenDelivered: false) }
        var mayHaveBeenDelivered: Bool { self == .ambiguous || self == .cancelled(mayHaveBeenDelivered: true) }
    }

    /// A lane driven through one order of events, keeping each request's history.
    struct Run {
        var lane: LaneMachineDriver
        var history: [UInt64: [Attempt]] = [:]
        var late: ArraySlice<OutgoingRequest>
        var lateOffered = false
        var cancelIssued = false
        var finishIssued = false
        var stopStarted = false
        var sendsAtStop = 0
        var verdictGiven = false
        var log: [String] = []

        /// A first attempt's answer, by tag: the mix of answers a stop meets. Later attempts
        /// are answered 200.
        static func script(tag: UInt64, attempt: Int) -> Attempt {
            guard attempt == 0 else { return .sent }
            switch tag % 5 {
            case 0: return .sent
            case 1: return .retryable
            case 2: return .ambiguous
            case 3: return .invalidToken
            default: return .failedPermanently
            }
        }

        mutating func step(_ event: Event) {
            log.append(event.description)
            switch event {
            case .drain:
                noteStop()
                lane.apply(lane.machine.drain(now: lane.now))
            case .cancel:
                noteStop()
                cancelIssued = true
                lane.apply(lane.machine.cancel(now: lane.now))
            case .deadline:
                noteStop()
                cancelIssued = true
                lane.now = lane.now.advanced(by: .seconds(30))
                lane.unixTime += 30
                lane.apply(lane.machine.timerFired(now: lane.now))
                lane.apply(lane.machine.cancel(now: lane.now))
            case .tick:
                lane.advance(by: .seconds(7200))
            case .offerLate:
                lateOffered = true
                let taken = lane.offer(late)
                // A lane that takes requests has room for these; a stopping one settles them all.
                #expect(taken == late.count, "late offer taken \(taken) of \(late.count): \(log)")
            case .complete:
                completeOldest()
            case .verdict:
                giveVerdicts()
            case .finish:
                finishIssued = true
                lane.apply(lane.machine.finish(now: lane.now))
            }
        }

        mutating func noteStop() {
            guard !stopStarted else { return }
            stopStarted = true
            sendsAtStop = lane.sendsByTag.values.reduce(0, +)
        }

        mutating func giveVerdicts() {
            verdictGiven = true
            let asked = lane.verdictsAsked
            lane.verdictsAsked = []
            for (check, _) in asked { lane.apply(lane.machine.refreshDecided(check: check, .resend, now: lane.now)) }
        }

        /// Completes the oldest transfer: after a cancel, cancelled on the wire (its bytes may
        /// have left for even tags), except every third tag, whose answer came first.
        mutating func completeOldest() {
            guard let transfer = lane.inFlight.first, let tag = lane.slotTag[transfer.slot] else { return }
            let attempt: Attempt
            if cancelIssued, tag % 3 != 0 {
                attempt = .cancelled(mayHaveBeenDelivered: tag % 2 == 0)
            } else {
                attempt = Self.script(tag: tag, attempt: history[tag, default: []].filter(\.onTheWire).count)
            }
            history[tag, default: []].append(attempt)
            switch attempt {
            case .sent: lane.answer(tag: tag, status: 200)
            case .invalidToken: lane.answer(tag: tag, status: 400, body: #"{"reason":"BadDeviceToken"}"#)
            case .failedPermanently: lane.answer(tag: tag, status: 400, body: #"{"reason":"BadCollapseId"}"#)
            case .retryable: lane.answer(tag: tag, status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
            case .ambiguous: lane.answer(tag: tag, status: 0, result: .noResponse, mayHaveBeenDelivered: true)
            case .refused: lane.answer(tag: tag, status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
            case .cancelled(let delivered): lane.answer(tag: tag, status: 0, result: .cancelled, mayHaveBeenDelivered: delivered)
            }
        }

        /// Whatever the order was, the rest of the run: what is in flight completes (the
        /// transport completes everything after a cancel), a pending verdict comes, the sink
        /// hands over what it still held and calls finish if it did not cancel.
        mutating func completeTheRest() {
            var guardSteps = 0
            while guardSteps < 1000 {
                guardSteps += 1
                if !lane.inFlight.isEmpty {
                    completeOldest()
                } else if !lane.verdictsAsked.isEmpty {
                    giveVerdicts()
                } else if !lateOffered {
                    step(.offerLate)
                } else if !finishIssued, !cancelIssued {
                    step(.finish)
                } else if !lane.ended, lane.wakeAt != nil {
                    lane.wake()
                } else {
                    break
                }
            }
        }

        /// Every request's outcome against its history.
        func check(_ label: String) {
            let context = "\(label): \(log.joined(separator: " → "))"
            #expect(lane.ended, "the lane ended: \(context)")
            #expect(lane.machine.held == 0, "nothing held: \(context)")
            #expect(lane.allSettled, "every request settled (\(lane.settled.count) of \(lane.requests.count)): \(context)")
            // Nothing starts once the run stops.
            if stopStarted {
                #expect(lane.sendsByTag.values.reduce(0, +) == sendsAtStop, "nothing sent after the stop: \(context)")
            }
            for (tag, settled) in lane.settled {
                let attempts = history[tag, default: []]
                let outcome = settled.outcome
                let wire = attempts.filter(\.onTheWire).count
                let marked = attempts.contains { $0.mayHaveBeenDelivered }
                let expected: DeliveryOutcome
                switch attempts.last {
                case .sent?: expected = .sent(providerID: nil, attempts: wire, possibleDuplicate: marked)
                case .invalidToken?: expected = .invalidToken(reason: "BadDeviceToken", timestamp: nil)
                case .failedPermanently?: expected = .failed(reason: "BadCollapseId", httpStatus: 400, attempts: wire)
                default: expected = .unsent(attempts: wire, possibleDuplicate: marked)
                }
                #expect(outcome == expected, "tag \(tag) after \(attempts): \(outcome), expected \(expected): \(context)")
                if outcome.kind == .failed {
                    #expect(attempts.last?.definite == true && outcome.attempts > 0, "a failure only after a definite answer: \(context)")
                }
            }
            // The lane counts what reached the wire (an invalid token's outcome carries no
            // attempts, so the histories are the reference).
            #expect(history.values.joined().filter(\.onTheWire).count == lane.machine.wireSends, "attempts reconcile: \(context)")
        }
    }

    /// Every distinct order of `events` (a multiset), in lexicographic order.
    static func permutations(_ events: [Event]) -> [[Event]] {
        var current = events.sorted()
        var all = [current]
        // Narayana's next permutation: distinct orders only, duplicates handled.
        while true {
            guard var i = current.indices.dropLast().last(where: { current[$0] < current[$0 + 1] }) else { return all }
            let j = current.indices.last { current[$0] > current[i] }!
            current.swapAt(i, j)
            i += 1
            current[i...].reverse()
            all.append(current)
        }
    }

    /// The lanes a stop meets, and the requests still on their way to them.
    static func lane(_ setup: Setup) -> Run {
        // One connection of three streams, retries an hour away (so only a `tick` brings them
        // due), a budget that never gives up within these orders.
        let retry = RetryPolicy(maximumAttempts: 10, initialBackoff: .seconds(3600), maximumBackoff: .seconds(3600), maximumTotalTime: .seconds(36_000))
        var lane = LaneMachineDriver(count: 12, connections: 1, streams: 3, retry: retry)
        var history: [UInt64: [Attempt]] = [:]
        func answer(_ tag: UInt64, _ attempt: Attempt) {
            history[tag, default: []].append(attempt)
            switch attempt {
            case .sent: lane.answer(tag: tag, status: 200)
            case .retryable: lane.answer(tag: tag, status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
            case .ambiguous: lane.answer(tag: tag, status: 0, result: .noResponse, mayHaveBeenDelivered: true)
            case .refused: lane.answer(tag: tag, status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
            default: Issue.record("not a set-up answer")
            }
        }
        lane.offer(lane.requests[0..<8])
        // Warming: 0 alone; its 200 opens the window to 1, 2, 3.
        answer(0, .sent)
        switch setup {
        case .retries:
            // 1 waits for its retry after a 503; 2 after no answer (it may have been delivered);
            // 3, 4, 5 are on the wire; 6, 7 queued; 8…11 in the host's inbox.
            answer(1, .retryable)
            answer(2, .ambiguous)
        case .verdict:
            // 1 waits for the verdict on its refused credential (nothing starts meanwhile);
            // 2, 3 on the wire; 4…7 queued; 8…11 in the host's inbox.
            answer(1, .refused)
        }
        var run = Run(lane: lane, late: lane.requests[8...])
        run.history = history
        return run
    }

    enum Setup: CaseIterable, CustomStringConvertible {
        case retries, verdict
        var description: String { self == .retries ? "retries" : "verdict" }
    }

    /// The stops: a second signal, the drain deadline, both, a cancel with no drain before it
    /// (results that cannot be written), and a drain that ends with finish.
    static let stops: [(name: String, events: [Event])] = [
        ("second signal", [.drain, .cancel]),
        ("drain deadline", [.drain, .deadline]),
        ("signal and deadline", [.drain, .cancel, .deadline]),
        ("cancel without a drain", [.cancel]),
        ("drain, then finish", [.drain, .finish]),
    ]

    static func runAll(_ setup: Setup) -> Int {
        let base = lane(setup)
        let others: [Event] = setup == .retries ? [.tick, .offerLate, .complete, .complete] : [.verdict, .offerLate, .complete, .complete]
        var runs = 0
        for stop in stops {
            for order in permutations(stop.events + others) {
                // The sink finishes a lane only after its last send reached the machine.
                if let finish = order.firstIndex(of: .finish), let late = order.firstIndex(of: .offerLate), finish < late { continue }
                var run = base
                for event in order { run.step(event) }
                run.completeTheRest()
                run.check("\(setup), \(stop.name)")
                runs += 1
            }
        }
        return runs
    }

    @Test("requests queued, waiting for a retry, on the wire and still being handed over: every order of drain, cancel, deadline, time and completions")
    func retriesAndInFlight() {
        let runs = Self.runAll(.retries)
        #expect(runs > 3000)
    }

    @Test("a request waiting for a credential verdict: every order of drain, cancel, deadline, the verdict and completions")
    func awaitingVerdict() {
        let runs = Self.runAll(.verdict)
        #expect(runs > 3000)
    }

    @Test("the permutations are every distinct order")
    func permutationsAreDistinctAndComplete() {
        let orders = Self.permutations([.drain, .complete, .complete, .cancel])
        #expect(orders.count == 12)
        #expect(Set(orders).count == 12)
    }

    /// The bug of issue 34, by name: requests handed over after the cancel (a feeder's last
    /// chunk, still in the host's inbox when the cancel is applied) ended failed `cancelled`
    /// with 0 attempts, which a resume keeps: never notified.
    @Test("offered after a cancel, with or without a drain before: unsent, never attempted; after the lane ended too")
    func offeredAfterCancel() {
        for drainFirst in [true, false] {
            var lane = LaneMachineDriver(count: 6, connections: 1, streams: 2)
            lane.offer(lane.requests[0..<2])
            lane.answer(status: 200)
            if drainFirst { lane.apply(lane.machine.drain(now: lane.now)) }
            lane.apply(lane.machine.cancel(now: lane.now))
            lane.offer(lane.requests[2..<4])
            #expect((2..<4).allSatisfy { lane.outcome($0) == .unsent(attempts: 0, possibleDuplicate: false) })
            lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: true)
            #expect(lane.outcome(1) == .unsent(attempts: 1, possibleDuplicate: true))
            #expect(lane.ended)
            // The host still hands over what reached its inbox as the machine ended.
            lane.offer(lane.requests[4...])
            #expect((4..<6).allSatisfy { lane.outcome($0) == .unsent(attempts: 0, possibleDuplicate: false) })
            #expect(lane.allSettled)
            #expect(!lane.settled.values.contains { $0.outcome.kind == .failed })
        }
    }

    /// A stopped provider still fails what it is given (a configuration error, whatever the run
    /// does), but a transfer the run's cancel cut off is unsent: its answer is unknown.
    @Test("a stopped provider fails what it is given; its transfers cut off by the cancel are unsent")
    func providerStoppedThenCancelled() {
        var lane = LaneMachineDriver(count: 6, connections: 1, streams: 3)
        lane.offer(lane.requests[0..<4])
        lane.answer(status: 200)
        lane.answer(status: 403, body: #"{"reason":"InvalidProviderToken"}"#)
        #expect(lane.machine.stoppedBecause != nil)
        lane.apply(lane.machine.drain(now: lane.now))
        lane.apply(lane.machine.cancel(now: lane.now))
        lane.offer(lane.requests[4...])
        #expect((4..<6).allSatisfy { lane.outcome($0)?.reasonCode == "provider_stopped" })
        while !lane.inFlight.isEmpty { lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: true) }
        #expect(lane.outcome(1)?.reasonCode == "InvalidProviderToken")
        #expect([2, 3].allSatisfy { lane.outcome($0) == .unsent(attempts: 1, possibleDuplicate: true) })
        #expect(lane.ended && lane.allSettled)
    }
}
