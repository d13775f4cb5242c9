public import PushlineCore
public import PushlineDelivery

/// What the delivery sink measured for one provider, with its lane's own report: the
/// `delivery.<provider>` object of `summary.json` (docs/output.md).
public struct ProviderDeliveryReport: Sendable {
    public var provider: Provider
    public var sent = 0
    public var invalidToken = 0
    public var failed = 0
    /// Failures by reason code (`retries_exhausted`, `provider_stopped`, the provider's reason…).
    public var failedByReason: [String: Int] = [:]
    /// Devices of this provider skipped at send time (`validate_only` for APNs).
    public var skipped = 0
    /// Devices read but not settled with the provider because the run was stopped.
    public var unsent = 0
    public var possibleDuplicates = 0
    /// Sent devices whose token the provider replaced (ADM): each also has a `replaced` line in
    /// `invalid-tokens.ndjson`.
    public var tokensReplaced = 0
    /// Requests handed to the lane.
    public var handed = 0
    /// From the first submission to the final completion, per request that reached the wire.
    public var latency = LatencyHistogram()
    /// From the first request handed to the lane to the last outcome it reported.
    public var sendingTime: Duration = .zero
    /// The lane's account (attempts, retries, final rate, slowdowns, why it stopped); nil when
    /// the provider had no lane.
    public var lane: LaneReport?

    public init(provider: Provider) { self.provider = provider }

    /// Counts one sending outcome (written and rejected are not sending outcomes: not counted).
    mutating func count(_ outcome: DeliveryOutcome) {
        switch outcome.kind {
        case .sent:
            sent += 1
            if outcome.possibleDuplicate { possibleDuplicates += 1 }
            if outcome.replacementToken != nil { tokensReplaced += 1 }
        case .invalidToken:
            invalidToken += 1
        case .failed:
            failed += 1
            ReasonTally.add(1, to: outcome.reasonCode ?? "unknown", in: &failedByReason)
        case .skipped:
            skipped += 1
        case .unsent:
            unsent += 1
        case .written, .rejected:
            break
        }
    }

    /// Sent per second over the sending time (0 when no time passed).
    public var sentPerSecond: Double {
        let seconds = Double(sendingTime.components.seconds) + Double(sendingTime.components.attoseconds) / 1e18
        guard seconds > 0 else { return 0 }
        let rate = Double(sent) / seconds
        return rate.isFinite ? rate : 0
    }

    /// Set when the provider stopped (a configuration error): the lane's message.
    public var stoppedBecause: String? { lane?.stoppedBecause }
}
