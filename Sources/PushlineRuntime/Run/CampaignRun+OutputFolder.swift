import PushlineCore
import PushlineIO
import Foundation

extension CampaignRun {
    /// What the output folder allows this run.
    enum FolderClaim {
        /// The folder is this run's until `lock` goes (after the summary).
        case claimed(OutputFolderLock)
        /// The folder's run already finished this campaign: report it, run nothing.
        case finished(FinishedRun)
        /// The run may not start here: why, and its exit.
        case refused(failure: String, exit: PushlineExit)
    }

    /// Takes the output folder. It belongs to this run until the summary is written: a second run
    /// is refused before it reads anything, and the previous run's results go before any of ours
    /// appear, unless they are an unfinished run's record: kept (moved aside with --force) or
    /// refused. A finished run of this campaign is reported instead of run again, unless
    /// `--force --resend` asks for the campaign again.
    func claimOutputFolder(startedAt: Date, sending: Bool) -> FolderClaim {
        let campaign = pipeline.campaign
        do throws(OutputFolderError) {
            let lock = try OutputFolderLock.acquire(outputFolder, startedAt: ISO8601DateFormatter().string(from: startedAt))
            let finished = FinishedRun.find(
                folder: outputFolder, pipelinePath: pipeline.path, audiencePath: audiencePath, sending: sending,
                shard: campaign.shard.map { "\($0.index)/\($0.count)" }
            )
            if let finished, finished.sameCampaign, sending, moveUnfinishedRunAside {
                // Sending the same campaign again on purpose: only with --resend, and its record is kept.
                guard resendAcknowledged else { throw .resendNotAcknowledged(outputFolder, sent: FinishedRun.devicesRecordedSent(lock), finished: true) }
                let aside = try UnfinishedRun.moveAside(try lock.resultFiles(), in: outputFolder, prefix: "finished-", unixTime: Int64(startedAt.timeIntervalSince1970))
                logger.notice("--force --resend: moved the finished run's results into \(outputFolder)/\(aside); sending the whole campaign again")
            } else if let finished, finished.sameCampaign, resume || autoResume || sending {
                // A retry of a finished run's command: a dry run without --resume or --auto-resume
                // is a preview and is written again; anything else reports the finished run.
                return .finished(finished)
            } else if let finished, let difference = finished.difference, resume {
                return .refused(
                    failure: "cannot resume: the run in \(outputFolder) finished, and it is not this campaign (\(difference)); run without --resume to replace it, or choose another output folder",
                    exit: .cannotResume
                )
            } else if resume {
                // A resume continues the folder's files (checked later); nothing is moved or removed.
                return .claimed(lock)
            } else if let unfinished = try UnfinishedRun.find(in: lock) {
                guard moveUnfinishedRunAside else { throw unfinished.refusal }
                guard resendAcknowledged else { throw unfinished.resendRefusal }
                let aside = try unfinished.moveAside(unixTime: Int64(startedAt.timeIntervalSince1970))
                logger.notice("--force --resend: moved the results of a previous run that did not finish into \(outputFolder)/\(aside); sending the whole campaign again", metadata: [
                    "why": "\(unfinished.evidence)", "files": "\(unfinished.files.joined(separator: ", "))",
                    "devices_already_sent": "\(unfinished.devicesRecordedSent)",
                ])
            } else if let finished, let difference = finished.difference {
                logger.info("the output folder's finished run was another campaign (\(difference)): its results are replaced")
            }
            let removed = try lock.removeStaleResults()
            if !removed.isEmpty {
                logger.info("removed the previous run's results", metadata: ["files": "\(removed.joined(separator: ", "))"])
            }
            return .claimed(lock)
        } catch {
            let busy = error.code == .inUse || error.code == .unfinishedRun || error.code == .resendNotAcknowledged
            return .refused(failure: error.description, exit: busy ? .outputFolderBusy : .outputError)
        }
    }
}
