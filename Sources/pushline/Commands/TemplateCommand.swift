import PushlineCommandLine
public import ArgumentParser
import PushlineCore
import PushlineIO
import PushlineRuntime
public import PushlineTemplates

struct TemplateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template",
        abstract: "Try templates outside a campaign.",
        subcommands: [TemplateRenderCommand.self]
    )
}

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

    /// Largest template file: far above any notification text, and bounded so --file /dev/zero
    /// is an error, not a hang.
    static let maxTemplateBytes = 1 << 20

    func validate() throws {
        if (template == nil) == (file == nil) { throw ValidationError("give exactly one of --template and --file") }
        if (data == nil) == (recordLine == nil) { throw ValidationError("give exactly one of --data and --record-line") }
        if recordLine != nil && audience == nil { throw ValidationError("--record-line needs --audience") }
        if let recordLine, recordLine < 1 { throw ValidationError("--record-line must be 1 or more; got \(recordLine)") }
    }

    /// Exit codes (docs/exit-codes.md): invalidPipeline the template is invalid or unreadable,
    /// usage the data is not one JSON object, renderFailed the render failed, inputError the
    /// audience line could not be read, outputError standard output could not be written.
    func run() throws {
        let source: String
        if let template {
            source = template
        } else {
            do {
                source = String(decoding: try BoundedFile.read(file ?? "", limit: Self.maxTemplateBytes), as: UTF8.self)
            } catch {
                Console.fail("cannot read the template: \(error)")
                throw ExitCode(.invalidPipeline)
            }
        }
        let compiled: any CompiledTemplate
        do {
            compiled = try TemplateCompiler.compile(source, dialect: dialect, options: TemplateOptions(strict: strict, htmlEscape: htmlEscape))
        } catch {
            Console.error("\(file ?? "template"):\(error.line):\(error.column): error: \(error.message)")
            Console.fail("the template is invalid")
            throw ExitCode(.invalidPipeline)
        }
        let bytes: [UInt8]
        if let data {
            bytes = Array(data.utf8)
        } else {
            do {
                bytes = try AudienceLineReader.line(recordLine ?? 1, of: audience ?? "")
            } catch {
                Console.fail("\(error)")
                throw ExitCode(.inputError)
            }
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(bytes: bytes)
        } catch {
            Console.fail("the data is not valid JSON: \(error)")
            throw ExitCode(.usage)
        }
        guard document.root.kind == .object else {
            Console.fail("the data must be one JSON object, like an audience line")
            throw ExitCode(.usage)
        }
        var output = RenderOutput(mode: .raw, limit: 1 << 20)
        do {
            try compiled.render(record: document.root, into: &output)
        } catch {
            Console.fail("render failed: \(error)")
            throw ExitCode(.renderFailed)
        }
        try Console.bytes(output.bytes + [0x0A])
    }
}

extension TemplateDialect: ExpressibleByArgument {}
