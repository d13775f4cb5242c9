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
    public static func load(path: String, now: Int, limits: ConfigLimits = .standard) throws(PipelineError) -> LoadedPipeline {
        let bytes = try readFile(path, limit: limits.maxFileBytes)
        let root = try parse(bytes: bytes, path: path, limits: limits)
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

