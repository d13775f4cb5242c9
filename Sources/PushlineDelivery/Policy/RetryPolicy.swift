/// When to send a failed request again, or to give it up: exponential backoff with full jitter
/// (delay drawn uniformly from 0…min(maximumBackoff, initialBackoff × 2^(retry−1))), bounded
/// attempts and total time per request, Retry-After honoured (a longer Retry-After wins over
/// the drawn delay), and at most one resend of a request that may already have been delivered.
///
/// Not every failed send counts against `maximumAttempts`: a send the server proved it did not
/// process (refused) or that never reached the wire is counted against `maximumRefusals`
/// instead, and a failure the lane's outage breaker takes on (`Failure.duringOutage`) is not
/// counted at all. `maximumTotalTime` bounds them all.
public struct RetryPolicy: Sendable, Equatable {
    /// Sends per request, the first included, that count: neither refused unprocessed nor
    /// failed during an outage.
    public var maximumAttempts: Int
    /// Tries per request that were refused unprocessed or never written (REFUSED_STREAM, above
    /// a GOAWAY's last-stream-id, no connection): past this many the request gives up
    /// (`refusals_exhausted`). A refusal costs no attempt, so a GOAWAY that refuses a window of
    /// streams does not fail them in seconds; this cap and the total time keep a server that
    /// refuses everything from holding a request forever.
    public var maximumRefusals: Int
    public var initialBackoff: Duration
    public var maximumBackoff: Duration
    /// From the first send to the latest instant a retry may be scheduled at.
    public var maximumTotalTime: Duration

    public init(
        maximumAttempts: Int = 5, initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(60), maximumTotalTime: Duration = .seconds(600), maximumRefusals: Int = 20
    ) {
        self.maximumAttempts = Swift.min(Swift.max(maximumAttempts, 1), 100)
        self.maximumRefusals = Swift.min(Swift.max(maximumRefusals, 0), 1000)
        self.initialBackoff = Swift.max(initialBackoff, .zero)
        self.maximumBackoff = Swift.max(maximumBackoff, .zero)
        self.maximumTotalTime = Swift.max(maximumTotalTime, .zero)
    }

    /// Why a request was not retried (for `failed.ndjson`).
    public enum GiveUpReason: String, Sendable, Equatable, CustomStringConvertible {
        /// `maximumAttempts` sends made.
        case attemptsExhausted = "retries_exhausted"
        /// The next try (its Retry-After, or the backoff) would start past `maximumTotalTime`.
        case deadlineExceeded = "retry_deadline_exceeded"
        /// It failed without a response after it may have reached the provider, and it had
        /// already been resent once for that: a third copy is never risked.
        case ambiguousDeliveryAlreadyResent = "no_response_after_resend"
        /// More than `maximumRefusals` of its tries were refused unprocessed or never written.
        case refusalsExhausted = "refusals_exhausted"

        public var description: String { rawValue }
    }

    public enum Decision: Sendable, Equatable {
        /// Send again not before `at`. `possibleDuplicate`: the request may already have been
        /// delivered once; a later success is reported with `possible_duplicate`.
        case retry(at: DeliveryInstant, possibleDuplicate: Bool)
        case giveUp(GiveUpReason)
    }

    /// What the sender knows about one failed send of a request.
    public struct Failure: Sendable, Equatable {
        public var retryAfter: RetryAfter?
        /// No status came back, and the request body may have been written (the transport
        /// says so): the provider may have delivered it.
        public var mayHaveBeenDelivered: Bool
        /// The server provably did not process it (refused), or it never reached the wire: a
        /// resend is safe and costs no attempt (see `maximumRefusals`).
        public var unprocessed: Bool
        /// The lane's outage breaker holds the lane: the provider as a whole is failing, so this
        /// failure costs the request no attempt (its time budget still runs).
        public var duringOutage: Bool

        public init(retryAfter: RetryAfter? = nil, mayHaveBeenDelivered: Bool = false, unprocessed: Bool = false, duringOutage: Bool = false) {
            self.retryAfter = retryAfter
            self.mayHaveBeenDelivered = mayHaveBeenDelivered && !unprocessed
            self.unprocessed = unprocessed
            self.duringOutage = duringOutage
        }

        /// From a classified answer with no status: pass the transport's "may have been written".
        public init(_ response: ResponseClassification, bodyMayHaveBeenWritten: Bool) {
            self.init(retryAfter: response.retryAfter, mayHaveBeenDelivered: response.status == 0 && bodyMayHaveBeenWritten)
        }
    }

    /// The retry history of one request, kept beside it by the sender.
    public struct State: Sendable, Equatable {
        public let firstSentAt: DeliveryInstant
        /// Sends made so far.
        public private(set) var attempts: Int
        /// Sends that do not count against `maximumAttempts`: refused or never written, or
        /// failed while the outage breaker held the lane.
        public private(set) var uncounted = 0
        /// Sends refused unprocessed or never written (against `maximumRefusals`).
        public private(set) var refusals = 0
        /// Set once a request that may have been delivered is resent; stays set.
        public private(set) var possibleDuplicate: Bool

        /// The sends that count against `maximumAttempts`.
        public var countedAttempts: Int { Swift.max(attempts - uncounted, 0) }

        /// For a request sent for the first time at `firstSentAt`.
        public init(firstSentAt: DeliveryInstant) {
            self.firstSentAt = firstSentAt
            attempts = 1
            possibleDuplicate = false
        }

        /// The retry was sent.
        public mutating func recordSend() { attempts = Swift.min(attempts &+ 1, Int.max - 1) }

        fileprivate mutating func markPossibleDuplicate() { possibleDuplicate = true }

        fileprivate mutating func uncountLastSend() {
            if uncounted < attempts { uncounted += 1 }
        }

        fileprivate mutating func recordRefusal() {
            refusals = Swift.min(refusals &+ 1, Int.max - 1)
            uncountLastSend()
        }
    }

    /// Decides after a failed send (a retryable or throttled answer, or none).
    public func decide(
        after failure: Failure, state: inout State, now: DeliveryInstant, unixTime: Int64,
        random: inout some RandomNumberGenerator
    ) -> Decision {
        var delay: Duration
        if failure.unprocessed {
            // Not processed: no attempt spent, the refusals counted instead; the backoff grows
            // with them, from a fraction of a second (a GOAWAY's refused window spreads out).
            state.recordRefusal()
            guard state.refusals <= maximumRefusals else { return .giveUp(.refusalsExhausted) }
            delay = jitteredBackoff(retry: state.refusals, random: &random)
        } else {
            if failure.mayHaveBeenDelivered && state.possibleDuplicate {
                return .giveUp(.ambiguousDeliveryAlreadyResent)
            }
            if failure.duringOutage { state.uncountLastSend() }
            guard state.countedAttempts < maximumAttempts else { return .giveUp(.attemptsExhausted) }
            delay = jitteredBackoff(retry: Swift.max(state.countedAttempts, 1), random: &random)
        }
        if let retryAfter = failure.retryAfter {
            delay = Swift.max(delay, retryAfter.delay(unixTimeNow: unixTime))
        }
        let at = now.advanced(by: delay)
        guard at <= state.firstSentAt.advanced(by: maximumTotalTime) else { return .giveUp(.deadlineExceeded) }
        if failure.mayHaveBeenDelivered { state.markPossibleDuplicate() }
        return .retry(at: at, possibleDuplicate: state.possibleDuplicate)
    }

    /// Uniform in 0…min(maximumBackoff, initialBackoff × 2^(retry−1)).
    func jitteredBackoff(retry: Int, random: inout some RandomNumberGenerator) -> Duration {
        let cap = backoffCap(retry: retry)
        let capNanoseconds = DurationMath.nanoseconds(cap)
        guard capNanoseconds > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: 0...capNanoseconds, using: &random))
    }

    /// min(maximumBackoff, initialBackoff × 2^(retry−1)), without overflow for any retry count.
    func backoffCap(retry: Int) -> Duration {
        let exponent = Swift.min(Swift.max(retry - 1, 0), 62)
        let base = DurationMath.nanoseconds(initialBackoff)
        let (scaled, overflow) = base.multipliedReportingOverflow(by: Int64(1) << exponent)
        let cap = DurationMath.nanoseconds(maximumBackoff)
        return .nanoseconds(overflow ? cap : Swift.min(scaled, cap))
    }
}
