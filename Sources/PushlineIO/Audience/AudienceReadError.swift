/// Why the audience could not be read (further).
///
/// Lines completed before the failure have already been returned, so the run can account for
/// them; the error names the file and, for gzip and read failures, the byte offset in the file.
public struct AudienceReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable machine-readable identifier, for summaries and exit codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let openFailed = Code(rawValue: "audience.open_failed")
        public static let readFailed = Code(rawValue: "audience.read_failed")
        public static let corruptGzip = Code(rawValue: "audience.corrupt_gzip")
        public static let truncatedGzip = Code(rawValue: "audience.truncated_gzip")
        public static let zlibFailure = Code(rawValue: "audience.zlib_failure")
    }

    private enum Kind: Equatable {
        case openFailed(errno: String)
        case readFailed(errno: String)
        /// zlib refused the data; its own message says what was wrong (header, distance, checksum).
        case corruptGzip(zlibMessage: String)
        case truncatedGzip
        /// zlib failed for a reason other than the data (out of memory, version mismatch).
        case zlibFailure(status: Int32)
    }

    private let kind: Kind
    /// The path as given (`-` for standard input).
    public let path: String
    /// The offset in the (compressed) file where reading went wrong; nil when it never started.
    public let compressedOffset: Int?

    private init(_ kind: Kind, path: String, compressedOffset: Int?) {
        self.kind = kind
        self.path = path
        self.compressedOffset = compressedOffset
    }

    static func openFailed(path: String, _ error: POSIX.Errno) -> Self {
        Self(.openFailed(errno: error.description), path: path, compressedOffset: nil)
    }

    static func readFailed(path: String, offset: Int, _ error: POSIX.Errno) -> Self {
        Self(.readFailed(errno: error.description), path: path, compressedOffset: offset)
    }

    static func corruptGzip(path: String, offset: Int, zlibMessage: String) -> Self {
        Self(.corruptGzip(zlibMessage: zlibMessage), path: path, compressedOffset: offset)
    }

    static func truncatedGzip(path: String, offset: Int) -> Self {
        Self(.truncatedGzip, path: path, compressedOffset: offset)
    }

    static func zlibFailure(path: String, offset: Int?, status: Int32) -> Self {
        Self(.zlibFailure(status: status), path: path, compressedOffset: offset)
    }

    public var code: Code {
        switch kind {
        case .openFailed: .openFailed
        case .readFailed: .readFailed
        case .corruptGzip: .corruptGzip
        case .truncatedGzip: .truncatedGzip
        case .zlibFailure: .zlibFailure
        }
    }

    /// What went wrong, for a person (without the path; `description` adds it).
    public var message: String {
        switch kind {
        case .openFailed(let reason): "cannot open audience: \(reason)"
        case .readFailed(let reason): "cannot read audience: \(reason)"
        case .corruptGzip(let reason): "corrupt gzip data: \(reason)"
        case .truncatedGzip: "truncated gzip data: the input ended inside a compressed stream"
        case .zlibFailure(let status): "zlib failed with status \(status)"
        }
    }

    public var description: String {
        if let compressedOffset {
            return "\(path): \(message) (at compressed byte \(compressedOffset))"
        }
        return "\(path): \(message)"
    }
}
