import Foundation
import PushlineDelivery
import PushlineCore
import PushlineIO

extension CampaignRun {
    /// The run's checkpoint plan (nil: no checkpoint, for an audience from standard input or
    /// with checkpoints off), or why `--resume` cannot continue. Call with the folder locked.
    func checkpointPlan(sending configurations: [ProviderSendConfiguration]?, startedAt: Date) -> Result<CheckpointPlan?, ResumeRefusal> {
        let sending = configurations != nil
        guard audiencePath != "-" else {
            if resume { return .failure(ResumeRefusal("cannot resume a run whose audience is standard input: it cannot be read again; pass the audience file with --audience")) }
            return .success(nil)
        }
        guard let interval = checkpointInterval else {
            if resume { return .failure(ResumeRefusal("cannot resume with checkpoints off: drop --checkpoint-interval 0")) }
            return .success(nil)
        }
        let window = duplicateWindow ?? Self.defaultDuplicateWindow(configurations ?? [])
        let shard = pipeline.campaign.shard.map { "\($0.index)/\($0.count)" }
        if resume {
            do throws(ResumeRefusal) {
                var point = try ResumePoint.load(
                    folder: outputFolder, pipelinePath: pipeline.path, audiencePath: audiencePath, sending: sending, shard: shard, clock: pipeline.clock
                )
                point.journal.runs += 1
                var plan = CheckpointPlan(journal: point.journal, folder: outputFolder, interval: interval, duplicateWindow: window, resumed: true)
                if sending {
                    var paths: [String: String] = [:]
                    for mark in point.journal.files { paths[mark.name] = outputFolder + "/" + mark.temporaryName }
                    do throws(ResumeRecords.Failure) {
                        plan.records = try ResumeRecords.read(paths: paths, after: point.journal.settledThroughLine)
                    } catch {
                        throw ResumeRefusal("cannot resume: \(error.description)")
                    }
                    // The wire logs say which devices may really have been on the wire, unless the
                    // machine rebooted since they were written (nothing in them was fsynced).
                    if let boot = plan.journal.wireLogBoot, boot == RunIdentity.bootID() {
                        for provider in Provider.allCases {
                            guard let lines = plan.possibleDuplicateLines(provider) else { continue }
                            plan.wireStarts[provider] = WireLogFile.possiblyOnTheWire(folder: outputFolder, provider: provider, lines: lines)
                        }
                    } else {
                        if plan.journal.wireLogBoot != nil {
                            logger.notice("the machine restarted since the run's wire logs were written: devices that may have been on the wire are marked by the journal's horizons")
                        }
                        plan.journal.wireLogBoot = nil
                    }
                }
                return .success(plan)
            } catch {
                return .failure(error)
            }
        }
        let identity: (pipeline: String, audience: CheckpointJournal.AudienceIdentity)
        do throws(RunIdentity.Failure) {
            identity = (try RunIdentity.pipelineSHA256(pipeline.path), try RunIdentity.audience(audiencePath))
        } catch {
            // Without an identity there is nothing a resume could check against: run without.
            logger.warning("no checkpoint for this run (it cannot be resumed): \(error.description)")
            return .success(nil)
        }
        let journal = CheckpointJournal(
            mode: sending ? "send" : "dry_run", settledThroughLine: 0, horizonLine: 0, counts: RunCounts(), files: [],
            pipelineSHA256: identity.pipeline, audience: identity.audience, clock: pipeline.clock, shard: shard, runs: 1,
            firstStartedAt: ISO8601DateFormatter().string(from: startedAt), writtenAt: "", wireLogBoot: sending ? RunIdentity.bootID() : nil
        )
        return .success(CheckpointPlan(journal: journal, folder: outputFolder, interval: interval, duplicateWindow: window, resumed: false))
    }

    /// After the summary: a run that ended marks its journal complete, so `--resume` says there
    /// is nothing to resume; a stopped or failed one's journal stays to resume from.
    func finishCheckpoint(_ report: RunReport) {
        guard report.status != .stopped, report.status != .failed else { return }
        do throws(CheckpointError) {
            guard var journal = try CheckpointJournal.read(from: outputFolder) else { return }
            journal.complete = true
            journal.finishedStatus = report.status.rawValue
            try journal.write(to: outputFolder, sync: true)
            // Nothing is left to resume, so nothing is left to mark.
            for provider in Provider.allCases { try? FileManager.default.removeItem(atPath: outputFolder + "/" + WireLogFile.name(provider)) }
        } catch {
            logger.warning("cannot mark the checkpoint complete: \(error.description)")
        }
    }
}
