import Foundation
import PushlineCore
import PushlineTestSupport
@testable import PushlineTemplates

/// Compiles and renders one template in raw mode, for assertions on the text.
enum HandlebarsHarness {
    enum Outcome: Equatable {
        case rendered(String)
        case compileError(TemplateCompileError)
        case renderError(TemplateRenderError)

        var text: String? {
            if case .rendered(let text) = self { return text }
            return nil
        }
    }

    static func run(
        _ template: String, _ data: JSONValue, options: TemplateOptions = TemplateOptions(), compat: Bool = false
    ) -> Outcome {
        let compiled: HandlebarsTemplate
        do {
            compiled = try HandlebarsTemplate(compiling: template, options: options, compat: compat)
        } catch {
            return .compileError(error)
        }
        var output = RenderOutput(mode: .raw, limit: options.maxOutputBytes)
        do {
            try compiled.render(record: data, into: &output)
        } catch {
            return .renderError(error)
        }
        return .rendered(String(decoding: output.bytes, as: UTF8.self))
    }

    static func run(_ template: String, json: String = "{}", options: TemplateOptions = TemplateOptions()) -> Outcome {
        do {
            let document = try JSONDocument(parsing: json)
            return run(template, document.root, options: options)
        } catch {
            fatalError("test data is not JSON: \(error)")
        }
    }

    static func render(_ template: String, json: String = "{}", options: TemplateOptions = TemplateOptions()) -> String? {
        run(template, json: json, options: options).text
    }

    /// A spec suite file parsed with the project's own JSON reader.
    static func loadSuite(_ relativePath: String) -> JSONDocument? {
        guard let directory = SharedTestData.directory else { return nil }
        let url = directory.appendingPathComponent("testdata").appendingPathComponent(relativePath)
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try? JSONDocument(bytes: Array(data))
    }

    /// `partials` of a spec case as snippets.
    static func snippets(_ value: JSONValue?) -> [String: String]? {
        guard let value else { return [:] }
        var out: [String: String] = [:]
        for member in value.members {
            guard let name = member.key.stringValue, let text = member.value.stringValue else { return nil }
            out[name] = text
        }
        return out
    }
}
