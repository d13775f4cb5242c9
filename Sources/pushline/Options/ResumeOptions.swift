import ArgumentParser
import PushlineRuntime

/// `--resume` and the checkpoint's settings (docs/resume.md).
struct ResumeOptions: ParsableArguments {
    @Flag(help: "Continue the run whose checkpoint.json is in the output folder (killed, crashed or stopped): lines it settled are skipped, its results files are appended to, and the summary covers the whole campaign.")
    var resume = false

    @Flag(help: "Resume when the output folder holds an unfinished run's checkpoint, else start anew: for a scheduler that retries the same command (Kubernetes, AWS Batch, Slurm --requeue).")
    var autoResume = false

    static let intervalRange = 0.0...3600.0

    @Option(parsing: .unconditional, help: ArgumentHelp("Most seconds between durable checkpoints (results fsynced, checkpoint.json replaced), 0.05 to 3600; 0 writes none (the run cannot be resumed).", valueName: "seconds"))
    var checkpointInterval = 2.0

    @Option(parsing: .unconditional, help: ArgumentHelp("Sending: the most requests handed to providers without a durable result line, 1 to 10000000: the most a kill can send twice, marked possible_duplicate on resume (default: four times the connections × streams of the providers, at least 10000).", valueName: "requests"))
    var duplicateWindow: Int?

    func validate() throws {
        if !Self.intervalRange.contains(checkpointInterval) || (checkpointInterval > 0 && checkpointInterval < 0.05) {
            throw ValidationError("--checkpoint-interval must be 0 (off) or between 0.05 and 3600 seconds; got \(checkpointInterval)")
        }
        if let duplicateWindow, !CampaignRun.duplicateWindowRange.contains(duplicateWindow) {
            throw ValidationError("--duplicate-window must be between \(CampaignRun.duplicateWindowRange.lowerBound) and \(CampaignRun.duplicateWindowRange.upperBound); got \(duplicateWindow)")
        }
        if resume && autoResume {
            throw ValidationError("--resume and --auto-resume: give one of them")
        }
        if (resume || autoResume) && checkpointInterval == 0 {
            throw ValidationError("--resume needs checkpoints: --checkpoint-interval 0 turns them off")
        }
    }

    /// Whether this run resumes: `--resume`, or `--auto-resume` with an unfinished checkpoint
    /// in `folder` (a damaged one resumes too, and is refused by name).
    func resumes(folder: String) -> Bool {
        if resume { return true }
        guard autoResume else { return false }
        do {
            return try CheckpointJournal.read(from: folder).map { !$0.complete } ?? false
        } catch {
            return true
        }
    }

    func apply(to run: inout CampaignRun, resuming: Bool) {
        run.resume = resuming
        run.checkpointInterval = checkpointInterval == 0 ? nil : .milliseconds(Int((checkpointInterval * 1000).rounded()))
        run.duplicateWindow = duplicateWindow
    }
}
