public import PushlineCore
public import PushlineEncoding
import Foundation
import Yams

/// A pipeline file read and compiled: the campaign plus where its files are.
public struct LoadedPipeline: Sendable {
    /// The pipeline file as given.
    public var path: String
    public var campaign: Campaign
    /// The audience path, resolved against the pipeline file's folder (or `-` for stdin).
    public var audiencePath: String?
    /// The output folder, resolved against the current directory.
    public var outputPath: String
}

/// Why a pipeline could not be loaded; `description` lists every problem, one per line, each
/// prefixed with the file name as `file:line:column:`.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var diagnostics: [ConfigDiagnostic]

    public var description: String {
        diagnostics.map { "\(path):\($0.description)" }.joined(separator: "\n")
    }
}

/// Reads a pipeline YAML file into a `ConfigNode` tree (keeping line and column of every value)
/// and compiles it into a `Campaign`.
public enum PipelineLoader {
    public static func load(path: String, now: Int) throws(PipelineError) -> LoadedPipeline {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "cannot read the pipeline file: \(error.localizedDescription)")])
        }
        let root = try parse(yaml: text, path: path)
        let campaign: Campaign
        do {
            campaign = try Campaign.compile(root, now: now)
        } catch {
            throw PipelineError(path: path, diagnostics: error.diagnostics)
        }
        let folder = (path as NSString).deletingLastPathComponent
        let audience = campaign.audience.map { $0 == "-" || $0.hasPrefix("/") ? $0 : (folder.isEmpty ? $0 : folder + "/" + $0) }
        let output = campaign.output ?? "out/\(campaign.name)"
        return LoadedPipeline(path: path, campaign: campaign, audiencePath: audience, outputPath: output)
    }

    /// Parses YAML text into a configuration tree.
    public static func parse(yaml text: String, path: String) throws(PipelineError) -> ConfigNode {
        let node: Yams.Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw PipelineError(path: path, diagnostics: [yamlDiagnostic(error)])
        } catch {
            throw PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "not valid YAML: \(error)")])
        }
        guard let node else {
            throw PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "the pipeline file is empty")])
        }
        return convert(node)
    }

    static func convert(_ node: Yams.Node) -> ConfigNode {
        let line = (node.mark?.line ?? 0)
        let column = (node.mark?.column ?? 0)
        switch node {
        case .scalar(let scalar):
            return ConfigNode(scalarValue(scalar, tag: node.tag), line: line, column: column)
        case .mapping(let mapping):
            let entries = mapping.map { (key: $0.key.string ?? String(describing: $0.key), node: convert($0.value)) }
            return ConfigNode(.mapping(entries), line: line, column: column)
        case .sequence(let sequence):
            return ConfigNode(.sequence(sequence.map(convert)), line: line, column: column)
        case .alias:
            return ConfigNode(.null, line: line, column: column)
        }
    }

    /// YAML 1.2 core schema for plain scalars; quoted scalars are always strings.
    static func scalarValue(_ scalar: Yams.Node.Scalar, tag: Yams.Tag) -> ConfigNode.Value {
        let text = scalar.string
        guard scalar.style == .plain else { return .string(text) }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let int = Int(text) { return .int(int) }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let double = Double(text), double.isFinite,
           text.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true {
            return .double(double)
        }
        return .string(text)
    }

    static func yamlDiagnostic(_ error: YamlError) -> ConfigDiagnostic {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _):
            var diagnostic = ConfigDiagnostic(.error, path: ConfigPath(), "not valid YAML: \(problem)\(context.map { " \($0.text)" } ?? "")")
            diagnostic.line = mark.line
            diagnostic.column = mark.column
            return diagnostic
        default:
            return ConfigDiagnostic(.error, path: ConfigPath(), "not valid YAML: \(error)")
        }
    }
}
