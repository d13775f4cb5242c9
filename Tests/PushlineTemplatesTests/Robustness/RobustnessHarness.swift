import PushlineCore
@testable import PushlineTemplates

/// Compiles and renders one template in either dialect, returning what happened instead of
/// throwing, so a test states the exact outcome (text, compile error, render error).
enum Robust {
    enum Outcome: Equatable {
        case rendered(String)
        case compileError(TemplateCompileError)
        case renderError(TemplateRenderError)

        var code: String? {
            if case .renderError(let error) = self { return error.code }
            return nil
        }

        var message: String {
            switch self {
            case .rendered(let text): "rendered: \(text.prefix(200))"
            case .compileError(let error): error.description
            case .renderError(let error): error.description
            }
        }

        var compileError: TemplateCompileError? {
            if case .compileError(let error) = self { return error }
            return nil
        }
    }

    static func liquid(_ template: String, _ json: String = "{}", options: TemplateOptions = TemplateOptions()) -> Outcome {
        run(template, json, dialect: .liquid, options: options)
    }

    static func handlebars(_ template: String, _ json: String = "{}", options: TemplateOptions = TemplateOptions()) -> Outcome {
        run(template, json, dialect: .handlebars, options: options)
    }

    static func run(_ template: String, _ json: String, dialect: TemplateDialect, options: TemplateOptions) -> Outcome {
        let compiled: any CompiledTemplate
        do {
            compiled = try TemplateCompiler.compile(template, dialect: dialect, options: options)
        } catch {
            return .compileError(error)
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: json)
        } catch {
            fatalError("test data is not JSON: \(error)")
        }
        var output = RenderOutput(mode: .raw, limit: options.maxOutputBytes)
        do {
            try compiled.render(record: document.root, into: &output)
        } catch {
            return .renderError(error)
        }
        return .rendered(String(decoding: output.bytes, as: UTF8.self))
    }

    /// The record `{"x": value}` for an integer written in JSON.
    static func x(_ value: Int) -> String { #"{"x":\#(value)}"# }
}
