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
    /// The clock the campaign was compiled with (UNIX seconds): a checkpoint records it, and a
    /// resume compiles with the same.
    public var clock = 0
}

/// Why a pipeline could not be loaded; `description` lists every problem, one per line, each
/// prefixed with the file name as `file:line:column:`.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var diagnostics: [ConfigDiagnostic]

    public var description: String {
        diagnostics.map { "\($0.file ?? path):\($0.line > 0 ? "" : " ")\($0.description)" }.joined(separator: "\n")
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
    /// `providersPath`: a YAML file whose `providers:` block replaces the pipeline's (credentials
    /// kept apart from the campaign; `pushline-emulator` writes one). Its relative paths are
    /// relative to it, and diagnostics under `providers` name it.
    public static func load(
        path: String, now: Int, limits: ConfigLimits = .standard,
        environment: [String: String]? = nil, providersPath: String? = nil
    ) throws(PipelineError) -> LoadedPipeline {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let bytes = try readFile(path, limit: limits.maxFileBytes)
        var parsed = try parse(bytes: bytes, path: path, limits: limits)
        var folder = (path as NSString).deletingLastPathComponent
        if let providersPath {
            parsed = try replacingProviders(of: parsed, with: providersPath, limits: limits)
            folder = (providersPath as NSString).deletingLastPathComponent
        }
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
        if let providersPath {
            for i in diagnostics.indices where isUnderProviders(diagnostics[i].path) { diagnostics[i].file = providersPath }
        }
        guard let campaign = compiled, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw PipelineError(path: path, diagnostics: ordered(diagnostics + (compiled?.warnings ?? [])))
        }
        let pipelineFolder = (path as NSString).deletingLastPathComponent
        let audience = campaign.audience.map { $0 == "-" || $0.hasPrefix("/") ? $0 : (pipelineFolder.isEmpty ? $0 : pipelineFolder + "/" + $0) }
        let output = campaign.output ?? "out/\(campaign.name)"
        var loaded = LoadedPipeline(path: path, campaign: campaign, audiencePath: audience, outputPath: output)
        loaded.clock = now
        loaded.delivery = DeliveryConfiguration(
            configured: delivery.configured,
            sendingProblems: DeliveryConfiguration.sendingProblems(campaign: campaign, root: root, configured: delivery.configured)
        )
        return loaded
    }

    /// The pipeline with its `providers:` replaced by the one of the file at `providersPath`, which
    /// must hold that one key.
    static func replacingProviders(of pipeline: ConfigNode, with providersPath: String, limits: ConfigLimits) throws(PipelineError) -> ConfigNode {
        let document = try parse(bytes: readFile(providersPath, limit: limits.maxFileBytes), path: providersPath, limits: limits)
        guard let entries = document.mappingEntries, let providers = document["providers"] else {
            throw PipelineError(path: providersPath, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(), "a providers file holds one key, `providers:` (as `pushline-emulator` writes it)", at: document)])
        }
        if let other = entries.first(where: { $0.key != "providers" }) {
            throw PipelineError(path: providersPath, diagnostics: [ConfigDiagnostic(.error, path: ConfigPath(other.key), "a providers file holds only `providers:`; the campaign's other keys belong in the pipeline file", at: other.node)])
        }
        guard var pipelineEntries = pipeline.mappingEntries else { return pipeline }
        if let i = pipelineEntries.firstIndex(where: { $0.key == "providers" }) {
            pipelineEntries[i].node = providers
        } else {
            pipelineEntries.append((key: "providers", node: providers))
        }
        var replaced = pipeline
        replaced.value = .mapping(pipelineEntries)
        return replaced
    }

    static func isUnderProviders(_ path: String) -> Bool {
        path == "providers" || path.hasPrefix("providers.") || path.hasPrefix("providers[")
    }

    /// File order (line, column), stable for equal places; a providers file's after the pipeline's.
    static func ordered(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            (a.element.file == nil ? 0 : 1, a.element.line, a.element.column, a.offset)
                < (b.element.file == nil ? 0 : 1, b.element.line, b.element.column, b.offset)
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

