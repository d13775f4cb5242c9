import Foundation

/// Why `--resume` cannot continue: one line each (docs/resume.md).
public struct ResumeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Where a resumed run starts: the checkpoint's watermark, counts and results files, checked
/// against the pipeline and audience given now.
public struct ResumePoint: Sendable {
    public var journal: CheckpointJournal

    /// Reads `folder`'s checkpoint for `--resume` (before the pipeline is compiled: a resume runs
    /// with the checkpoint's clock). Refuses a folder without one and a finished run's.
    /// `allowingFinished`: a finished run's journal is returned too (the run then reports it,
    /// `FinishedRun`), instead of refused.
    public static func peek(folder: String, allowingFinished: Bool = false) throws(ResumeRefusal) -> CheckpointJournal {
        let found: CheckpointJournal?
        do throws(CheckpointError) {
            found = try CheckpointJournal.read(from: folder)
        } catch {
            throw ResumeRefusal("cannot resume: \(error.description)")
        }
        guard let journal = found else {
            throw ResumeRefusal("cannot resume: no \(CheckpointJournal.fileName) in \(folder): nothing to resume (a run writes it as it goes, from a file audience)")
        }
        if journal.complete && !allowingFinished {
            throw ResumeRefusal("cannot resume: the run in \(folder) finished (see its summary.json); run without --resume to start again")
        }
        return journal
    }

    /// Loads and checks `folder`'s checkpoint against this run; the folder must be locked by the
    /// caller. Results files a stopped run renamed into place are moved back to the temporary
    /// names the checkpoint knows.
    static func load(folder: String, pipelinePath: String, audiencePath: String, sending: Bool, shard: String?, clock: Int) throws(ResumeRefusal) -> ResumePoint {
        let journal = try peek(folder: folder)
        switch RunIdentity.mismatch(journal, pipelinePath: pipelinePath, audiencePath: audiencePath, sending: sending, shard: shard) {
        case nil: break
        case .mode?:
            throw ResumeRefusal("cannot resume: the checkpoint in \(folder) is of a \(journal.mode == "send" ? "sending run" : "dry run"), and this is a \(sending ? "sending run" : "dry run")")
        case .standardInput?:
            throw ResumeRefusal("cannot resume from standard input: a resume reads the audience again from its start; pass the audience file")
        case .unreadable(let failure)?:
            throw ResumeRefusal("cannot resume: \(failure.description)")
        case .pipeline?:
            throw ResumeRefusal("cannot resume: the pipeline \(pipelinePath) changed since the checkpoint (its SHA-256 differs); a resume must run the same campaign")
        case .audience(let now)?:
            throw ResumeRefusal("cannot resume: the audience \(audiencePath) is not the one the checkpoint read (\(journal.audience.path), \(journal.audience.size) bytes; now \(now.size) bytes\(journal.audience.size == now.size ? " with other content" : ""))")
        case .shard?:
            throw ResumeRefusal("cannot resume: the checkpoint is of \(journal.shard.map { "shard \($0)" } ?? "a whole run"), and this run is \(shard.map { "shard \($0)" } ?? "a whole run")")
        }
        guard journal.clock == clock else {
            throw ResumeRefusal("cannot resume: the checkpoint's clock is \(journal.clock) and this run's is \(clock) (leave out --now, or pass the checkpoint's)")
        }
        let manager = FileManager.default
        // A run killed while it replaced the journal leaves the new one under a temporary name:
        // never read (the journal in place is the one that counts), so it is removed.
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasPrefix(CheckpointJournal.fileName + ".") && name.hasSuffix(".tmp") {
            try? manager.removeItem(atPath: folder + "/" + name)
        }
        for file in journal.files {
            let temporary = folder + "/" + file.temporaryName
            let final = folder + "/" + file.name
            if !manager.fileExists(atPath: temporary), manager.fileExists(atPath: final) {
                guard rename(final, temporary) == 0 else {
                    throw ResumeRefusal("cannot resume: cannot move \(final) back to \(file.temporaryName): \(String(cString: strerror(errno)))")
                }
            }
            guard manager.fileExists(atPath: temporary) else {
                throw ResumeRefusal("cannot resume: the results file \(file.temporaryName) the checkpoint recorded is missing from \(folder)")
            }
        }
        return ResumePoint(journal: journal)
    }
}
