import CPushlineIO
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
        /// The file system refused an argument (O_DIRECT on a file system without it).
        var isInvalidArgument: Bool { code == EINVAL }
        /// The system's text for the value (error path only).
        var description: String {
            guard let text = strerror(code) else { return "errno \(code)" }
            return String(cString: text)
        }
    }

    static func openForReading(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Creates `path` for writing (mode 0644 before umask); fails when anything, even a dangling
    /// symlink, is already there, and never follows a symlink.
    static func createExclusive(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
    }

    /// Opens `path` for appending, creating it (mode 0644 before umask) when absent; never
    /// follows a symlink.
    static func openForAppend(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o644) }
    }

    /// What a directory entry is, without following a symlink.
    enum EntryKind: Equatable {
        case regular, directory, symlink, fifo, device, socket, other

        init(mode: mode_t) {
            switch mode & S_IFMT {
            case S_IFREG: self = .regular
            case S_IFDIR: self = .directory
            case S_IFLNK: self = .symlink
            case S_IFIFO: self = .fifo
            case S_IFCHR, S_IFBLK: self = .device
            case S_IFSOCK: self = .socket
            default: self = .other
            }
        }

        var name: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .symlink: "a symbolic link"
            case .fifo: "a FIFO"
            case .device: "a device"
            case .socket: "a socket"
            case .other: "a special file"
            }
        }
    }

    /// `lstat(2)`: nil when nothing is there.
    static func entryKind(_ path: String) -> Result<EntryKind?, Errno> {
        var info = stat()
        if lstat(path, &info) == 0 { return .success(EntryKind(mode: info.st_mode)) }
        return errno == ENOENT ? .success(nil) : .failure(Errno(code: errno))
    }

    static func descriptorKind(_ fd: Int32) -> Result<EntryKind, Errno> {
        var info = stat()
        if fstat(fd, &info) == 0 { return .success(EntryKind(mode: info.st_mode)) }
        return .failure(Errno(code: errno))
    }

    /// How many directory entries name the file open on `fd`.
    static func linkCount(_ fd: Int32) -> Result<Int, Errno> {
        var info = stat()
        if fstat(fd, &info) == 0 { return .success(Int(truncatingIfNeeded: info.st_nlink)) }
        return .failure(Errno(code: errno))
    }

    /// Opens (creating if needed) a lock file: never through a symlink, never blocking on a FIFO.
    static func openLockFile(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644) }
    }

    /// `flock(LOCK_EX | LOCK_NB)`: false when another open file holds the lock.
    static func tryLockExclusive(_ fd: Int32) -> Result<Bool, Errno> {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return .success(true) }
            if errno == EWOULDBLOCK { return .success(false) }
            if errno != EINTR { return .failure(Errno(code: errno)) }
        }
    }

    /// Drops a `flock` held through `fd` (every descriptor of that open file loses it).
    static func unlock(_ fd: Int32) {
        while flock(fd, LOCK_UN) != 0, errno == EINTR {}
    }

    /// Replaces the whole content of `fd` with `bytes`.
    static func replaceContents(_ fd: Int32, _ bytes: [UInt8]) -> Result<Void, Errno> {
        if ftruncate(fd, 0) != 0 { return .failure(Errno(code: errno)) }
        if lseek(fd, 0, SEEK_SET) < 0 { return .failure(Errno(code: errno)) }
        return bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Up to `limit` bytes from the start of `fd`.
    static func readPrefix(_ fd: Int32, limit: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, limit, 0) }
        return count > 0 ? Array(bytes[..<count]) : []
    }

    /// The names in a directory (without `.` and `..`).
    static func directoryEntries(_ path: String) -> Result<[String], Errno> {
        guard let directory = opendir(path) else { return .failure(Errno(code: errno)) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names)
    }

    /// Removes a file (not a directory).
    static func unlinkItem(_ path: String) -> Result<Void, Errno> {
        unlink(path) == 0 || errno == ENOENT ? .success(()) : .failure(Errno(code: errno))
    }

    /// `stat(2)`, following symlinks.
    static func followedKind(_ path: String) -> Result<EntryKind, Errno> {
        var info = stat()
        if stat(path, &info) == 0 { return .success(EntryKind(mode: info.st_mode)) }
        return .failure(Errno(code: errno))
    }

    /// `mkdir -p`: creates `path` and its missing parents (mode 0755 before umask).
    static func makeDirectories(_ path: String) -> Result<Void, Errno> {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { return .failure(Errno(code: errno)) }
            prefix += "/"
        }
        return .success(())
    }

    /// `mkdir(2)` of one directory (mode 0755 before umask): false when something is already there.
    static func makeDirectory(_ path: String) -> Result<Bool, Errno> {
        if mkdir(path, 0o755) == 0 { return .success(true) }
        return errno == EEXIST ? .success(false) : .failure(Errno(code: errno))
    }

    /// `unixTime` in UTC as `20260102T030405Z` (a name part: no colons).
    static func compactUTC(_ unixTime: Int64) -> String {
        var seconds = time_t(truncatingIfNeeded: unixTime)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return String(unixTime) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    static var processID: Int32 { getpid() }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `fd` has something to read (data, end of file or an error) within `milliseconds`;
    /// false when the time passed or a signal came first (`poll(2)` is never restarted).
    static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Asks the kernel to start reading `length` bytes of `fd` from `offset` into the page cache
    /// (`posix_fadvise` WILLNEED); it returns once the reads are queued. Advice only: a
    /// descriptor that cannot take it (a pipe) is left as it is.
    static func adviseWillNeed(_ fd: Int32, offset: Int, length: Int) {
        #if os(Linux)
        _ = posix_fadvise(fd, off_t(offset), off_t(length), POSIX_FADV_WILLNEED)
        #endif
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return .success(count) }
            if errno != EINTR { return .failure(Errno(code: errno)) }
        }
    }

    /// Writes all of `bytes`, looping over short writes and EINTR: at the file position
    /// (write(2)), or at `offset` whatever the position (pwrite(2)). A call that writes nothing
    /// fails with EIO rather than loop.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) -> Result<Void, Errno> {
        guard var next = bytes.baseAddress else { return .success(()) }
        var remaining = bytes.count
        var position = offset ?? 0
        while remaining > 0 {
            let written = offset == nil ? write(fd, next, remaining) : pwrite(fd, next, remaining, off_t(position))
            if written > 0 {
                next += written
                remaining -= written
                position += written
            } else if written == 0 {
                return .failure(Errno(code: EIO))
            } else if errno != EINTR {
                return .failure(Errno(code: errno))
            }
        }
        return .success(())
    }

    /// Writes `first` then `second` in one `writev(2)` where the kernel takes both whole (a
    /// buffered head and a large block written from where it lies, without copying it first).
    static func writeAll(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        var head = first
        var tail = second
        while !head.isEmpty {
            var vectors = (
                iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress), iov_len: head.count),
                iovec(iov_base: UnsafeMutableRawPointer(mutating: tail.baseAddress), iov_len: tail.count)
            )
            let written = withUnsafeMutablePointer(to: &vectors) {
                $0.withMemoryRebound(to: iovec.self, capacity: 2) { writev(fd, $0, tail.isEmpty ? 1 : 2) }
            }
            if written < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(code: errno))
            }
            if written >= head.count {
                tail = UnsafeRawBufferPointer(rebasing: tail[(written - head.count)...])
                head = UnsafeRawBufferPointer(start: nil, count: 0)
            } else {
                head = UnsafeRawBufferPointer(rebasing: head[written...])
            }
        }
        return writeAll(fd, tail)
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

// MARK: Resume

extension POSIX {
    /// Opens an existing file for reading and writing (the resume checks its last kept byte),
    /// never following a symlink.
    static func openForResume(_ path: String) -> Result<Int32, Errno> {
        retrying { open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
    }

    static func fileSize(_ fd: Int32) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return -1 }
        return Int(info.st_size)
    }

    /// The byte at `offset`, nil when it cannot be read.
    static func byte(_ fd: Int32, at offset: Int) -> UInt8? {
        var byte: UInt8 = 0
        return pread(fd, &byte, 1, off_t(offset)) == 1 ? byte : nil
    }

    static func truncateAndSeek(_ fd: Int32, to length: Int) -> Result<Void, Errno> {
        guard ftruncate(fd, off_t(length)) == 0 else { return .failure(Errno(code: errno)) }
        guard lseek(fd, off_t(length), SEEK_SET) >= 0 else { return .failure(Errno(code: errno)) }
        return .success(())
    }

    /// The offset just after the last newline in the file's first `size` bytes (0 when it has
    /// none), read backwards in blocks; nil when it cannot be read.
    static func endOfLastLine(_ fd: Int32, size: Int) -> Int? {
        var block = [UInt8](repeating: 0, count: 64 << 10)
        var end = size
        while end > 0 {
            let start = max(0, end - block.count)
            let count = end - start
            let read = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(start)) }
            guard read == count else { return nil }
            if let last = block[..<count].lastIndex(of: 0x0A) { return start + last + 1 }
            end = start
        }
        return 0
    }

    /// A second descriptor of the same open file (close-on-exec), -1 on failure.
    static func duplicate(_ fd: Int32) -> Int32 {
        fcntl(fd, F_DUPFD_CLOEXEC, 0)
    }

    /// Turns `O_DIRECT` on or off for `fd`'s open file; false where the platform has no such
    /// flag or the file system refuses it (FUSE does; tmpfs did before Linux 6.6).
    static func setDirect(_ fd: Int32, _ on: Bool) -> Bool {
        let direct = cpushlineio_open_flag_direct()
        guard direct != 0 else { return false }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return false }
        return fcntl(fd, F_SETFL, on ? flags | direct : flags & ~direct) == 0
    }

    /// Whether `fd`'s open file has `O_DIRECT` on.
    static func isDirect(_ fd: Int32) -> Bool {
        let direct = cpushlineio_open_flag_direct()
        return direct != 0 && fcntl(fd, F_GETFL) & direct != 0
    }

    /// Moves the file position to `offset`.
    static func seek(_ fd: Int32, to offset: Int) -> Result<Void, Errno> {
        lseek(fd, off_t(offset), SEEK_SET) >= 0 ? .success(()) : .failure(Errno(code: errno))
    }
}
