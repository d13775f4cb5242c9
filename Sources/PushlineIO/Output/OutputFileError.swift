/// Why an output file could not be written; names the file and the step that failed.
public struct OutputFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable machine-readable identifier.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let createFailed = Code(rawValue: "output.create_failed")
        public static let writeFailed = Code(rawValue: "output.write_failed")
        public static let syncFailed = Code(rawValue: "output.sync_failed")
        public static let closeFailed = Code(rawValue: "output.close_failed")
        public static let renameFailed = Code(rawValue: "output.rename_failed")
        public static let zlibFailure = Code(rawValue: "output.zlib_failure")
        public static let notRegularFile = Code(rawValue: "output.not_regular_file")
        public static let resumeMismatch = Code(rawValue: "output.resume_mismatch")
        public static let checkpointFailed = Code(rawValue: "output.checkpoint_failed")
    }

    private enum Kind: Equatable {
        case createFailed(reason: String)
        case writeFailed(reason: String)
        case syncFailed(reason: String)
        case closeFailed(reason: String)
        case renameFailed(reason: String)
        case zlibFailure(status: Int32)
        case notRegularFile(kind: String)
        case resumeMismatch(reason: String)
        case checkpointFailed(reason: String)
    }

    private let kind: Kind
    /// The final path of the file (the data goes to a temporary name beside it until it is closed).
    public let path: String

    private init(_ kind: Kind, path: String) {
        self.kind = kind
        self.path = path
    }

    static func createFailed(path: String, _ error: POSIX.Errno) -> Self { Self(.createFailed(reason: error.description), path: path) }
    static func writeFailed(path: String, _ error: POSIX.Errno) -> Self { Self(.writeFailed(reason: error.description), path: path) }
    static func syncFailed(path: String, _ error: POSIX.Errno) -> Self { Self(.syncFailed(reason: error.description), path: path) }
    static func closeFailed(path: String, _ error: POSIX.Errno) -> Self { Self(.closeFailed(reason: error.description), path: path) }
    static func renameFailed(path: String, _ error: POSIX.Errno) -> Self { Self(.renameFailed(reason: error.description), path: path) }
    static func zlibFailure(path: String, status: Int32) -> Self { Self(.zlibFailure(status: status), path: path) }
    static func notRegularFile(path: String, kind: String) -> Self { Self(.notRegularFile(kind: kind), path: path) }
    static func resumeMismatch(path: String, _ reason: String) -> Self { Self(.resumeMismatch(reason: reason), path: path) }
    /// The run's checkpoint journal could not be written (`reason` names it).
    public static func checkpointFailed(_ reason: String) -> Self { Self(.checkpointFailed(reason: reason), path: "checkpoint.json") }

    public var code: Code {
        switch kind {
        case .createFailed: .createFailed
        case .writeFailed: .writeFailed
        case .syncFailed: .syncFailed
        case .closeFailed: .closeFailed
        case .renameFailed: .renameFailed
        case .zlibFailure: .zlibFailure
        case .notRegularFile: .notRegularFile
        case .resumeMismatch: .resumeMismatch
        case .checkpointFailed: .checkpointFailed
        }
    }

    /// What went wrong, for a person (without the path; `description` adds it).
    public var message: String {
        switch kind {
        case .createFailed(let reason): "cannot create output file: \(reason)"
        case .writeFailed(let reason): "cannot write output file: \(reason)"
        case .syncFailed(let reason): "cannot flush output file to disk: \(reason)"
        case .closeFailed(let reason): "cannot close output file: \(reason)"
        case .renameFailed(let reason): "cannot move the finished output file into place: \(reason)"
        case .zlibFailure(let status): "zlib failed with status \(status)"
        case .notRegularFile(let kind): "refusing to replace \(kind): only a regular file is replaced"
        case .resumeMismatch(let reason): "cannot resume this results file: \(reason)"
        case .checkpointFailed(let reason): reason
        }
    }

    public var description: String { "\(path): \(message)" }
}
