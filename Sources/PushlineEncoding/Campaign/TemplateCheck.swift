import PushlineCore
import PushlineTemplates

/// Compiles every templated string of a pipeline's `notification` and `snippets`, only to report
/// the ones that do not compile. Used when the schema already failed, so that template errors
/// are listed together with the others instead of after the next attempt.
enum TemplateCheck {
    static func collect(in root: ConfigNode, into log: inout DiagnosticLog) {
        let dialect = root["personalization"]?.stringValue.flatMap(TemplateDialect.init(rawValue:)) ?? .liquid
        var snippets: [String: String] = [:]
        for (key, value) in root["snippets"]?.mappingEntries ?? [] { snippets[key] = value.stringValue }
        let options = TemplateOptions(snippets: snippets)
        for key in ["notification", "snippets"] {
            guard let node = root[key] else { continue }
            walk(node, ConfigPath(key), dialect: dialect, options: options, log: &log)
        }
    }

    private static func walk(_ node: ConfigNode, _ path: ConfigPath, dialect: TemplateDialect, options: TemplateOptions, log: inout DiagnosticLog) {
        switch node.value {
        case .string(let text) where isTemplated(text):
            do {
                _ = try TemplateCompiler.compile(text, dialect: dialect, options: options)
            } catch {
                log.error(path, "\(dialect.rawValue) template does not compile: \(error.description)", at: node)
            }
        case .mapping(let entries):
            for (key, child) in entries { walk(child, path / key, dialect: dialect, options: options, log: &log) }
        case .sequence(let elements):
            for (i, child) in elements.enumerated() { walk(child, path.appending(index: i), dialect: dialect, options: options, log: &log) }
        default:
            break
        }
    }
}
