import PushlineCommandLine
import ArgumentParser
import PushlineRuntime
import PushlineCore

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the requests one audience line produces, for a person checking a campaign.",
        discussion: "Line numbers are 1-based and count blank lines, as in rejects.ndjson."
    )

    @OptionGroup var options: PipelineOptions

    @Option(parsing: .unconditional, help: "The audience line to render (1-based).")
    var line: Int

    @Option(help: ArgumentHelp("Audience file (default: the pipeline's `audience`).", valueName: "file"))
    var audience: String?

    @Flag(help: "Print each request as one compact JSON line, as the dry run writes it.")
    var compact = false

    func validate() throws {
        if line < 1 { throw ValidationError("--line must be 1 or more") }
    }

    func run() throws {
        let loaded = try options.load()
        guard let audiencePath = audience ?? loaded.audiencePath else {
            Console.fail("\(options.pipeline): no audience: set `audience:` in the pipeline or pass --audience")
            throw ExitCode(.invalidPipeline)
        }
        let preview: LinePreview
        do {
            preview = try LinePreview.render(pipeline: loaded, audiencePath: audiencePath, line: line)
        } catch {
            Console.fail("\(error)")
            throw ExitCode(.inputError)
        }
        if let variant = preview.variant {
            Console.error(variant == ExperimentSplit.controlName ? "variant: control (the experiment's holdout: no request)" : "variant: \(variant)")
        }
        for request in preview.requests {
            try Console.line(compact ? request : LinePreview.pretty(request))
        }
        for warning in preview.warnings {
            Console.error("warning: \(warning)")
        }
        for reject in preview.rejects {
            Console.error("reject: \(reject)")
        }
        let skipped = preview.counts.skipped.map { "\($0.value) \($0.key)" }.sorted()
        if !skipped.isEmpty { Console.error("skipped: \(skipped.joined(separator: ", "))") }
    }
}
