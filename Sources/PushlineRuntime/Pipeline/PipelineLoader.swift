public import PushlineCore
public import PushlineEncoding
import Foundation
import PushlineIO

/// A pipeline file read and compiled: the campaign plus where its files are.
public struct LoadedPipeline: Sendable {
    /// The pipeline file as given.
    public var path: String
    public var campaign: Campaign
    /// The audience path, resolved against the pipeline file's folder (or `-` for stdin).
    public var audiencePath: String?
    /// The output folder, resolved against the current directory.
    public var outputPath: String
    /// The providers' credentials (loaded and checked) and lane settings: what a sending run uses
    /// (`DeliveryConfiguration.load(pipeline:)`, `RunDecision`).
    public var delivery = DeliveryConfiguration()
}

/// Why a pipeline could not be loaded; `description` lists every problem, one per line, each
/// prefixed with the file name as `file:line:column:`.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var diagnostics: [ConfigDiagnostic]

    public var description: String {
        diagnostics.map { "\(path):\($0.line > 0 ? "" : " ")\($0.description)" }.joined(separator: "\n")
    }
}

/// Reads a pipeline YAML file into a `ConfigNode` tree (keeping line and column of every value)
/// and compiles it into a `Campaign`.
///
/// The file is read up to `ConfigLimits.maxFileBytes` and composed by `YAMLComposer`, which bounds
/// depth, aliases and expanded size before any tree is walked.
public enum PipelineLoader {
    /// Reads, expands `${VAR}` in `providers:` (from `environment`), loads the providers'
    /// credentials and compiles: every problem of all three steps is reported at once, in file
    /// order. `environment`: the process's unless given (tests pass their own).
    public static func load(
        path: String, now: Int, limits: ConfigLimits = .standard,
        environment: [String: String]? = nil
    ) throws(PipelineError) -> LoadedPipeline {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let bytes = try readFile(path, limit: limits.maxFileBytes)
        let parsed = try parse(bytes: bytes, path: path, limits: limits)
        let folder = (path as NSString).deletingLastPathComponent
        let expansion = ProviderVariables.expand(parsed, environment: environment)
        let root = expansion.root
        let delivery = DeliveryConfigurationReader(folder: folder, skipped: expansion.failedPaths).read(root)
        var diagnostics = expansion.diagnostics + delivery.log.diagnostics
        var compiled: Campaign?
        do {
            compiled = try Campaign.compile(root, now: now, serviceAccountProject: delivery.serviceAccountProject)
        } catch {
            // A value whose variable is missing was reported once, by name; its schema check
            // against the unexpanded text would only repeat it.
            // Likewise a project_id "required" while the service account meant to give it failed.
            let reported = expansion.failedPaths.union(delivery.reportedPaths)
            diagnostics += error.diagnostics.filter { !reported.contains($0.path) }
        }
        guard let campaign = compiled, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw PipelineError(path: path, diagnostics: ordered(diagnostics + (compiled?.warnings ?? [])))
        }
        let audience = campaign.audience.map { $0 == "-" || $0.hasPrefix("/") ? $0 : (folder.isEmpty ? $0 : folder + "/" + $0) }
        let output = campaign.output ?? "out/\(campaign.name)"
        var loaded = LoadedPipeline(path: path, campaign: campaign, audiencePath: audience, outputPath: output)
        loaded.delivery = DeliveryConfiguration(
            configured: delivery.configured,
            sendingProblems: DeliveryConfiguration.sendingProblems(campaign: campaign, root: root, configured: Set(delivery.configured.map(\.provider)))
        )
        return loaded
    }

    /// File order (line, column), stable for equal places.
    static func ordered(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            (a.element.line, a.element.column, a.offset) < (b.element.line, b.element.column, b.offset)
        }.map(\.element)
    }

    /// Parses YAML text into a configuration tree.
    public static func parse(yaml text: String, path: String, limits: ConfigLimits = .standard) throws(PipelineError) -> ConfigNode {
        let bytes = Array(text.utf8)
        if bytes.count > limits.maxFileBytes { throw tooLarge(path, limits) }
        return try parse(bytes: bytes, path: path, limits: limits)
    }

    static func parse(bytes: [UInt8], path: String, limits: ConfigLimits) throws(PipelineError) -> ConfigNode {
        let node: ConfigNode?
        do {
            node = try YAMLComposer.compose(bytes, limits: limits)
        } catch {
            throw PipelineError(path: path, diagnostics: [error.diagnostic])
        }
        guard let node else {
            throw PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "the pipeline file is empty")])
        }
        return node
    }

    /// Reads at most `limit + 1` bytes, so a huge file or a device such as /dev/zero costs nothing.
    static func readFile(_ path: String, limit: Int) throws(PipelineError) -> [UInt8] {
        do {
            return try BoundedFile.read(path, limit: limit)
        } catch {
            if case .tooLarge = error.reason { throw tooLarge(path, ConfigLimits(maxFileBytes: limit)) }
            throw PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "cannot read the pipeline file: \(error.message)")])
        }
    }

    static func tooLarge(_ path: String, _ limits: ConfigLimits) -> PipelineError {
        PipelineError(path: path, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "the pipeline file is larger than \(limits.maxFileBytes) bytes")])
    }
}

