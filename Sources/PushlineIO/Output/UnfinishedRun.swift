import PushlineCore

/// The results a previous sending run left in an output folder without finishing: the only
/// record of which devices it notified, so a new run must not delete them (docs/output.md,
/// "A run that did not finish").
///
/// The rule, applied to the regular files directly in the folder whose names are results
/// (`OutputFolderLock.isResultName`): the previous run did not finish when at least one of them
/// is a sending result (`sent.ndjson`, `invalid-tokens.ndjson`, `failed.ndjson`,
/// `unsent.ndjson`, under its final or a temporary name) and
/// - a temporary result file is left (`<result>.<pid>-<token>.tmp`: a writer that never
///   closed, i.e. the run was killed or crashed), or
/// - there is no `summary.json` (the summary is written last), or it is not a JSON object with
///   a `status` string, or
/// - its status is `stopped` (stopped by a signal: a resume continues from it).
///
/// Anything else is finished and replaced as before: a summary with any other status and no
/// temporary file, or a dry run's files alone (a preview of requests, not a record of sends).
///
/// Look only while holding the folder's lock: another run's files in progress are never
/// mistaken for a killed run's.
public struct UnfinishedRun: Sendable, Equatable {
    /// What shows that the run did not finish.
    public enum Evidence: Sendable, Equatable, CustomStringConvertible {
        /// Temporary files: the run was killed (or crashed) while writing them.
        case temporaryFiles
        /// Results without a `summary.json`.
        case noSummary
        /// A `summary.json` that is not a JSON object with a `status` string.
        case unreadableSummary
        /// `summary.json` says `stopped`.
        case stopped

        public var description: String {
            switch self {
            case .temporaryFiles: "temporary files left: it was killed or crashed while writing them"
            case .noSummary: "no summary.json"
            case .unreadableSummary: "its summary.json cannot be read"
            case .stopped: "stopped by a signal: summary.json status stopped"
            }
        }
    }

    public let folder: String
    /// Every result file of the previous run (final and temporary names, summary.json included),
    /// sorted: what is kept.
    public let files: [String]
    public let evidence: Evidence

    /// Subfolders the results are moved into: `interrupted-20260102T030405Z`.
    public static let asideFolderPrefix = "interrupted-"
    /// A summary larger than this is not one Pushline wrote.
    static let summaryLimit = 1 << 20

    /// The unfinished run in the folder `lock` holds, or nil (no results, or a finished run's).
    public static func find(in lock: OutputFolderLock) throws(OutputFolderError) -> UnfinishedRun? {
        let folder = lock.folder
        let names: [String]
        switch POSIX.directoryEntries(folder) {
        case .success(let entries): names = entries.filter(OutputFolderLock.isResultName).sorted()
        case .failure(let error): throw .init(folder, .cannotClean(name: ".", error.description))
        }
        var files: [String] = []
        for name in names {
            switch POSIX.entryKind(folder + "/" + name) {
            case .success(nil): continue
            case .success(.regular?): files.append(name)
            case .success(let kind?): throw .init(folder, .foreignEntry(name: name, kind: kind.name))
            case .failure(let error): throw .init(folder, .cannotClean(name: name, error.description))
            }
        }
        let sending = files.contains { name in
            OutputFolderLock.resultName(of: name).map { OutputFolderLock.sendingResultNames.contains($0) } ?? false
        }
        guard sending else { return nil }
        let evidence: Evidence
        if files.contains(where: { $0.hasSuffix(".tmp") }) {
            evidence = .temporaryFiles
        } else if !files.contains("summary.json") {
            evidence = .noSummary
        } else {
            switch summaryStatus(folder + "/summary.json") {
            case nil: evidence = .unreadableSummary
            case "stopped"?: evidence = .stopped
            case _?: return nil
            }
        }
        return UnfinishedRun(folder: folder, files: files, evidence: evidence)
    }

    /// The `status` of a summary file, nil when it is not a JSON object with a status string.
    static func summaryStatus(_ path: String) -> String? {
        guard let bytes = try? BoundedFile.read(path, limit: summaryLimit),
              let document = try? JSONDocument(bytes: bytes),
              document.root.kind == .object
        else { return nil }
        return document.root["status"]?.stringValue
    }

    /// The refusal when the run may not move them (no `--force`).
    public var refusal: OutputFolderError {
        .init(folder, .unfinishedRun(files: files, evidence: evidence.description))
    }

    /// Moves every file into a new subfolder `interrupted-<UTC time of unixTime>` (`-2`, `-3`…
    /// when taken) by rename(2), so they are kept byte for byte; returns the subfolder's name.
    /// Nothing is deleted: a file that cannot be moved stops the move with an error (the ones
    /// moved before it stay in the subfolder).
    public func moveAside(unixTime: Int64) throws(OutputFolderError) -> String {
        let stamp = Self.asideFolderPrefix + POSIX.compactUTC(unixTime)
        var name = stamp
        var suffix = 1
        while true {
            switch POSIX.makeDirectory(folder + "/" + name) {
            case .success(true): break
            case .success(false):
                suffix += 1
                guard suffix <= 1000 else { throw .init(folder, .cannotMoveAside(name: stamp, "too many folders of that name")) }
                name = stamp + "-\(suffix)"
                continue
            case .failure(let error):
                throw .init(folder, .cannotMoveAside(name: name, "cannot create it: \(error.description)"))
            }
            break
        }
        for file in files {
            if case .failure(let error) = POSIX.renameItem(folder + "/" + file, to: folder + "/" + name + "/" + file) {
                throw .init(folder, .cannotMoveAside(name: file, error.description))
            }
        }
        return name
    }
}
