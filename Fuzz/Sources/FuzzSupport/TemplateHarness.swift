public import PushlineTemplates
import PushlineCore

/// What the Liquid and Handlebars targets do with one input.
///
/// Input: template text, a NUL byte, then a JSON record (`{}` when the rest is missing or not
/// JSON). The template is compiled lenient and strict; each compiled template renders the record
/// twice in raw mode (same result: nothing may carry over between recipients) and once escaped
/// into a JSON string, which must be valid JSON.
public enum TemplateHarness {
    /// Small enough that the fuzzer reaches the limit often.
    public static let limit = 2048

    private static let emptyRecord: JSONValue = {
        do { return try JSONDocument(bytes: Array("{}".utf8)).root } catch { finding("\(error)") }
    }()

    public static func run(_ bytes: [UInt8], dialect: TemplateDialect, snippets: [String: String]) {
        let (text, rest) = FuzzInput.split(bytes)
        let source = String(decoding: text, as: UTF8.self)
        let record = (try? JSONDocument(bytes: KnownFindings.jsonText(Array(rest))))?.root ?? emptyRecord
        for strict in [false, true] {
            let options = TemplateOptions(strict: strict, maxOutputBytes: limit, snippets: snippets)
            let template: any CompiledTemplate
            do {
                template = try TemplateCompiler.compile(source, dialect: dialect, options: options)
            } catch {
                check(error.line >= 1 && error.column >= 1, "compile error without a position: \(error)")
                continue
            }
            let first = render(template, record, mode: .raw)
            let second = render(template, record, mode: .raw)
            check(first == second, "two renders of one record differ: \(first) then \(second)")
            let json = render(template, record, mode: .jsonStringContent)
            switch (first, json) {
            case (.success(let raw), .success(let content)):
                check(raw.count <= limit, "raw render of \(raw.count) bytes is over the \(limit)-byte limit")
                let quoted = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
                if let failure = StrictJSON.validate(quoted) {
                    finding("rendered JSON string content is not valid JSON (\(failure)): \(escaped(quoted))")
                }
                if let literal = template.literalText, !KnownFindings.literalText {
                    check(Array(literal.utf8) == raw, "literalText \(escaped(Array(literal.utf8))) differs from the render \(escaped(raw))")
                }
            case (.failure(let a), .failure(let b)):
                check(a.code == b.code, "raw render fails with \(a.code), escaped with \(b.code)")
            default:
                finding("raw and escaped renders disagree: \(first) / \(json)")
            }
        }
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case success([UInt8])
        case failure(TemplateRenderError)

        var description: String {
            switch self {
            case .success(let bytes): "rendered \(escaped(bytes, limit: 120))"
            case .failure(let error): "error \(error.code): \(error)"
            }
        }
    }

    static func render(_ template: any CompiledTemplate, _ record: JSONValue, mode: RenderOutput.Mode) -> Outcome {
        var output = RenderOutput(mode: mode, limit: limit)
        do {
            try template.render(record: record, into: &output)
            return .success(output.bytes)
        } catch {
            return .failure(error)
        }
    }
}
