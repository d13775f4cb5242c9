import PushlineCore
import PushlineIO

/// A finished run's record in an output folder (its journal says `complete`), and whether the run
/// starting now is the same campaign: a scheduler's retry or a person's repeat of its command
/// (docs/resume.md, "Running a finished run's command again").
///
/// The same campaign is the same mode (dry run or sending), pipeline bytes, audience (size and
/// sampled SHA-256, as a resume checks it) and shard. The clock is not compared: a run without
/// `--now` takes its start time, which differs on every retry.
struct FinishedRun: Sendable {
    var journal: CheckpointJournal
    /// How it ended: the journal's `finishedStatus`, else its summary's `status`.
    var status: RunStatus
    /// Nil when this run is the same campaign; else what differs, for a refusal.
    var difference: String?

    var sameCampaign: Bool { difference == nil }

    /// The finished run in `folder` (locked by the caller), or nil: no journal, an unfinished
    /// one, or one that cannot be read (a resume refuses that one by name; a new run replaces it).
    static func find(folder: String, pipelinePath: String, audiencePath: String, sending: Bool, shard: String?) -> FinishedRun? {
        guard let found = try? CheckpointJournal.read(from: folder), found.complete else { return nil }
        let statusText = found.finishedStatus ?? UnfinishedRun.summaryStatus(folder + "/summary.json")
        let status = statusText.flatMap(RunStatus.init(rawValue:)) ?? .completed
        return FinishedRun(
            journal: found, status: status,
            difference: difference(found, pipelinePath: pipelinePath, audiencePath: audiencePath, sending: sending, shard: shard)
        )
    }

    /// What makes this run another campaign than the journal's, nil when it is the same.
    static func difference(_ journal: CheckpointJournal, pipelinePath: String, audiencePath: String, sending: Bool, shard: String?) -> String? {
        switch RunIdentity.mismatch(journal, pipelinePath: pipelinePath, audiencePath: audiencePath, sending: sending, shard: shard) {
        case nil: nil
        case .mode?: "it was a \(journal.mode == "send" ? "sending run" : "dry run")"
        case .standardInput?: "this run reads standard input"
        case .unreadable(let failure)?: failure.description
        case .pipeline?: "its pipeline file differs"
        case .audience?: "its audience differs"
        case .shard?: "it was \(journal.shard.map { "shard \($0)" } ?? "a whole run")"
        }
    }

    /// Devices its `sent.ndjson` records.
    static func devicesRecordedSent(_ lock: OutputFolderLock) -> Int {
        UnfinishedRun.devicesRecordedSent(folder: lock.folder, files: (try? lock.resultFiles()) ?? [])
    }

    /// One line for people: "completed_with_rejects: 280 sent, 3 rejected, …".
    var countsLine: String {
        let c = journal.counts
        var parts = ["\(c.devices) devices"]
        if journal.mode == "send" {
            parts.append("\(c.sentTotal) sent")
            if c.invalidTokenTotal > 0 { parts.append("\(c.invalidTokenTotal) invalid token") }
            if c.failedTotal > 0 { parts.append("\(c.failedTotal) failed") }
        } else {
            parts.append("\(c.writtenTotal) written")
        }
        let rejected = c.rejectedTotal + c.linesRejected
        if rejected > 0 { parts.append("\(rejected) rejected") }
        if c.skippedTotal > 0 { parts.append("\(c.skippedTotal) skipped") }
        return "status \(status.rawValue): " + parts.joined(separator: ", ")
    }
}
