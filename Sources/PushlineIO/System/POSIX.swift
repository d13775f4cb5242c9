#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, EINTR-safe wrappers over the few system calls the reader and writers make.
///
/// They return the raw errno instead of throwing so each caller wraps it in its own error type
/// together with the path it was working on. Names differ from libc's so the calls inside stay
/// unambiguous.
enum POSIX {
    struct Errno: Error {
        var code: Int32
        /// The system's text for the value (error path only).
        var description: String {
            guard let text = strerror(code) else { return "errno \(code)" }
            return String(cString: text)
        }
    }

    static func openForReading(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Creates or truncates `path` for writing (mode 0644 before umask).
    static func createForWriting(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return .success(count) }
            if errno != EINTR { return .failure(Errno(code: errno)) }
        }
    }

    /// Writes all of `bytes`, looping over short writes.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        guard var next = bytes.baseAddress else { return .success(()) }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(fd, next, remaining)
            if written >= 0 {
                next += written
                remaining -= written
            } else if errno != EINTR {
                return .failure(Errno(code: errno))
            }
        }
        return .success(())
    }

    static func syncToDisk(_ fd: Int32) -> Result<Void, Errno> {
        retrying { fsync(fd) }.map { _ in }
    }

    /// Closes without retrying on EINTR: on Linux the descriptor is released either way.
    static func closeDescriptor(_ fd: Int32) -> Result<Void, Errno> {
        close(fd) == 0 ? .success(()) : .failure(Errno(code: errno))
    }

    static func renameItem(_ source: String, to destination: String) -> Result<Void, Errno> {
        rename(source, destination) == 0 ? .success(()) : .failure(Errno(code: errno))
    }

    static func removeItem(_ path: String) {
        _ = unlink(path)
    }

    /// Makes a rename inside `directory` durable.
    static func syncDirectory(_ directory: String) -> Result<Void, Errno> {
        switch retrying({ open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) {
        case .success(let fd):
            defer { _ = close(fd) }
            return syncToDisk(fd)
        case .failure(let error):
            return .failure(error)
        }
    }

    private static func retrying(_ call: () -> Int32) -> Result<Int32, Errno> {
        while true {
            let result = call()
            if result >= 0 { return .success(result) }
            if errno != EINTR { return .failure(Errno(code: errno)) }
        }
    }
}
