/// What happened to every input line and device: the numbers a run reconciles.
///
/// Every device ends in exactly one of written (sent or dry-run written), rejected or skipped;
/// every line is either routed (its devices counted) or rejected whole.
public struct RunCounts: Sendable, Equatable {
    /// Non-blank lines read.
    public var lines = 0
    /// Blank lines skipped (they hold no recipient; counted so line numbers reconcile).
    public var blankLines = 0
    /// Lines rejected whole (invalid JSON, too long, no id, no devices).
    public var linesRejected = 0
    /// Device entries found in routed lines.
    public var devices = 0
    /// Devices whose request was written or sent, per provider.
    public var written: [Provider: Int] = [:]
    /// Devices rejected, per reason code.
    public var rejected: [String: Int] = [:]
    /// Devices deliberately not addressed, per reason code.
    public var skipped: [String: Int] = [:]
    /// Written requests whose text was shortened to fit (`on_oversize: truncate`).
    public var truncated = 0

    public init() {}

    public var writtenTotal: Int { written.values.reduce(0, +) }
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    public var skippedTotal: Int { skipped.values.reduce(0, +) }

    /// Lines and devices add up: nothing was lost or counted twice.
    public var reconciles: Bool {
        devices == writtenTotal + rejectedTotal + skippedTotal && linesRejected <= lines
    }

    public mutating func add(_ other: RunCounts) {
        lines += other.lines
        blankLines += other.blankLines
        linesRejected += other.linesRejected
        devices += other.devices
        truncated += other.truncated
        for (k, v) in other.written { written[k, default: 0] += v }
        for (k, v) in other.rejected { rejected[k, default: 0] += v }
        for (k, v) in other.skipped { skipped[k, default: 0] += v }
    }
}
