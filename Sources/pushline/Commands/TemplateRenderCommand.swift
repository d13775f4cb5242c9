import PushlineCommandLine
public import ArgumentParser
import PushlineRuntime

struct TemplateRenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a template against JSON data or an audience line; errors point at line and column."
    )

    @Option(help: "liquid or handlebars.")
    var dialect: TemplateDialect = .liquid

    @Option(help: "The template text.")
    var template: String?

    @Option(help: ArgumentHelp("Read the template from a file.", valueName: "file"))
    var file: String?

    @Option(help: ArgumentHelp("The data, as one JSON object.", valueName: "json"))
    var data: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Use this line of --audience as the data.", valueName: "n"))
    var recordLine: Int?

    @Option(help: ArgumentHelp("Audience file for --record-line.", valueName: "file"))
    var audience: String?

    @Flag(help: "A missing variable or a failing filter is an error.")
    var strict = false

    @Flag(help: "HTML-escape {{ }} output (Handlebars spec behaviour).")
    var htmlEscape = false

    func validate() throws {
        if (template == nil) == (file == nil) { throw ValidationError("give exactly one of --template and --file") }
        if (data == nil) == (recordLine == nil) { throw ValidationError("give exactly one of --data and --record-line") }
        if recordLine != nil && audience == nil { throw ValidationError("--record-line needs --audience") }
        if let recordLine, recordLine < 1 { throw ValidationError("--record-line must be 1 or more; got \(recordLine)") }
    }

    /// Exit codes: `TemplateTrial.render`'s, and outputError when standard output cannot be written.
    func run() throws {
        let trial = TemplateTrial(
            source: template.map(TemplateTrial.Source.text) ?? .file(file ?? ""),
            input: data.map(TemplateTrial.Input.json) ?? .audienceLine(recordLine ?? 1, path: audience ?? ""),
            dialect: dialect, strict: strict, htmlEscape: htmlEscape
        )
        let rendered: [UInt8]
        do {
            rendered = try trial.render()
        } catch {
            if let detail = error.detail { Console.error(detail) }
            Console.fail(error.description)
            throw ExitCode(error.exit)
        }
        try Console.bytes(rendered + [0x0A])
    }
}

extension TemplateDialect: ExpressibleByArgument {}
