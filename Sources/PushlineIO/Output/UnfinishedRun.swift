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
/// - its status is `stopped` (stopped by a signal: a resume continues from it) or `failed`
///   (results could not be written, a provider stopped: a resume continues from its last
///   checkpoint).
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
        /// `summary.json` says `failed`: its results could not be written (a full disk), a
        /// provider stopped, or a bug; its journal is open for a resume.
        case failed

        public var description: String {
            switch self {
            case .temporaryFiles: "temporary files left: it was killed or crashed while writing them"
            case .noSummary: "no summary.json"
            case .unreadableSummary: "its summary.json cannot be read"
            case .stopped: "stopped by a signal: summary.json status stopped"
            case .failed: "it failed: summary.json status failed"
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
        let files = try lock.resultFiles()
        let sending = files.contains { name in
            OutputFolderLock.resultName(of: name).map { OutputFolderLock.sendingResultNames.contains($0) } ?? false
        }
        guard sending else { return nil }
        let evidence: Evidence
        let status = files.contains("summary.json") ? summaryStatus(folder + "/summary.json") : nil
        if status == "failed" {
            evidence = .failed
        } else if files.contains(where: { $0.hasSuffix(".tmp") }) {
            evidence = .temporaryFiles
        } else if !files.contains("summary.json") {
            evidence = .noSummary
        } else {
            switch status {
            case nil: evidence = .unreadableSummary
            case "stopped"?: evidence = .stopped
            case _?: return nil
            }
        }
        return UnfinishedRun(folder: folder, files: files, evidence: evidence)
    }

    /// The `status` of a summary file, nil when it is not a JSON object with a status string.
    public static func summaryStatus(_ path: String) -> String? {
        guard let bytes = try? BoundedFile.read(path, limit: summaryLimit),
              let document = try? JSONDocument(bytes: bytes),
              document.root.kind == .object
        else { return nil }
        return document.root["status"]?.stringValue
    }

    /// The refusal when the run may not move them (no `--force`).
    public var refusal: OutputFolderError {
        .init(folder, .unfinishedRun(files: files, evidence: evidence.description, sent: devicesRecordedSent))
    }

    /// The refusal of `--force` without `--resend`: moving this record aside would send to its
    /// devices again.
    public var resendRefusal: OutputFolderError {
        .init(folder, .resendNotAcknowledged(sent: devicesRecordedSent, finished: false))
    }

    /// Devices its `sent.ndjson` (final or temporary names) records as sent: one line each.
    public var devicesRecordedSent: Int { Self.devicesRecordedSent(folder: folder, files: files) }

    /// Lines of `sent.ndjson` under its final and temporary names among `files` (a torn last
    /// record counts too: it was sent).
    public static func devicesRecordedSent(folder: String, files: [String]) -> Int {
        files.filter { OutputFolderLock.resultName(of: $0) == "sent.ndjson" }.reduce(0) { total, name in
            total + ((try? BoundedFile.countRecords(folder + "/" + name)) ?? 0)
        }
    }

    /// Moves every file into a new subfolder `interrupted-<UTC time of unixTime>` (`-2`, `-3`…
    /// when taken) by rename(2), so they are kept byte for byte; returns the subfolder's name.
    public func moveAside(unixTime: Int64) throws(OutputFolderError) -> String {
        try Self.moveAside(files, in: folder, prefix: Self.asideFolderPrefix, unixTime: unixTime)
    }

    /// Moves `files` of `folder` into a new subfolder `<prefix><UTC time of unixTime>` (`-2`,
    /// `-3`… when taken) by rename(2); returns the subfolder's name. Nothing is deleted: a file
    /// that cannot be moved stops the move with an error (the ones moved before it stay in the
    /// subfolder).
    public static func moveAside(_ files: [String], in folder: String, prefix: String, unixTime: Int64) throws(OutputFolderError) -> String {
        let stamp = prefix + POSIX.compactUTC(unixTime)
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
