public import PushlineCore
import PushlineIO
import Foundation
import Crypto

/// A run's resume point, `checkpoint.json` in its output folder (docs/resume.md): every input
/// line through `settledThroughLine` has its outcome, `counts` are the counts of exactly those
/// lines, and (sending) no request of a line after `horizonLine` has been handed to a provider.
///
/// Replaced whole (temporary file, rename; fsynced with the results at each checkpoint
/// interval), so a killed run leaves the previous journal or the new one, never a mix. The body
/// is Codable (every field of `RunCounts` round-trips without a hand-kept list) and the file
/// carries the SHA-256 of the body's bytes: a torn or edited journal is refused, not trusted.
public struct CheckpointJournal: Sendable, Equatable, Codable {
    public static let fileName = "checkpoint.json"
    /// Bumped when a field's meaning changes: a journal of another version is refused.
    public static let formatVersion = 1
    /// A journal larger than this is not one Pushline wrote.
    static let sizeLimit = 1 << 20

    /// One results file as the checkpoint left it: the temporary file the run writes and how
    /// many bytes of it (on disk: compressed for `.gz`) the checkpoint accounts for.
    public struct FileMark: Sendable, Equatable, Codable {
        /// The final name (`sent.ndjson`, `requests-fcm.ndjson.gz`).
        public var name: String
        /// The temporary file's name in the folder (`sent.ndjson.<pid>-<token>.tmp`).
        public var temporaryName: String
        public var bytes: Int
        /// A resume cuts the file at `bytes` (its content follows input order: dry-run requests,
        /// rejects); otherwise it keeps every whole line (sending results, in completion order).
        public var cutAtMark: Bool
    }

    /// What the audience was: its path, size, and a SHA-256 of its first and last bytes
    /// (`RunIdentity`).
    public struct AudienceIdentity: Sendable, Equatable, Codable {
        public var path: String
        public var size: Int
        public var sampleSHA256: String
    }

    /// `dry_run` or `send`.
    public var mode: String
    /// The run finished (its `summary.json` is the record): nothing to resume.
    public var complete = false
    /// The finished run's `status` (`completed_with_rejects`, …), set with `complete`: a rerun of
    /// its command reports it and exits with its code (`FinishedRun`). Journals written before
    /// this field have none; the summary's status is read instead.
    public var finishedStatus: String?
    public var settledThroughLine: Int
    /// Sending: no request of a later line reached a lane (the highest of `horizonLines`).
    public var horizonLine: Int
    /// Sending, per provider: no request of a later line reached its lane. On resume, that
    /// provider's devices of lines after the watermark through here with no result line are
    /// sent again, marked `possible_duplicate`.
    public var horizonLines: [Provider: Int] = [:]
    public var counts: RunCounts
    public var files: [FileMark]
    /// SHA-256 (hex) of the pipeline file's bytes.
    public var pipelineSHA256: String
    public var audience: AudienceIdentity
    /// The run's clock (UNIX seconds): a resume compiles the campaign with the same one, so
    /// expiries and quiet hours come out as the first run's did.
    public var clock: Int
    /// `I/N` for a shard, nil for a whole run.
    public var shard: String?
    /// Runs that contributed (1 for the first; each resume adds one).
    public var runs: Int
    /// When the first run started (UTC, ISO 8601).
    public var firstStartedAt: String
    /// When this journal was written (UTC, ISO 8601), for people.
    public var writtenAt: String
    /// The Linux boot the run's wire logs (`wire-<provider>.log`) were all written in: they were
    /// never fsynced, so after a reboot (a power cut, a kernel crash) they may miss records and a
    /// resume marks by the horizons instead. Nil once a resume ran in another boot, and in
    /// journals from before the wire logs.
    public var wireLogBoot: String?

    public func mark(of name: String) -> FileMark? { files.first { $0.name == name } }
}

/// Why a checkpoint could not be written or read.
public struct CheckpointError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "checkpoint \(path): \(reason)" }
}

extension CheckpointJournal {
    /// Replaces `folder`'s journal: a temporary file renamed over it (`OutputFile`), and with
    /// `sync` the file and the folder fsynced first.
    public func write(to folder: String, sync: Bool) throws(CheckpointError) {
        try write(to: folder, sync: sync, encoder: Self.makeEncoder())
    }

    /// As `write(to:sync:)`, with an encoder the caller keeps (`RunCheckpointer`).
    func write(to folder: String, sync: Bool, encoder: JSONEncoder) throws(CheckpointError) {
        let path = folder + "/" + Self.fileName
        let body: Data
        do {
            body = try encoder.encode(self)
        } catch {
            throw CheckpointError(path: path, reason: "cannot encode: \(error)")
        }
        var bytes = Array(#"{"version":\#(Self.formatVersion),"sha256":""#.utf8)
        bytes += Array(Self.digest(body).utf8)
        bytes += Array(#"","journal":"#.utf8)
        bytes += body
        bytes += Array("}\n".utf8)
        do throws(OutputFileError) {
            var file = try OutputFile(path: path, options: .init(bufferSize: max(bytes.count, 1), syncOnClose: sync))
            try file.write(bytes)
            try file.close()
        } catch {
            throw CheckpointError(path: path, reason: error.description)
        }
    }

    /// The encoder of the journal's body: sorted keys, so equal journals are equal bytes.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// The journal in `folder`, nil when there is none.
    public static func read(from folder: String) throws(CheckpointError) -> CheckpointJournal? {
        let path = folder + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: [UInt8]
        do throws(BoundedFile.ReadError) {
            bytes = try BoundedFile.read(path, limit: sizeLimit)
        } catch {
            throw CheckpointError(path: path, reason: error.message)
        }
        return try decode(bytes, path: path)
    }

    /// Parses a journal file: the version, then the SHA-256 of the body, then the body.
    public static func decode(_ bytes: [UInt8], path: String) throws(CheckpointError) -> CheckpointJournal {
        func damaged(_ why: String) -> CheckpointError {
            CheckpointError(path: path, reason: "damaged (\(why)): it cannot be trusted to resume from")
        }
        guard let document = try? JSONDocument(bytes: bytes, maxDepth: 32) else { throw damaged("not JSON") }
        let root = document.root
        guard root.kind == .object, let version = root["version"]?.int64Value else { throw damaged("no version") }
        guard version == Int64(formatVersion) else {
            throw CheckpointError(path: path, reason: "format version \(version); this pushline reads version \(formatVersion)")
        }
        guard let digest = root["sha256"]?.stringValue, let body = root["journal"], body.kind == .object else {
            throw damaged("no sha256 or journal")
        }
        let bodyBytes = body.withRawBytes { Data($0) }
        guard digest == Self.digest(bodyBytes) else { throw damaged("SHA-256 mismatch") }
        // Counts are added to as the run goes on: a number no run could reach (an edited journal
        // with its digest recomputed) would overflow there, so it is refused here.
        guard let tree = try? JSONSerialization.jsonObject(with: bodyBytes), Self.numbersAreCounts(tree) else {
            throw damaged("a number is not a count from 0 to 2^48")
        }
        let journal: CheckpointJournal
        do {
            journal = try JSONDecoder().decode(CheckpointJournal.self, from: bodyBytes)
        } catch {
            throw damaged("\(error)")
        }
        // Names only: a journal never points outside its folder, nor at a file that is not a result.
        for file in journal.files {
            guard !file.name.contains("/"), !file.temporaryName.contains("/"), OutputFolderLock.isResultName(file.name),
                  OutputFolderLock.isResultName(file.temporaryName), file.temporaryName.hasPrefix(file.name + "."), file.bytes >= 0
            else { throw damaged("file \(file.name) is not a results file of this folder") }
        }
        guard journal.settledThroughLine >= 0, journal.horizonLine >= 0, journal.horizonLines.values.allSatisfy({ $0 >= 0 }), journal.runs >= 1 else { throw damaged("negative line") }
        return journal
    }

    /// Every number in `tree` is a whole number from 0 to 2^48.
    static func numbersAreCounts(_ tree: Any, depth: Int = 0) -> Bool {
        guard depth < 16 else { return false }
        switch tree {
        case let object as [String: Any]: return object.values.allSatisfy { numbersAreCounts($0, depth: depth + 1) }
        case let array as [Any]: return array.allSatisfy { numbersAreCounts($0, depth: depth + 1) }
        case let number as NSNumber:
            // true and false come as 1 and 0: counts too, harmlessly.
            let value = number.doubleValue
            return value >= 0 && value <= Double(1 << 48) && value.rounded() == value
        default: return true
        }
    }

    static func digest(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
