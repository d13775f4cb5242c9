import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes the emulator's small state files. Keys are created 0600 under a temporary
/// name (O_EXCL | O_NOFOLLOW) and renamed into place, so a reader never sees half a key.
enum StateFiles {
    static let maxFileBytes = 1 << 20

    /// `mkdir -p` with mode 0700, naming the component that failed and why.
    static func makeDirectory(_ path: String) throws(EmulatorError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            var info = stat()
            if lstat(prefix, &info) == 0 {
                if (info.st_mode & S_IFMT) != S_IFDIR { throw .stateFile(prefix, "exists and is not a folder") }
                continue
            }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .stateFile(prefix, "cannot create the folder: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The file's text, or nil when there is no file.
    static func read(_ path: String) throws(EmulatorError) -> String? {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw .stateFile(path, String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) != S_IFREG { throw .stateFile(path, "is not a regular file") }
        if info.st_size > maxFileBytes { throw .stateFile(path, "is larger than \(maxFileBytes) bytes") }
        guard let data = FileManager.default.contents(atPath: path) else { throw .stateFile(path, "cannot be read") }
        guard let text = String(data: data, encoding: .utf8) else { throw .stateFile(path, "is not UTF-8 text") }
        return text
    }

    static func writeFile(_ path: String, _ text: String) throws(EmulatorError) {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 { throw .stateFile(path, "cannot be written: \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32?
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                failure = written < 0 ? errno : EIO
                break
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw .stateFile(path, "cannot be written: \(String(cString: strerror(failure)))")
        }
    }
}
