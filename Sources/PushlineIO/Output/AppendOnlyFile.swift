import Synchronization

/// A file that only grows, written straight to the kernel: every `append` is one `write(2)` of
/// whole records, with nothing buffered in the process, so what an `append` returned from
/// survives the process being killed (not a power cut: nothing is fsynced). Several threads may
/// append; each append lands whole and in the order the calls took the lock.
///
/// After a failed write the file is removed and later appends do nothing: a reader then finds
/// no file, never one that silently misses records (`WireLog` relies on that).
public final class AppendOnlyFile: Sendable {
    public let path: String
    private let fd: Mutex<Int32>

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = Mutex(fd)
    }

    deinit {
        let fd = self.fd.withLock { $0 }
        if fd >= 0 { _ = POSIX.closeDescriptor(fd) }
    }

    /// Opens `path` to append to it (created when absent; an existing file is continued).
    public static func open(_ path: String) -> Result<AppendOnlyFile, OutputFileError> {
        switch POSIX.openForAppend(path) {
        case .success(let fd):
            guard case .success(.regular) = POSIX.descriptorKind(fd) else {
                _ = POSIX.closeDescriptor(fd)
                return .failure(.notRegularFile(path: path, kind: "not a regular file"))
            }
            return .success(AppendOnlyFile(path: path, fd: fd))
        case .failure(let error):
            return .failure(.createFailed(path: path, error))
        }
    }

    /// Appends `bytes` in one write; false when the file failed (now or before) and is gone.
    @discardableResult
    public func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        fd.withLock { fd in
            guard fd >= 0 else { return false }
            if case .success = POSIX.writeAll(fd, bytes) { return true }
            // A short write leaves a torn record: the file goes, so nobody trusts what is left.
            POSIX.removeItem(path)
            _ = POSIX.closeDescriptor(fd)
            fd = -1
            return false
        }
    }

    /// Removes the file; later appends do nothing.
    public func remove() {
        fd.withLock { fd in
            POSIX.removeItem(path)
            if fd >= 0 { _ = POSIX.closeDescriptor(fd) }
            fd = -1
        }
    }

    /// Whether appends still land.
    public var isIntact: Bool { fd.withLock { $0 >= 0 } }
}
