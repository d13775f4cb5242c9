/// Reads small inputs (pipeline files, template files) whole, but never more than a limit: a huge
/// file, or a device such as /dev/zero given by mistake, costs `limit + 1` bytes and an error.
public enum BoundedFile {
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            case system(String)
            case tooLarge(limit: Int)
        }

        public var path: String
        public var reason: Reason

        /// Without the path: "larger than 1048576 bytes", "No such file or directory".
        public var message: String {
            switch reason {
            case .system(let text): text
            case .tooLarge(let limit): "larger than \(limit) bytes"
            }
        }

        public var description: String { "\(path): \(message)" }
    }

    public static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8] {
        precondition(limit >= 0 && limit < Int.max, "limit must be a byte count")
        let fd: Int32
        switch POSIX.openForReading(path) {
        case .success(let descriptor): fd = descriptor
        case .failure(let error): throw ReadError(path: path, reason: .system(error.description))
        }
        defer { _ = POSIX.closeDescriptor(fd) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let outcome = bytes.withUnsafeMutableBytes { buffer in
                POSIX.readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
            }
            switch outcome {
            case .success(0): return Array(bytes[..<count])
            case .success(let read): count += read
            case .failure(let error): throw ReadError(path: path, reason: .system(error.description))
            }
        }
        throw ReadError(path: path, reason: .tooLarge(limit: limit))
    }

    /// Records in a file of newline-ended lines, read in 1 MiB pieces whatever its size: the
    /// newlines, plus one for a last line without its newline (a torn record).
    public static func countRecords(_ path: String) throws(ReadError) -> Int {
        let fd: Int32
        switch POSIX.openForReading(path) {
        case .success(let descriptor): fd = descriptor
        case .failure(let error): throw ReadError(path: path, reason: .system(error.description))
        }
        defer { _ = POSIX.closeDescriptor(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var records = 0
        var last: UInt8 = 0x0A
        while true {
            let outcome = buffer.withUnsafeMutableBytes { POSIX.readSome(fd, into: $0) }
            switch outcome {
            case .success(0): return records + (last == 0x0A ? 0 : 1)
            case .success(let read):
                for byte in buffer[..<read] where byte == 0x0A { records += 1 }
                last = buffer[read - 1]
            case .failure(let error): throw ReadError(path: path, reason: .system(error.description))
            }
        }
    }
}
