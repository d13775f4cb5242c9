import ArgumentParser
import PushlineRuntime

/// `--resume` and the checkpoint's settings (docs/resume.md).
struct ResumeOptions: ParsableArguments {
    @Flag(help: "Continue the run whose checkpoint.json is in the output folder (killed, crashed or stopped): lines it settled are skipped, its results files are appended to, and the summary covers the whole campaign.")
    var resume = false

    static let intervalRange = 0.0...3600.0

    @Option(help: ArgumentHelp("Most seconds between durable checkpoints (results fsynced, checkpoint.json replaced), 0.05 to 3600; 0 writes none (the run cannot be resumed).", valueName: "seconds"))
    var checkpointInterval = 2.0

    @Option(help: ArgumentHelp("Sending: the most requests handed to providers without a durable result line, 1 to 10000000: the most a kill can send twice, marked possible_duplicate on resume (default: four times the connections × streams of the providers, at least 10000).", valueName: "requests"))
    var duplicateWindow: Int?

    func validate() throws {
        if !Self.intervalRange.contains(checkpointInterval) || (checkpointInterval > 0 && checkpointInterval < 0.05) {
            throw ValidationError("--checkpoint-interval must be 0 (off) or between 0.05 and 3600 seconds; got \(checkpointInterval)")
        }
        if let duplicateWindow, !CampaignRun.duplicateWindowRange.contains(duplicateWindow) {
            throw ValidationError("--duplicate-window must be between \(CampaignRun.duplicateWindowRange.lowerBound) and \(CampaignRun.duplicateWindowRange.upperBound); got \(duplicateWindow)")
        }
        if resume && checkpointInterval == 0 {
            throw ValidationError("--resume needs checkpoints: --checkpoint-interval 0 turns them off")
        }
    }

    func apply(to run: inout CampaignRun) {
        run.resume = resume
        run.checkpointInterval = checkpointInterval == 0 ? nil : .milliseconds(Int((checkpointInterval * 1000).rounded()))
        run.duplicateWindow = duplicateWindow
    }
}
