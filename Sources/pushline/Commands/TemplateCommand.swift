public import ArgumentParser
import Foundation
import PushlineCore
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

    @Option(help: ArgumentHelp("Use this line of --audience as the data.", valueName: "n"))
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
    }

    func run() throws {
        let source: String
        if let template { source = template } else { source = try String(contentsOfFile: file!, encoding: .utf8) }
        let compiled: any CompiledTemplate
        do {
            compiled = try TemplateCompiler.compile(source, dialect: dialect, options: TemplateOptions(strict: strict, htmlEscape: htmlEscape))
        } catch {
            printError("\(file ?? "template"):\(error.line):\(error.column): \(error.message)")
            throw ExitCode(2)
        }
        let bytes: [UInt8]
        if let data {
            bytes = Array(data.utf8)
        } else {
            bytes = try AudienceLineReader.line(recordLine!, of: audience!)
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(bytes: bytes)
        } catch {
            printError("data: \(error)")
            throw ExitCode(2)
        }
        var output = RenderOutput(mode: .raw, limit: 1 << 20)
        do {
            try compiled.render(record: document.root, into: &output)
        } catch {
            printError("render failed: \(error)")
            throw ExitCode(3)
        }
        FileHandle.standardOutput.write(Data(output.bytes + [0x0A]))
    }
}

extension TemplateDialect: ExpressibleByArgument {}
