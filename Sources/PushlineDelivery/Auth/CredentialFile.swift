#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a small credential file (a .p8 key, a service-account JSON) whole, refusing anything
/// larger than `limit`: a credential is a few kilobytes, and a path pointing at a device or a
/// huge file must not be read into memory.
enum CredentialFile {
    enum Failure: Error, Equatable {
        case missing
        case unreadable(errno: Int32)
        case notAFile
        case tooLarge(limit: Int)
    }

    static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        // O_NONBLOCK: a FIFO or device named as a key must not block the open; fstat then
        // refuses anything but a regular file.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let code = errno
            throw code == ENOENT || code == ENOTDIR ? .missing : .unreadable(errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notAFile }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge(limit: limit) }
        }
        return bytes
    }

    /// Why a file could not be read, for an error naming it.
    static func describe(_ failure: Failure) -> String {
        switch failure {
        case .missing: "no such file"
        case .unreadable(let code): "cannot be read (\(String(cString: strerror(code))))"
        case .notAFile: "is not a regular file"
        case .tooLarge(let limit): "is larger than \(limit) bytes, too large for a key"
        }
    }
}

/// `read(2)`, named apart from `CredentialFile.read`.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

extension String {
    /// Without surrounding spaces, tabs and line ends: a credential file's final newline.
    func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        var start = 0, end = bytes.count
        while start < end, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        while end > start, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
