public import ArgumentParser
public import Logging
import PushlineRuntime

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a campaign over its audience (a dry run writes the requests to files).",
        discussion: """
        Validates the pipeline first and reads nothing if it is invalid. Writes, in the output folder:
        requests-<provider>.ndjson[.gz] (dry run), rejects.ndjson and summary.json.
        Dry run is the default while no provider credentials are configured; sending is not
        available in this version.
        """
    )

    @OptionGroup var options: PipelineOptions

    @Flag(help: "Write the requests to files instead of sending them.")
    var dryRun = false

    @Option(help: ArgumentHelp("Output folder (default: the pipeline's `output`, else out/<name>).", valueName: "dir"))
    var output: String?

    @Option(help: ArgumentHelp("Audience file, .ndjson or .ndjson.gz, or - for standard input (default: the pipeline's `audience`).", valueName: "file"))
    var audience: String?

    static let maxWorkers = CampaignRun.workerRange.upperBound

    @Option(help: "Encode workers, 1 to 256 (default: one per core).")
    var workers: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if output?.isEmpty == true { throw ValidationError("--output must not be empty") }
        if audience?.isEmpty == true { throw ValidationError("--audience must not be empty (use - for standard input)") }
        if let workers, !(1...Self.maxWorkers).contains(workers) {
            throw ValidationError("--workers must be between 1 and \(Self.maxWorkers); got \(workers)")
        }
    }

    func run() async throws {
        let loaded = try options.load()
        if loaded.campaign.hasCredentials && !dryRun {
            Console.fail("sending to providers is not available in this version: run with --dry-run")
            throw ExitCode(RunStatus.invalidPipelineExitCode)
        }
        guard let audiencePath = audience ?? loaded.audiencePath else {
            Console.fail("\(options.pipeline): no audience: set `audience:` in the pipeline or pass --audience")
            throw ExitCode(RunStatus.invalidPipelineExitCode)
        }
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let run = CampaignRun(
            pipeline: loaded, audiencePath: audiencePath, outputFolder: output ?? loaded.outputPath,
            workers: workers, logger: Logger(label: "pushline")
        )
        let report = await run.run()
        if let failure = report.failure {
            Console.fail(failure)
        } else if let error = report.source.error {
            Console.fail("the audience could not be read: \(error.description) (the lines before the error were processed and written)")
        }
        if report.status != .completed { throw ExitCode(report.status.exitCode) }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
