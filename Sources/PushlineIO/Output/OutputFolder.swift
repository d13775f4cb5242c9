import Synchronization

/// Exclusive ownership of a run's output folder, held from before the first file is created until
/// after the summary is written.
///
/// The lock is `flock(LOCK_EX | LOCK_NB)` on `.pushline.lock` inside the folder: the kernel drops
/// it when the holder exits, however it exits, so a crashed run never leaves the folder locked.
/// The file stays in place (removing it would let two runs lock different inodes); it holds the
/// holder's pid, host and start time, which a second run prints when it is refused.
///
/// Once locked, the folder's previous results (requests-*, rejects.ndjson, sent.ndjson,
/// invalid-tokens.ndjson, failed.ndjson, unsent.ndjson, summary.json and their temporary files)
/// are removed, so the folder never mixes two runs' files, unless they are the record of a run
/// that did not finish (`UnfinishedRun`): those are kept. Only regular files are removed; anything else
/// under those names (a symlink, FIFO, device, directory) makes the run refuse the folder instead.
public final class OutputFolderLock: Sendable {
    /// The lock file's name inside the folder.
    public static let fileName = ".pushline.lock"

    public let folder: String
    /// The lock file's descriptor (internal for tests).
    let fd: Int32
    /// Whether `release()` ran (the descriptor is closed then).
    private let released = Mutex(false)

    private init(folder: String, fd: Int32) {
        self.folder = folder
        self.fd = fd
    }

    deinit { release() }

    /// Unlocks and closes the lock file; later calls do nothing. The unlock comes first and is
    /// explicit: the lock belongs to the open file, so a copy of the descriptor (a child process
    /// between its fork and its exec) or a reference still held elsewhere would otherwise keep
    /// the folder locked after the run has ended.
    public func release() {
        let first = released.withLock { released -> Bool in
            defer { released = true }
            return !released
        }
        guard first else { return }
        POSIX.unlock(fd)
        _ = POSIX.closeDescriptor(fd)
    }

    /// Creates `folder` if needed and locks it, or fails at once when another run holds it.
    public static func acquire(_ folder: String, startedAt: String) throws(OutputFolderError) -> OutputFolderLock {
        // An empty path would put the lock file at "/.pushline.lock".
        if folder.isEmpty { throw .init(folder, .cannotCreate("the path is empty")) }
        switch POSIX.entryKind(folder) {
        case .success(nil):
            if case .failure(let error) = POSIX.makeDirectories(folder) { throw .init(folder, .cannotCreate(error.description)) }
        case .success(.directory?):
            break
        case .success(.symlink?):
            // A link to a directory is a folder the user chose; opening files inside it is fine.
            guard case .success(.directory) = POSIX.followedKind(folder) else { throw .init(folder, .notADirectory("a symbolic link to something other than a directory")) }
        case .success(let kind?):
            throw .init(folder, .notADirectory(kind.name))
        case .failure(let error):
            throw .init(folder, .cannotCreate(error.description))
        }
        let path = folder + "/" + fileName
        let fd: Int32
        switch POSIX.openLockFile(path) {
        case .success(let descriptor): fd = descriptor
        case .failure(let error): throw .init(folder, .cannotLock("cannot open \(fileName): \(error.description)"))
        }
        guard case .success(.regular) = POSIX.descriptorKind(fd) else {
            _ = POSIX.closeDescriptor(fd)
            throw .init(folder, .cannotLock("\(fileName) is not a regular file"))
        }
        // The holder's details are written into this file: a hard link planted at its name would
        // make that overwrite another file.
        guard case .success(1) = POSIX.linkCount(fd) else {
            _ = POSIX.closeDescriptor(fd)
            throw .init(folder, .cannotLock("\(fileName) has other hard links"))
        }
        switch POSIX.tryLockExclusive(fd) {
        case .success(true):
            break
        case .success(false):
            let holder = String(decoding: POSIX.readPrefix(fd, limit: 512), as: UTF8.self)
            _ = POSIX.closeDescriptor(fd)
            throw .init(folder, .inUse(holder: describeHolder(holder)))
        case .failure(let error):
            _ = POSIX.closeDescriptor(fd)
            throw .init(folder, .cannotLock(error.description))
        }
        let content = "pid=\(POSIX.processID)\nhost=\(POSIX.hostName)\nstarted=\(startedAt)\n"
        if case .failure(let error) = POSIX.replaceContents(fd, Array(content.utf8)) {
            _ = POSIX.closeDescriptor(fd)
            throw .init(folder, .cannotLock("cannot write \(fileName): \(error.description)"))
        }
        return OutputFolderLock(folder: folder, fd: fd)
    }

    /// Whether `name` is one of a run's result files or their temporary files
    /// (`<result>.<pid>-<token>.tmp`, or the fixed `<result>.tmp` older versions used).
    public static func isResultName(_ name: String) -> Bool {
        resultName(of: name) != nil
    }

    static func isFinalResultName(_ name: Substring) -> Bool {
        if name == "rejects.ndjson" || name == "summary.json" || name == "checkpoint.json" || name == "deferred.ndjson" || name == "holdout.ndjson" { return true }
        if sendingResultNames.contains(name) { return true }
        // A sending run's wire logs (`wire-apns.log`): which devices were about to go on the wire.
        if name.hasPrefix("wire-") && name.hasSuffix(".log") && !name.contains(".tmp") { return true }
        return name.hasPrefix("requests-") && (name.hasSuffix(".ndjson") || name.hasSuffix(".ndjson.gz"))
    }

    /// A sending run's results: the record of which devices were notified.
    static let sendingResultNames: Set<Substring> = ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson", "unsent.ndjson"]

    /// The final name a result or temporary name belongs to (`sent.ndjson` for
    /// `sent.ndjson.123-ab.tmp`), nil when it is not a result name.
    public static func resultName(of name: String) -> Substring? {
        if isFinalResultName(name[...]) { return name[...] }
        guard name.hasSuffix(".tmp") else { return nil }
        let base = name.dropLast(4)
        if isFinalResultName(base) { return base }
        guard let dot = base.lastIndex(of: ".") else { return nil }
        return isFinalResultName(base[..<dot]) ? base[..<dot] : nil
    }

    /// The regular files directly in the folder whose names are results (see `isResultName`),
    /// sorted; anything else under a result name (a symlink, FIFO, directory) is refused.
    public func resultFiles() throws(OutputFolderError) -> [String] {
        let names: [String]
        switch POSIX.directoryEntries(folder) {
        case .success(let entries): names = entries.filter(Self.isResultName).sorted()
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
        return files
    }

    /// Removes every previous result file (see `isResultName`); returns the names removed.
    @discardableResult
    public func removeStaleResults() throws(OutputFolderError) -> [String] {
        let names: [String]
        switch POSIX.directoryEntries(folder) {
        case .success(let entries): names = entries.filter(Self.isResultName).sorted()
        case .failure(let error): throw .init(folder, .cannotClean(name: ".", error.description))
        }
        for name in names {
            let path = folder + "/" + name
            switch POSIX.entryKind(path) {
            case .success(nil): continue
            case .success(.regular?): break
            case .success(let kind?): throw .init(folder, .foreignEntry(name: name, kind: kind.name))
            case .failure(let error): throw .init(folder, .cannotClean(name: name, error.description))
            }
            if case .failure(let error) = POSIX.unlinkItem(path) { throw .init(folder, .cannotClean(name: name, error.description)) }
        }
        return names
    }

    /// "pid 123 on host build-1, started 2026-01-01T00:00:00Z", from the lock file's lines.
    static func describeHolder(_ content: String) -> String {
        var fields: [String: String] = [:]
        for line in content.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...].prefix(100))
        }
        guard let pid = fields["pid"] else { return "a process that has not written its details yet" }
        return "pid \(pid) on host \(fields["host"] ?? "?"), started \(fields["started"] ?? "?")"
    }
}

/// Why an output folder could not be taken for a run.
public struct OutputFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let inUse = Code(rawValue: "output.folder_in_use")
        public static let cannotCreate = Code(rawValue: "output.folder_create_failed")
        public static let notADirectory = Code(rawValue: "output.not_a_directory")
        public static let cannotLock = Code(rawValue: "output.lock_failed")
        public static let foreignEntry = Code(rawValue: "output.not_regular_file")
        public static let cannotClean = Code(rawValue: "output.clean_failed")
        /// The folder holds a previous run's unfinished results and `--force` was not given.
        public static let unfinishedRun = Code(rawValue: "output.unfinished_run")
        public static let cannotMoveAside = Code(rawValue: "output.move_aside_failed")
        /// `--force` over a sending run's record without `--resend`: it would notify its devices again.
        public static let resendNotAcknowledged = Code(rawValue: "output.resend_not_acknowledged")
    }

    enum Kind: Equatable {
        case inUse(holder: String)
        case cannotCreate(String)
        case notADirectory(String)
        case cannotLock(String)
        case foreignEntry(name: String, kind: String)
        case cannotClean(name: String, String)
        case unfinishedRun(files: [String], evidence: String, sent: Int)
        case cannotMoveAside(name: String, String)
        case resendNotAcknowledged(sent: Int, finished: Bool)
    }

    private let kind: Kind
    public let folder: String

    /// `--force` over a finished or unfinished sending run's record, without `--resend`.
    public static func resendNotAcknowledged(_ folder: String, sent: Int, finished: Bool) -> OutputFolderError {
        .init(folder, .resendNotAcknowledged(sent: sent, finished: finished))
    }

    init(_ folder: String, _ kind: Kind) {
        self.folder = folder
        self.kind = kind
    }

    public var code: Code {
        switch kind {
        case .inUse: .inUse
        case .cannotCreate: .cannotCreate
        case .notADirectory: .notADirectory
        case .cannotLock: .cannotLock
        case .foreignEntry: .foreignEntry
        case .cannotClean: .cannotClean
        case .unfinishedRun: .unfinishedRun
        case .cannotMoveAside: .cannotMoveAside
        case .resendNotAcknowledged: .resendNotAcknowledged
        }
    }

    public var description: String {
        switch kind {
        case .inUse(let holder):
            "output folder \(folder) is in use by another run (\(holder)); wait for it to finish or choose another output folder"
        case .cannotCreate(let reason):
            "cannot create the output folder \(folder): \(reason)"
        case .notADirectory(let kind):
            "the output folder \(folder) is \(kind), not a directory"
        case .cannotLock(let reason):
            "cannot lock the output folder \(folder): \(reason)"
        case .foreignEntry(let name, let kind):
            "refusing to use the output folder \(folder): \(name) is \(kind), and only regular files are replaced"
        case .cannotClean(let name, let reason):
            "cannot remove the previous run's \(name) from \(folder): \(reason)"
        case .unfinishedRun(let files, let evidence, let sent):
            "the output folder \(folder) holds the results of a sending run that did not finish (\(evidence)): \(Self.list(files)); "
                + "they record the \(sent) device\(sent == 1 ? "" : "s") it sent and are kept: "
                + (files.contains("checkpoint.json")
                    ? "pass --resume (or --auto-resume) to continue that run without notifying them again"
                    : "it left no checkpoint.json, so it cannot be resumed")
                + "; or choose another output folder (--force --resend moves them into \(folder)/\(UnfinishedRun.asideFolderPrefix)<UTC time>/ and sends the whole campaign again, those \(sent) devices included)"
        case .resendNotAcknowledged(let sent, let finished):
            "--force would send the campaign in \(folder) again: its \(finished ? "finished" : "unfinished") run already sent \(sent) device\(sent == 1 ? "" : "s") (sent.ndjson), "
                + "and they would be notified twice. "
                + (finished ? "Nothing is left to send; " : "--resume continues it without notifying them again; ")
                + "add --resend to move its record aside and send to every device again"
        case .cannotMoveAside(let name, let reason):
            "cannot move the unfinished run's \(name) aside in \(folder): \(reason) (nothing was removed)"
        }
    }

    /// At most 8 names, then how many more.
    private static func list(_ names: [String]) -> String {
        let shown = names.prefix(8).joined(separator: ", ")
        return names.count > 8 ? shown + " and \(names.count - 8) more" : shown
    }
}
