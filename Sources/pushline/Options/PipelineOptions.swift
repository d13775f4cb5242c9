import ArgumentParser
import Foundation
import PushlineRuntime

/// Options every command that reads a pipeline file shares.
struct PipelineOptions: ParsableArguments {
    @Argument(help: "The pipeline file (YAML), e.g. pipelines/demo.yaml.")
    var pipeline: String

    @Option(help: ArgumentHelp("The run's clock as UNIX seconds, from which relative expiries count (default: now). Fix it to make dry runs reproducible.", valueName: "seconds"))
    var now: Int?

    var clock: Int { now ?? Int(Date().timeIntervalSince1970) }

    /// Loads and compiles the pipeline, or prints every problem and exits with code 2.
    func load() throws -> LoadedPipeline {
        do {
            let loaded = try PipelineLoader.load(path: pipeline, now: clock)
            for warning in loaded.campaign.warnings {
                printError("\(pipeline):\(warning)")
            }
            return loaded
        } catch {
            printError(error.description)
            printError("\(pipeline): invalid pipeline (\(error.diagnostics.filter { $0.severity == .error }.count) errors); nothing was read")
            throw ExitCode(RunStatus.invalidPipelineExitCode)
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
