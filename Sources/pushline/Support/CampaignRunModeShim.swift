import Logging
import PushlineRuntime

// MERGE NOTE (issue 8 integration, branch i8-config): DELETE THIS FILE when merging with
// i8-sink. `CampaignRun.init(…, mode:, logger:)` is the sink engineer's; this stand-in only lets
// `RunCommand` call it with `mode:` on this branch, where CampaignRun cannot send yet: a `.send`
// mode runs as a dry run here, with a warning.
extension CampaignRun {
    init(pipeline: LoadedPipeline, audiencePath: String, outputFolder: String, workers: Int? = nil, mode: RunMode, logger: Logger) {
        if case .send = mode {
            logger.warning("this build has no delivery sink yet (branch i8-config): the run is a dry run")
        }
        self.init(pipeline: pipeline, audiencePath: audiencePath, outputFolder: outputFolder, workers: workers, logger: logger)
    }
}
