public import PushlineCore

/// The output of encoding one batch of audience lines: the request index (one fixed-size entry
/// per request and the byte arena its ranges point into), reject lines, and the counts.
///
/// The dry-run sink renders its NDJSON lines from the index (`renderDryRunLines`), the senders
/// send from it; both with the campaign's `RouteTable` for what is constant per route.
public struct EncodedBatch: Sendable {
    /// Every request of the batch, in input order.
    public var index: RequestIndex
    /// `rejects.ndjson` lines of the batch.
    public var rejects: JSONWriter
    /// `deferred.ndjson` lines of the batch: quiet hours' deferred input lines, as read.
    public var deferred: JSONWriter
    /// `holdout.ndjson` lines of the batch: an experiment's control recipients' input lines, as read.
    public var holdout: JSONWriter
    /// Dry-run request lines per provider (by `Provider.ordinal`), once rendered from the index.
    public var dryRunLines: [JSONWriter]
    /// `--gzip` dry runs: each provider's `dryRunLines` as one gzip member, compressed on the
    /// encode worker (empty otherwise).
    public var dryRunMembers: [[UInt8]]
    /// Entries of `index` already rendered into `dryRunLines`.
    public internal(set) var renderedEntries = 0
    /// Counts other than the per-provider request tallies (kept apart on the hot path).
    var baseCounts = RunCounts()
    /// Requests encoded per provider, by `Provider.ordinal`: an array add per device instead of
    /// dictionary updates.
    var requestTally = [Int](repeating: 0, count: Provider.allCases.count)
    /// Devices skipped as not targeted (`device_type_not_targeted`) per provider, by
    /// `Provider.ordinal`: a campaign for some device types skips many of an audience's devices,
    /// and two dictionary updates (one keyed by a string) for each were a percent of the demo's
    /// CPU. Folded into the counts when they are read.
    var notTargetedTally = [Int](repeating: 0, count: Provider.allCases.count)
    /// Experiments: requests encoded per arm (`RunCounts.byArm`'s index), beside the
    /// per-provider tallies (a request may still be skipped, and is written only at the end);
    /// empty without an experiment.
    var armRequestTally: [Int] = []
    /// Position of the batch in the input, for ordered sinks and progress.
    public var sequence: Int
    public var firstLine = 0
    public var lastLine = 0

    public init(sequence: Int) {
        self.sequence = sequence
        index = RequestIndex()
        rejects = JSONWriter(reservingCapacity: 0)
        deferred = JSONWriter(reservingCapacity: 0)
        holdout = JSONWriter(reservingCapacity: 0)
        dryRunLines = Provider.allCases.map { _ in JSONWriter(reservingCapacity: 0) }
        dryRunMembers = Provider.allCases.map { _ in [] }
    }

    /// What encoding found, with each request still unsettled: lines, devices (per provider),
    /// rejects and skips. A sender records each request's outcome on top of this.
    public var encodeCounts: RunCounts {
        get {
            var counts = baseCounts
            for provider in Provider.allCases where requestTally[provider.ordinal] > 0 {
                counts.countDevices(requestTally[provider.ordinal], provider: provider)
            }
            for provider in Provider.allCases where notTargetedTally[provider.ordinal] > 0 {
                let n = notTargetedTally[provider.ordinal]
                counts.countDevices(n, provider: provider)
                counts.record(.skipped, reason: SkipReason.notTargetedCode, provider: provider, count: n)
            }
            // The totals above count these already: only the arms' rows take them.
            for arm in armRequestTally.indices where armRequestTally[arm] != 0 {
                counts.ensureArm(arm)
                counts.byArm![arm].devices += armRequestTally[arm]
            }
            return counts
        }
        set {
            // The inverse of the getter: the request tallies stay, the rest is stored. The skips
            // tallied so far are in `newValue` now, so they move to the stored counts.
            var base = newValue
            for provider in Provider.allCases where requestTally[provider.ordinal] > 0 {
                base.countDevices(-requestTally[provider.ordinal], provider: provider)
            }
            for arm in armRequestTally.indices where armRequestTally[arm] != 0 {
                base.ensureArm(arm)
                base.byArm![arm].devices -= armRequestTally[arm]
            }
            baseCounts = base
            for i in notTargetedTally.indices { notTargetedTally[i] = 0 }
        }
    }

    /// The counts once every request is written (the dry run's accounting).
    public var counts: RunCounts {
        get {
            var counts = encodeCounts
            for provider in Provider.allCases {
                counts.record(.written, reason: nil, provider: provider, count: requestTally[provider.ordinal])
            }
            for arm in armRequestTally.indices where armRequestTally[arm] != 0 {
                counts.byArm![arm].written += armRequestTally[arm]
            }
            return counts
        }
        set {
            // The inverse of the getter: the written requests are the tallies, which stay.
            var base = newValue
            for provider in Provider.allCases where requestTally[provider.ordinal] > 0 {
                let n = requestTally[provider.ordinal]
                base.written[provider, default: 0] -= n
                if base.written[provider] == 0 { base.written[provider] = nil }
                base.byProvider[provider, default: OutcomeCounts()].written -= n
            }
            for arm in armRequestTally.indices where armRequestTally[arm] != 0 {
                base.ensureArm(arm)
                base.byArm![arm].written -= armRequestTally[arm]
            }
            encodeCounts = base
        }
    }

    /// Counts a request encoded for a recipient of experiment arm `arm`.
    mutating func countRequest(arm: Int) {
        if arm >= armRequestTally.count { armRequestTally += repeatElement(0, count: arm + 1 - armRequestTally.count) }
        armRequestTally[arm] += 1
    }

    /// Counts a device of a recipient of arm `arm` the campaign does not target, in the arm's
    /// row only: the run's totals take it from `notTargetedTally`, counted beside this.
    mutating func countNotTargeted(arm: Int) {
        baseCounts.ensureArm(arm)
        baseCounts.byArm![arm].devices += 1
        baseCounts.byArm![arm].skipped += 1
    }

    /// Requests in the batch per provider.
    public func requestCount(for provider: Provider) -> Int {
        requestTally[provider.ordinal]
    }

    /// Empties the batch for reuse, keeping every buffer's capacity.
    public mutating func removeAll(sequence: Int) {
        self.sequence = sequence
        index.removeAll()
        renderedEntries = 0
        for i in dryRunLines.indices { dryRunLines[i].removeAll() }
        for i in dryRunMembers.indices { dryRunMembers[i].removeAll(keepingCapacity: true) }
        rejects.removeAll()
        deferred.removeAll()
        holdout.removeAll()
        baseCounts = RunCounts()
        for i in requestTally.indices { requestTally[i] = 0 }
        for i in notTargetedTally.indices { notTargetedTally[i] = 0 }
        for i in armRequestTally.indices { armRequestTally[i] = 0 }
        firstLine = 0
        lastLine = 0
    }

    /// A mark to roll the batch back to (`rollBack(to:)`) when a line fails part-way.
    public struct Mark: Sendable {
        var entries: Int
        var arena: Int
        var rejects: Int
        var deferred: Int
        var holdout: Int
        var baseCounts: RunCounts
        var requestTally: [Int]
        var notTargetedTally: [Int]
        var armRequestTally: [Int]
    }

    public var mark: Mark {
        Mark(
            entries: index.count, arena: index.arena.count, rejects: rejects.count, deferred: deferred.count,
            holdout: holdout.count, baseCounts: baseCounts, requestTally: requestTally, notTargetedTally: notTargetedTally,
            armRequestTally: armRequestTally
        )
    }

    /// Drops every request, reject and count added since `mark` (entries rendered since are not
    /// undone: render only lines that encoded).
    public mutating func rollBack(to mark: Mark) {
        index.truncate(entries: mark.entries, arenaBytes: mark.arena)
        renderedEntries = min(renderedEntries, mark.entries)
        if rejects.count > mark.rejects { rejects.truncate(to: mark.rejects, needsComma: false) }
        if deferred.count > mark.deferred { deferred.truncate(to: mark.deferred, needsComma: false) }
        if holdout.count > mark.holdout { holdout.truncate(to: mark.holdout, needsComma: false) }
        baseCounts = mark.baseCounts
        requestTally = mark.requestTally
        notTargetedTally = mark.notTargetedTally
        armRequestTally = mark.armRequestTally
    }
}
