import PushlineCommandLine
import ArgumentParser
import Foundation
import PushlineRuntime

/// Options every command that reads a pipeline file shares.
struct PipelineOptions: ParsableArguments {
    /// The latest `--now`: 9999-12-31T23:59:59Z. Relative expiries are added to the clock; with
    /// the clock bounded here (and expiries bounded by the schema) the sum cannot overflow.
    static let latestClock = 253_402_300_799

    @Argument(help: "The pipeline file (YAML), e.g. pipelines/demo.yaml.")
    var pipeline: String

    @Option(parsing: .unconditional, help: ArgumentHelp("The run's clock as UNIX seconds (0 to 253402300799, i.e. up to the year 9999), from which relative expiries count (default: now). Fix it to make dry runs reproducible.", valueName: "seconds"))
    var now: Int?

    @Option(help: ArgumentHelp("A YAML file whose `providers:` block replaces the pipeline's: credentials kept apart from the campaign (`pushline-emulator` writes one into its state folder). Its relative paths are relative to it.", valueName: "file"))
    var providers: String?

    func validate() throws {
        if providers?.isEmpty == true { throw ValidationError("--providers must not be empty") }
        if let now, !(0...Self.latestClock).contains(now) {
            throw ValidationError("--now must be between 0 and \(Self.latestClock) (UNIX seconds up to the year 9999); got \(now)")
        }
    }

    var clock: Int { now ?? Int(Date().timeIntervalSince1970) }

    /// Loads and compiles the pipeline, or prints every problem and exits `invalidPipeline`.
    /// `warn`: print the campaign's warnings (a resume loads twice and warns once).
    func load(now: Int? = nil, warn: Bool = true) throws -> LoadedPipeline {
        do {
            let loaded = try PipelineLoader.load(path: pipeline, now: now ?? clock, providersPath: providers)
            for warning in loaded.campaign.warnings where warn {
                Console.error("\(pipeline):\(warning)")
            }
            return loaded
        } catch {
            reportInvalid(error)
            throw ExitCode(.invalidPipeline)
        }
    }

    /// Prints every diagnostic and the one `pushline: error:` line (the caller exits `invalidPipeline`).
    /// `purpose`: what the pipeline is invalid for, when only sending needs it.
    func reportInvalid(_ error: PipelineError, while purpose: String? = nil) {
        Console.error(error.description)
        let count = error.diagnostics.filter { $0.severity == .error }.count
        Console.fail("\(pipeline): invalid pipeline\(purpose.map { " " + $0 } ?? "") (\(count) error\(count == 1 ? "" : "s")); nothing was read")
    }
}
