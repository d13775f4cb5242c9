import PushlineCore
import PushlineDelivery

/// What a resumed sending run knows of the runs before it, device by device: which devices they
/// settled (their lines are in the files: not sent again) and which a killed run may have had
/// on the wire without recording it (sent again, marked `possible_duplicate`). A first run
/// knows nothing, and marks nothing.
///
/// A class: it is asked about every settled request on the sink's thread, and a struct stored
/// in `SendState` was copied (and its arrays retained and released) at each question.
final class ResumeMarks {
    private let records: ResumeRecords?
    /// Per provider ordinal: the lines between the journal's watermark and its horizon.
    private let possibleDuplicateLines: [ClosedRange<Int>?]
    /// Which of those devices the wire logs say may have been on the wire.
    private let plan: CheckpointPlan?
    /// Devices settled from the previous runs' records (not sent again).
    private(set) var settledFromRecords = 0

    init(plan: CheckpointPlan?) {
        records = plan?.records
        possibleDuplicateLines = Provider.allCases.map { plan?.possibleDuplicateLines($0) }
        self.plan = plan
    }

    /// The outcome an earlier run recorded for `request`'s device, counted as settled from the
    /// records; nil when no earlier run settled it.
    func settledEarlier(_ request: OutgoingRequest) -> (provider: Provider, outcome: DeliveryOutcome)? {
        guard let records, let recorded = records.settled[DeviceKey(line: request.entry.line, device: Int(request.entry.device))] else { return nil }
        settledFromRecords += 1
        return recorded
    }

    /// `outcome`, marked a possible duplicate when a killed run may have had `request`'s device
    /// on the wire: its line lies past the watermark and within the horizon, the run did not
    /// list it as never attempted, and no wire log rules it out.
    func marked(_ outcome: DeliveryOutcome, of request: OutgoingRequest, provider: Provider) -> DeliveryOutcome {
        guard let lines = possibleDuplicateLines[provider.ordinal], lines.contains(request.entry.line) else { return outcome }
        let key = DeviceKey(line: request.entry.line, device: Int(request.entry.device))
        guard records?.neverAttempted.contains(key) != true, plan?.mayHaveBeenOnTheWire(key, provider: provider) ?? true else { return outcome }
        return outcome.markedPossibleDuplicate()
    }
}

/// Per provider, the highest line the journal lets its lane be given (docs/resume.md): a kill
/// can then have sent without a record only devices of lines up to it. Without a checkpoint
/// (an audience from stdin) nothing is held back.
struct JournalHorizons {
    /// By `Provider.ordinal`.
    private var lines: [Int]

    /// A resume starts from the horizons it read: devices up to them it has not sent yet are
    /// still possible duplicates if it is killed too.
    init(plan: CheckpointPlan?) {
        let resumed = plan?.resumed == true ? plan?.journal : nil
        let start = resumed?.settledThroughLine ?? 0
        lines = Provider.allCases.map { provider in
            plan == nil ? Int.max : max(start, resumed?.horizonLines[provider] ?? 0)
        }
    }

    subscript(provider: Provider) -> Int {
        get { lines[provider.ordinal] }
        set { lines[provider.ordinal] = newValue }
    }

    /// What the journal records: each horizon that holds something back.
    var recorded: [Provider: Int] {
        var byProvider: [Provider: Int] = [:]
        for provider in Provider.allCases where lines[provider.ordinal] > 0 && lines[provider.ordinal] != Int.max {
            byProvider[provider] = lines[provider.ordinal]
        }
        return byProvider
    }
}
