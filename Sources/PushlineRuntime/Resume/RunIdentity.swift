import Crypto
import Foundation
import PushlineCore

/// What a checkpoint checks before a resume: the pipeline file's bytes (SHA-256 of the whole
/// file) and the audience's identity (path, size, and a SHA-256 of its first 4 MiB and last
/// 64 KiB). Hashing a multi-GB audience whole would cost seconds at every start; its ends catch
/// a file replaced by another (a gzip file's last 8 bytes are the CRC-32 and length of all its
/// content), and the size catches one appended to.
enum RunIdentity {
    static let headBytes = 4 << 20
    static let tailBytes = 64 << 10

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func pipelineSHA256(_ path: String) throws(Failure) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read the pipeline \(path) to checksum it")
        }
        return hex(SHA256.hash(data: data))
    }

    static func audience(_ path: String) throws(Failure) -> CheckpointJournal.AudienceIdentity {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(description: "cannot open the audience \(path) to checksum it")
        }
        defer { try? handle.close() }
        do {
            let size = Int(try handle.seekToEnd())
            var hasher = SHA256()
            try handle.seek(toOffset: 0)
            let head = try handle.read(upToCount: min(size, headBytes)) ?? Data()
            hasher.update(data: head)
            let tailStart = max(head.count, size - tailBytes)
            try handle.seek(toOffset: UInt64(tailStart))
            hasher.update(data: try handle.read(upToCount: size - tailStart) ?? Data())
            return .init(path: path, size: size, sampleSHA256: hex(hasher.finalize()))
        } catch {
            throw Failure(description: "cannot read the audience \(path) to checksum it: \(error)")
        }
    }

    /// How a run starting now differs from the campaign a journal recorded, nil when it is the
    /// same: mode, standard input, the pipeline's bytes, the audience's sample, the shard (in this
    /// order). The clock is left to the caller: a resume compares it, a rerun does not.
    enum Mismatch {
        case mode
        case standardInput
        case unreadable(Failure)
        case pipeline
        case audience(CheckpointJournal.AudienceIdentity)
        case shard
    }

    static func mismatch(_ journal: CheckpointJournal, pipelinePath: String, audiencePath: String, sending: Bool, shard: String?) -> Mismatch? {
        guard journal.mode == (sending ? "send" : "dry_run") else { return .mode }
        guard audiencePath != "-" else { return .standardInput }
        do throws(Failure) {
            if try pipelineSHA256(pipelinePath) != journal.pipelineSHA256 { return .pipeline }
            let now = try audience(audiencePath)
            if now.size != journal.audience.size || now.sampleSHA256 != journal.audience.sampleSHA256 { return .audience(now) }
        } catch {
            return .unreadable(error)
        }
        return journal.shard == shard ? nil : .shard
    }

    /// This boot of the machine (Linux's `boot_id`), nil where the system has none.
    static func bootID() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    private static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
