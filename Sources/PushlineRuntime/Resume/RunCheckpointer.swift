import Foundation
import PushlineCore

/// How a run checkpoints, and where a resumed one starts (docs/resume.md): built by
/// `CampaignRun` once the folder is locked, used by the sink on its thread.
struct CheckpointPlan: Sendable {
    /// The journal's identity fields, and for a resume its watermark, counts and file marks.
    var journal: CheckpointJournal
    var folder: String
    /// At most this long between durable checkpoints (results fsynced, journal replaced).
    var interval: Duration
    /// Sending: requests handed to providers and not settled, at most (the window of possible
    /// duplicates after a kill).
    var duplicateWindow: Int
    /// Set when resuming.
    var resumed: Bool
    /// Sending, resumed: what the previous runs recorded after the watermark.
    var records: ResumeRecords?
    /// Sending, resumed, per provider: the devices the previous runs' wire logs say may have been
    /// on the wire. A provider without an entry has no log to trust: every device in its
    /// possible-duplicate lines without a result line is marked.
    var wireStarts: [Provider: WireStarts] = [:]

    /// Whether a device of `provider` in its possible-duplicate lines may have been on the wire:
    /// its wire log's last record for it is a start, or there is no trusted log.
    func mayHaveBeenOnTheWire(_ key: DeviceKey, provider: Provider) -> Bool {
        wireStarts[provider]?.mayHaveBeenSent(key) ?? true
    }

    /// Lines after the watermark whose `provider` devices a killed run may have had on the wire
    /// (sending, resumed).
    func possibleDuplicateLines(_ provider: Provider) -> ClosedRange<Int>? {
        guard resumed, journal.mode == "send", let horizon = journal.horizonLines[provider], horizon > journal.settledThroughLine else { return nil }
        return (journal.settledThroughLine + 1)...horizon
    }

    /// The temporary path a resumed file continues, by final name.
    func resumedPath(of name: String) -> (path: String, mark: CheckpointJournal.FileMark)? {
        guard resumed, let mark = journal.mark(of: name) else { return nil }
        return (folder + "/" + mark.temporaryName, mark)
    }
}

/// Writes a run's journal: the identity fixed at the start, the watermark, counts and files
/// given at each checkpoint. Used on the sink's thread only.
final class RunCheckpointer {
    let plan: CheckpointPlan
    private var journal: CheckpointJournal
    private var lastDurable = ContinuousClock.now
    private(set) var failure: CheckpointError?
    // A sending run rewrites the journal each time a lane's horizon moves (dozens of times a
    // second at full speed): a formatter and an encoder made per write were a third of the
    // sink thread's time (docs/benchmarks.md, issue 35). Both are confined to the sink's thread.
    private let encoder = CheckpointJournal.makeEncoder()
    private let timeFormatter = ISO8601DateFormatter()
    private var writtenAtSecond = Int64.min

    init(plan: CheckpointPlan) {
        self.plan = plan
        self.journal = plan.journal
    }

    /// A durable checkpoint is due (`plan.interval` since the last).
    var due: Bool { ContinuousClock.now - lastDurable >= plan.interval }

    /// Replaces the journal. `sync`: the caller fsynced the files it names; the journal is
    /// fsynced too. Once writing failed, it stays failed (the run goes on; a resume would
    /// start from the last good journal, so the sink stops handing out requests past it).
    func write(watermark: Int, horizons: [Provider: Int], counts: RunCounts, files: [CheckpointJournal.FileMark], sync: Bool) {
        guard failure == nil else { return }
        journal.settledThroughLine = watermark
        journal.horizonLines = horizons
        journal.horizonLine = horizons.values.reduce(watermark, max)
        journal.counts = counts
        journal.files = files
        let now = Date()
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        if second != writtenAtSecond {
            writtenAtSecond = second
            journal.writtenAt = timeFormatter.string(from: now)
        }
        do throws(CheckpointError) {
            try journal.write(to: plan.folder, sync: sync, encoder: encoder)
            if sync { lastDurable = .now }
        } catch {
            failure = error
        }
    }
}
