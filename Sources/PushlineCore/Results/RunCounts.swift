/// Outcomes of the devices of one provider (or of devices no provider was found for).
/// `devices = written + sent + invalidToken + rejected + failed + skipped + unsent` once every
/// device settled.
public struct OutcomeCounts: Sendable, Equatable, Codable {
    public var devices = 0
    public var written = 0
    public var sent = 0
    public var invalidToken = 0
    public var rejected = 0
    public var failed = 0
    public var skipped = 0
    public var unsent = 0

    public init() {}

    public var settled: Int { written + sent + invalidToken + rejected + failed + skipped + unsent }
    public var reconciles: Bool { devices == settled }
    public var isZero: Bool { self == OutcomeCounts() }

    public subscript(kind: DeliveryOutcome.Kind) -> Int {
        get {
            switch kind {
            case .written: written
            case .sent: sent
            case .invalidToken: invalidToken
            case .rejected: rejected
            case .failed: failed
            case .skipped: skipped
            case .unsent: unsent
            }
        }
        set {
            switch kind {
            case .written: written = newValue
            case .sent: sent = newValue
            case .invalidToken: invalidToken = newValue
            case .rejected: rejected = newValue
            case .failed: failed = newValue
            case .skipped: skipped = newValue
            case .unsent: unsent = newValue
            }
        }
    }

    public mutating func add(_ other: OutcomeCounts) {
        devices += other.devices
        written += other.written
        sent += other.sent
        invalidToken += other.invalidToken
        rejected += other.rejected
        failed += other.failed
        skipped += other.skipped
        unsent += other.unsent
    }
}

/// What happened to every input line and device: the numbers a run reconciles.
///
/// Every device ends in exactly one `DeliveryOutcome` (written, sent, invalid token, rejected,
/// failed, skipped, unsent); every line is either routed (its devices counted) or rejected whole. Totals
/// are kept by reason, and per provider in `byProvider` (devices whose provider was never known,
/// such as an unknown platform, in `unrouted`).
public struct RunCounts: Sendable, Equatable, Codable {
    /// Non-blank lines read.
    public var lines = 0
    /// Blank lines skipped (they hold no recipient; counted so line numbers reconcile).
    public var blankLines = 0
    /// Lines rejected whole (invalid JSON, too long, no id, no devices).
    public var linesRejected = 0
    /// Device entries found in routed lines.
    public var devices = 0
    /// Devices whose request was written (dry run), per provider.
    public var written: [Provider: Int] = [:]
    /// Devices the provider accepted, per provider.
    public var sent: [Provider: Int] = [:]
    /// Devices whose token the provider called invalid, per reason. Every by-reason count holds at
    /// most `ReasonTally.maxDistinct` reasons (then `other`): provider reasons come off the wire.
    public var invalidTokens: [String: Int] = [:]
    /// Devices rejected, per reason code.
    public var rejected: [String: Int] = [:]
    /// Devices that failed after their retries, per reason.
    public var failed: [String: Int] = [:]
    /// Devices deliberately not addressed, per reason code.
    public var skipped: [String: Int] = [:]
    /// Devices read but not settled with their provider because the run was stopped, per reason
    /// (`run_stopped`).
    public var unsent: [String: Int] = [:]
    /// Every outcome again, per provider (the per-provider reconciliation).
    public var byProvider: [Provider: OutcomeCounts] = [:]
    /// Devices rejected before a provider was known (unknown platform, invalid device entry).
    public var unrouted = OutcomeCounts()
    /// Written requests whose text was shortened to fit (`on_oversize: truncate`).
    public var truncated = 0
    /// Sent requests resent after an attempt that may have reached the provider.
    public var possibleDuplicates = 0
    /// Failed or unsent devices an attempt of which may have reached the provider (a request
    /// cancelled in flight): sending them again may notify them twice.
    public var possiblyDelivered = 0
    /// Quiet hours: lines deferred to `deferred.ndjson` (their devices are `skipped: quiet_hours`).
    public var deferredLines = 0
    /// Quiet hours: routed lines whose time zone field was absent or not a known zone name, judged
    /// in the default zone.
    public var defaultTimeZoneLines = 0
    /// Sharded runs: lines another shard takes (their devices are `skipped: other_shard`; a line
    /// without a usable id is counted here by every shard but the one that rejects it).
    public var linesOtherShard = 0
    /// Experiments: every outcome again, per arm (variant `i` at index `i`, the control after
    /// the variants), for the devices of the recipients this run addressed (a shard's own: other
    /// shards' recipients are counted by their shard). Nil without an experiment.
    public var byArm: [OutcomeCounts]?
    /// Experiments: recipients (routed lines) per arm, `byArm`'s indices: what lift is measured
    /// per. Nil without an experiment.
    public var recipientsByArm: [Int]?

    public init() {}

    public var writtenTotal: Int { written.values.reduce(0, +) }
    public var sentTotal: Int { sent.values.reduce(0, +) }
    public var invalidTokenTotal: Int { invalidTokens.values.reduce(0, +) }
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    public var failedTotal: Int { failed.values.reduce(0, +) }
    public var skippedTotal: Int { skipped.values.reduce(0, +) }
    public var unsentTotal: Int { unsent.values.reduce(0, +) }

    /// Devices with an outcome.
    public var settledTotal: Int {
        writtenTotal + sentTotal + invalidTokenTotal + rejectedTotal + failedTotal + skippedTotal + unsentTotal
    }

    /// Lines and devices add up in total: every device has exactly one outcome.
    public var reconciles: Bool {
        devices == settledTotal && linesRejected <= lines
    }

    /// The per-provider counts add up (each provider's devices = its outcomes) and sum to the
    /// totals: a run checks this and `reconciles`.
    public var reconcilesByProvider: Bool {
        guard unrouted.reconciles else { return false }
        var perProvider = unrouted
        for counts in byProvider.values {
            guard counts.reconciles else { return false }
            perProvider.add(counts)
        }
        return perProvider.devices == devices
            && perProvider.written == writtenTotal && perProvider.sent == sentTotal
            && perProvider.invalidToken == invalidTokenTotal && perProvider.rejected == rejectedTotal
            && perProvider.failed == failedTotal && perProvider.skipped == skippedTotal
            && perProvider.unsent == unsentTotal
    }

    /// The per-arm counts add up (each arm's devices = its outcomes) and, with the devices other
    /// shards take, to the totals. True without an experiment.
    public var reconcilesByArm: Bool {
        guard let byArm else { return true }
        var all = OutcomeCounts()
        for counts in byArm {
            guard counts.reconciles else { return false }
            all.add(counts)
        }
        let otherShard = skipped[SkipReason.otherShardCode] ?? 0
        return all.devices + otherShard == devices
            && all.written == writtenTotal && all.sent == sentTotal && all.invalidToken == invalidTokenTotal
            && all.rejected == rejectedTotal && all.failed == failedTotal && all.skipped + otherShard == skippedTotal
            && all.unsent == unsentTotal
    }

    /// Counts a device found in a routed line (its outcome is recorded separately, now or when
    /// its request settles). `provider` nil: no provider could be determined. `arm`: the
    /// experiment arm of its recipient (`byArm`'s index), nil without one.
    public mutating func countDevice(provider: Provider?, arm: Int? = nil) {
        countDevices(1, provider: provider, arm: arm)
    }

    /// Counts `n` devices at once (a batch's tally); `n` may be negative to take a tally back out.
    public mutating func countDevices(_ n: Int, provider: Provider?, arm: Int? = nil) {
        devices += n
        if let provider { byProvider[provider, default: OutcomeCounts()].devices += n } else { unrouted.devices += n }
        if let arm {
            ensureArm(arm)
            byArm![arm].devices += n
        }
    }

    /// Counts a recipient (a routed line) of experiment arm `arm`.
    public mutating func countRecipient(arm: Int) {
        Self.grow(&recipientsByArm, toHold: arm, with: 0)
        recipientsByArm![arm] += 1
    }

    /// Makes `byArm` hold arm `arm`.
    public mutating func ensureArm(_ arm: Int) {
        Self.grow(&byArm, toHold: arm, with: OutcomeCounts())
    }

    /// Arm `arm`'s row (zeros when nothing was counted in it).
    public func arm(_ arm: Int) -> OutcomeCounts {
        byArm.flatMap { arm < $0.count ? $0[arm] : nil } ?? OutcomeCounts()
    }

    /// Arm `arm`'s recipients.
    public func recipients(arm: Int) -> Int {
        recipientsByArm.flatMap { arm < $0.count ? $0[arm] : nil } ?? 0
    }

    /// Creates `array` if needed and extends it with `filler` so that index `index` exists.
    private static func grow<Element>(_ array: inout [Element]?, toHold index: Int, with filler: Element) {
        let count = array?.count ?? 0
        if count > index { return }
        array = (array ?? []) + repeatElement(filler, count: index + 1 - count)
    }

    /// Records the outcome of a device already counted by `countDevice` (same provider and arm).
    public mutating func record(_ outcome: DeliveryOutcome, provider: Provider?, arm: Int? = nil) {
        record(outcome.kind, reason: outcome.reasonCode, provider: provider, count: 1, arm: arm)
        if outcome.possibleDuplicate {
            if outcome.kind == .sent { possibleDuplicates += 1 } else { possiblyDelivered += 1 }
        }
    }

    /// Records `count` outcomes of one kind at once (a batch's written requests).
    public mutating func record(_ kind: DeliveryOutcome.Kind, reason: String?, provider: Provider?, count: Int, arm: Int? = nil) {
        guard count > 0 else { return }
        if let arm {
            ensureArm(arm)
            byArm![arm][kind] += count
        }
        switch kind {
        case .written: if let provider { written[provider, default: 0] += count }
        case .sent: if let provider { sent[provider, default: 0] += count }
        case .invalidToken: ReasonTally.add(count, to: reason ?? "unknown", in: &invalidTokens)
        case .rejected: ReasonTally.add(count, to: reason ?? "unknown", in: &rejected)
        case .failed: ReasonTally.add(count, to: reason ?? "unknown", in: &failed)
        case .skipped: ReasonTally.add(count, to: reason ?? "unknown", in: &skipped)
        case .unsent: ReasonTally.add(count, to: reason ?? "unknown", in: &unsent)
        }
        if let provider { byProvider[provider, default: OutcomeCounts()][kind] += count } else { unrouted[kind] += count }
    }

    public mutating func add(_ other: RunCounts) {
        lines += other.lines
        blankLines += other.blankLines
        linesRejected += other.linesRejected
        devices += other.devices
        truncated += other.truncated
        possibleDuplicates += other.possibleDuplicates
        possiblyDelivered += other.possiblyDelivered
        deferredLines += other.deferredLines
        defaultTimeZoneLines += other.defaultTimeZoneLines
        linesOtherShard += other.linesOtherShard
        for (k, v) in other.written { written[k, default: 0] += v }
        for (k, v) in other.sent { sent[k, default: 0] += v }
        ReasonTally.merge(other.invalidTokens, into: &invalidTokens)
        ReasonTally.merge(other.rejected, into: &rejected)
        ReasonTally.merge(other.failed, into: &failed)
        ReasonTally.merge(other.skipped, into: &skipped)
        ReasonTally.merge(other.unsent, into: &unsent)
        for (k, v) in other.byProvider { byProvider[k, default: OutcomeCounts()].add(v) }
        unrouted.add(other.unrouted)
        for (i, counts) in (other.byArm ?? []).enumerated() {
            ensureArm(i)
            byArm![i].add(counts)
        }
        for (i, n) in (other.recipientsByArm ?? []).enumerated() {
            Self.grow(&recipientsByArm, toHold: i, with: 0)
            recipientsByArm![i] += n
        }
    }
}
