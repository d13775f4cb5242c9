import ArgumentParser
import PushlineRuntime

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the requests one audience line produces, for a person checking a campaign.",
        discussion: "Line numbers are 1-based and count blank lines, as in rejects.ndjson."
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: "The audience line to render.")
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
            throw ValidationError("no audience: set `audience:` in the pipeline or pass --audience")
        }
        let preview: LinePreview
        do {
            preview = try LinePreview.render(pipeline: loaded, audiencePath: audiencePath, line: line)
        } catch {
            printError("\(error)")
            throw ExitCode(4)
        }
        for request in preview.requests {
            print(compact ? request : LinePreview.pretty(request))
        }
        for warning in preview.warnings {
            printError("warning: \(warning)")
        }
        for reject in preview.rejects {
            printError("reject: \(reject)")
        }
        let skipped = preview.counts.skipped.map { "\($0.value) \($0.key)" }.sorted()
        if !skipped.isEmpty { printError("skipped: \(skipped.joined(separator: ", "))") }
    }
}
