public import PushlineCore
import PushlineIO
public import PushlineTemplates

/// The dialects `template render` offers (the pipeline's `personalization`), named here so the
/// command line needs no module but this one.
public typealias TemplateDialect = PushlineTemplates.TemplateDialect

/// `pushline template render`: one template rendered against JSON data or one audience line,
/// outside any campaign. Each way it fails carries its exit code (docs/exit-codes.md).
public struct TemplateTrial: Sendable {
    /// The template's text, or the file to read it from.
    public enum Source: Sendable {
        case text(String)
        case file(String)
    }

    /// The data: one JSON object given as text, or line `number` of an audience file.
    public enum Input: Sendable {
        case json(String)
        case audienceLine(Int, path: String)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var exit: PushlineExit
        /// The line to print before the failure line (the template's own error, with its file,
        /// line and column), if any.
        public var detail: String?
        public var description: String
    }

    /// Largest template file: far above any notification text, and bounded so `--file
    /// /dev/zero` is an error, not a hang.
    public static let maxTemplateBytes = 1 << 20

    public var source: Source
    public var input: Input
    public var dialect: TemplateDialect
    public var strict: Bool
    public var htmlEscape: Bool

    public init(source: Source, input: Input, dialect: TemplateDialect, strict: Bool, htmlEscape: Bool) {
        self.source = source
        self.input = input
        self.dialect = dialect
        self.strict = strict
        self.htmlEscape = htmlEscape
    }

    /// The rendered bytes. Exit codes: invalidPipeline the template is invalid or unreadable,
    /// usage the data is not one JSON object, renderFailed the render failed, inputError the
    /// audience line could not be read.
    public func render() throws(Failure) -> [UInt8] {
        let text: String
        let name: String
        switch source {
        case .text(let template):
            text = template
            name = "template"
        case .file(let path):
            do {
                text = String(decoding: try BoundedFile.read(path, limit: Self.maxTemplateBytes), as: UTF8.self)
            } catch {
                throw Failure(exit: .invalidPipeline, description: "cannot read the template: \(error)")
            }
            name = path
        }
        let compiled: any CompiledTemplate
        do {
            compiled = try TemplateCompiler.compile(text, dialect: dialect, options: TemplateOptions(strict: strict, htmlEscape: htmlEscape))
        } catch {
            throw Failure(
                exit: .invalidPipeline, detail: "\(name):\(error.line):\(error.column): error: \(error.message)",
                description: "the template is invalid"
            )
        }
        let bytes: [UInt8]
        switch input {
        case .json(let json):
            bytes = Array(json.utf8)
        case .audienceLine(let number, let path):
            do {
                bytes = try AudienceLineReader.line(number, of: path)
            } catch {
                throw Failure(exit: .inputError, description: "\(error)")
            }
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(bytes: bytes)
        } catch {
            throw Failure(exit: .usage, description: "the data is not valid JSON: \(error)")
        }
        guard document.root.kind == .object else {
            throw Failure(exit: .usage, description: "the data must be one JSON object, like an audience line")
        }
        var output = RenderOutput(mode: .raw, limit: 1 << 20)
        do {
            try compiled.render(record: document.root, into: &output)
        } catch {
            throw Failure(exit: .renderFailed, description: "render failed: \(error)")
        }
        return output.bytes
    }
}
