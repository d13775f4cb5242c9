/// An append-only output file (NDJSON requests and results), plain or gzip, written in big chunks.
///
/// **Replace on close.** Bytes go to a temporary name unique to this writer
/// (`path.<pid>-<random>.tmp`, created with `O_EXCL | O_NOFOLLOW`, so a file or symlink planted
/// there is never opened or followed); only a successful `close()` renames it to `path`, replacing
/// a previous *regular* file. Anything else at `path` (a symlink, FIFO, device, directory) is
/// refused, when the writer is created and again just before the rename. A run that crashes, or a writer dropped without `close()`
/// (the temporary file is then removed, unless it is a run's record: `keepsRecord`), never leaves
/// a half-written file under the real name, so a file that exists is complete. With `syncOnClose`, the data and then the rename are
/// flushed to disk before `close()` returns.
///
/// Writes are buffered (`bufferSize`, 1 MiB by default) and reach the kernel in whole buffers or
/// at `flush()`; a gzip file is one standard member (RFC 1952) that `gzip -t` accepts. Blocking, like the reader:
/// call it from a thread meant for I/O, not from the cooperative pool's hot path.
///
/// **Around the page cache** (`bypassPageCache`, plain new files): the buffer is block-aligned
/// and its whole blocks go to the file with `O_DIRECT`, so the kernel copies nothing. A
/// flush, checkpoint or close writes the last partial block through the page cache (O_DIRECT
/// takes whole blocks only) and keeps it in the buffer, to write it again, whole, once more
/// bytes complete it: the file always holds exactly the bytes written, never padding. Where
/// the file system refuses O_DIRECT (FUSE; tmpfs before Linux 6.6), at open or at a write, the
/// file is written through the page cache as any other.
public struct OutputFile: ~Copyable {
    public enum Compression: Sendable, Equatable {
        case none
        /// zlib level 0 (store) to 9 (smallest); 6 is gzip's default.
        case gzip(level: Int = 6)
        /// A gzip file written as whole members the caller compressed (`GzipMember`), through
        /// `writeMember`: the deflate work is done where the bytes are made, not on this thread.
        case gzipMembers
    }

    public struct Options: Sendable {
        public var compression: Compression
        public var bufferSize: Int
        /// fsync the file, then its directory, before `close()` returns.
        public var syncOnClose: Bool
        /// Plain new files: write whole blocks with `O_DIRECT` where the file system allows it.
        /// For large output nobody reads during the run (a dry run's request files): copying
        /// a gigabyte into the page cache was a fifth of a dry run's CPU on a two-core machine.
        public var bypassPageCache: Bool
        /// With `bypassPageCache`: while one of these fsyncs runs, whole blocks go through the
        /// page cache too (`DeviceFlushes` says why).
        public var flushes: DeviceFlushes?
        /// The file is a run's record (results a resume continues, or who was notified): dropped
        /// without `close()`, after a write failure or a crash of its writer, its temporary file
        /// is kept for the next run, never removed.
        public var keepsRecord: Bool

        public init(
            compression: Compression = .none, bufferSize: Int = 1 << 20, syncOnClose: Bool = false, bypassPageCache: Bool = false,
            flushes: DeviceFlushes? = nil, keepsRecord: Bool = false
        ) {
            self.compression = compression
            self.bufferSize = bufferSize
            self.syncOnClose = syncOnClose
            self.bypassPageCache = bypassPageCache
            self.flushes = flushes
            self.keepsRecord = keepsRecord
        }

        /// Whether the file's buffer is block-aligned for O_DIRECT: plain files only, as a gzip
        /// file's bytes are the deflater's (or the workers' members), a sixth of the size.
        var writesWholeBlocks: Bool { bypassPageCache && compression == .none }
    }

    /// Where the file appears once closed.
    public let path: String
    /// Where the bytes go until then.
    public let temporaryPath: String
    /// Bytes accepted so far (before compression).
    public private(set) var bytesWritten = 0
    /// Bytes written to the file so far (after compression): its size on disk once closed.
    public private(set) var bytesOnDisk = 0

    private let syncOnClose: Bool
    private var fd: Int32
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var buffered = 0
    private let deflater: GzipDeflater?
    /// `.gzipMembers`: only whole members come in (`writeMember`).
    private let takesMembers: Bool
    /// The first failure; later calls repeat it rather than write after a gap.
    private var failure: OutputFileError?
    private var committed = false
    /// Writing around the page cache: the file offset of the buffer's first byte, always a
    /// multiple of `directBlock`. Nil when writes go through the page cache (`write(2)` at the
    /// file position).
    private var directOffset: Int?
    /// Around the page cache: fsyncs that turn O_DIRECT off while they run.
    private let flushes: DeviceFlushes?
    /// O_DIRECT is off for now, while an fsync runs (`flushes`).
    private var directSuspended = false
    /// Bytes of whole blocks written through the page cache while an fsync ran (tests).
    private(set) var bytesWrittenDuringFlushes = 0

    /// What O_DIRECT offsets, lengths and buffer addresses are multiples of: the largest logical
    /// block size of disks in use, so every device's smaller one divides it.
    static let directBlock = 4096

    /// Whether whole blocks go to the file around the page cache (tests).
    var writesAroundPageCache: Bool { directOffset != nil }

    /// Creates the temporary file, after checking that `path` is absent or a regular file.
    public init(path: String, options: Options = Options()) throws(OutputFileError) {
        try Self.checkReplaceable(path)
        let temporaryPath = Self.uniqueTemporaryPath(for: path)
        let fd: Int32
        switch POSIX.createExclusive(temporaryPath) {
        case .success(let descriptor): fd = descriptor
        case .failure(let error): throw .createFailed(path: path, error)
        }
        try self.init(path: path, temporaryPath: temporaryPath, descriptor: fd, options: options)
        if options.writesWholeBlocks, POSIX.setDirect(fd, true) {
            directOffset = 0
        }
    }

    /// Writes to an already open descriptor (tests use it to inject a failing device).
    init(path: String, temporaryPath: String, descriptor fd: Int32, options: Options) throws(OutputFileError) {
        // zlib counts in UInt32: a larger buffer would trap when handed to it.
        precondition(options.bufferSize > 0 && options.bufferSize <= 1 << 30, "buffer size must be 1 byte to 1 GiB")
        var deflater: GzipDeflater?
        if case .gzip(let level) = options.compression {
            precondition((0...9).contains(level), "gzip level must be 0...9")
            do {
                deflater = try GzipDeflater(level: Int32(level), outputBufferSize: options.bufferSize)
            } catch {
                _ = POSIX.closeDescriptor(fd)
                POSIX.removeItem(temporaryPath)
                throw .zlibFailure(path: path, status: error.status)
            }
        }
        self.fd = fd
        self.temporaryPath = temporaryPath
        self.deflater = deflater
        self.takesMembers = options.compression == .gzipMembers
        self.path = path
        self.syncOnClose = options.syncOnClose
        self.flushes = options.writesWholeBlocks ? options.flushes : nil
        // A record is never removed: `deinit` removes only an uncommitted file.
        self.committed = options.keepsRecord
        if options.writesWholeBlocks {
            // Block-aligned, in whole blocks: what O_DIRECT takes.
            let size = (options.bufferSize + Self.directBlock - 1) / Self.directBlock * Self.directBlock
            self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: Self.directBlock).bindMemory(to: UInt8.self)
        } else {
            self.buffer = .allocate(capacity: options.bufferSize)
        }
    }

    deinit {
        buffer.deallocate()
        if fd >= 0 { _ = POSIX.closeDescriptor(fd) }
        if !committed { POSIX.removeItem(temporaryPath) }
    }

    /// Writes of at least this many bytes to a plain file skip the buffer: a dry run's batch of
    /// request lines goes to the kernel from where it was rendered, after what is buffered, in
    /// one `writev` (the copy into the buffer was a second pass over every byte of the run).
    static let directWriteBytes = 64 * 1024

    /// Appends `bytes`.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(OutputFileError) {
        precondition(!takesMembers, "a .gzipMembers file takes whole members (writeMember)")
        try append(bytes)
    }

    /// Appends `member`, one whole gzip member (`GzipMember.compress`) of `lines`: `.gzipMembers`
    /// files only. An empty `member` for non-empty `lines` (the worker's zlib could not start) is
    /// compressed here at `level`; if zlib fails again, the write fails with its status.
    public mutating func writeMember(_ member: UnsafeRawBufferPointer, of lines: UnsafeRawBufferPointer, level: Int = 6) throws(OutputFileError) {
        precondition(takesMembers, "writeMember is for .gzipMembers files")
        if let failure { throw failure }
        let before = bytesWritten
        if member.isEmpty && !lines.isEmpty {
            try appendMember(compressing: lines, level: level)
        } else {
            try append(member)
        }
        bytesWritten = before + lines.count
    }

    /// Compresses `lines` into one member here and appends it; a zlib that cannot start fails
    /// the file with its status.
    private mutating func appendMember(compressing lines: UnsafeRawBufferPointer, level: Int) throws(OutputFileError) {
        var member: [UInt8] = []
        do {
            try GzipMember.compress(lines, level: level, into: &member)
        } catch {
            failure = .zlibFailure(path: path, status: error.status)
            throw failure!
        }
        let appended = member.withUnsafeBytes { member in Result { () throws(OutputFileError) in try append(member) } }
        try appended.get()
    }

    private mutating func append(_ all: UnsafeRawBufferPointer) throws(OutputFileError) {
        if let failure { throw failure }
        var bytes = all
        if directOffset != nil {
            let taken = try appendAroundPageCache(bytes)
            bytesWritten += taken
            // All of it, unless the file system refused O_DIRECT midway: the rest goes the usual way.
            guard taken < bytes.count else { return }
            bytes = UnsafeRawBufferPointer(rebasing: bytes[taken...])
        }
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if deflater == nil, bytes.count >= Self.directWriteBytes {
            let head = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<buffered]))
            buffered = 0
            if case .failure(let error) = POSIX.writeAll(fd, head, bytes) {
                failure = .writeFailed(path: path, error)
                throw failure!
            }
            bytesOnDisk += head.count + bytes.count
            bytesWritten += bytes.count
            return
        }
        if bytes.count > buffer.count - buffered {
            try flushBuffer()
        }
        if bytes.count <= buffer.count - buffered {
            UnsafeMutableRawPointer(buffer.baseAddress! + buffered).copyMemory(from: source, byteCount: bytes.count)
            buffered += bytes.count
        } else {
            // Larger than the (now empty) buffer: skip the copy, straight to write(2) or deflate.
            try emit(bytes.assumingMemoryBound(to: UInt8.self))
        }
        bytesWritten += bytes.count
    }

    /// Appends `bytes`.
    public mutating func write(_ bytes: some Collection<UInt8>) throws(OutputFileError) {
        let outcome = bytes.withContiguousStorageIfAvailable { storage in
            Result { () throws(OutputFileError) in try write(UnsafeRawBufferPointer(storage)) }
        }
        switch outcome {
        case .success?: return
        case .failure(let error)?: throw error
        case nil: try write(Array(bytes))
        }
    }

    /// Hands the buffered bytes on now rather than when the buffer is full: for a plain file
    /// they are in the (temporary) file once this returns, so a process killed later (SIGKILL,
    /// a crash) leaves them on disk. A sending run calls it at least every second: with a 1 MiB
    /// buffer, a killed run's results otherwise never left the process (0-byte `.tmp` files
    /// after thousands of sends). For gzip the bytes go to the deflater, which writes whole
    /// blocks. No fsync: that is `syncOnClose`'s job.
    public mutating func flush() throws(OutputFileError) {
        if let failure { throw failure }
        try flushBuffer()
    }

    /// Appends `bytes` and a newline: one NDJSON record.
    public mutating func writeLine(_ bytes: some Collection<UInt8>) throws(OutputFileError) {
        try write(bytes)
        var newline: UInt8 = 0x0A
        try withUnsafeBytes(of: &newline) { (byte) throws(OutputFileError) in try write(byte) }
    }

    /// Flushes, ends the gzip member, optionally syncs, and moves the file to `path`; returns the
    /// file's size on disk. On failure the temporary file is removed and nothing appears under
    /// `path`.
    @discardableResult
    public consuming func close() throws(OutputFileError) -> Int {
        if let failure { throw failure }
        if takesMembers && bytesOnDisk == 0 && buffered == 0 {
            // No member came: an empty one, so the file is valid gzip, as the streaming writer's is.
            try appendMember(compressing: UnsafeRawBufferPointer(start: nil, count: 0), level: 6)
        }
        try flushBuffer()
        if let deflater {
            try compress(deflater, UnsafeBufferPointer(start: nil, count: 0), finish: true)
        }
        if syncOnClose, case .failure(let error) = POSIX.syncToDisk(fd) {
            throw .syncFailed(path: path, error)
        }
        let closing = fd
        fd = -1
        if case .failure(let error) = POSIX.closeDescriptor(closing) {
            throw .closeFailed(path: path, error)
        }
        try Self.checkReplaceable(path)
        if case .failure(let error) = POSIX.renameItem(temporaryPath, to: path) {
            throw .renameFailed(path: path, error)
        }
        committed = true
        if syncOnClose, case .failure(let error) = POSIX.syncDirectory(directory(of: path)) {
            throw .syncFailed(path: path, error)
        }
        return bytesOnDisk
    }

    /// `path` must be absent or a regular file: a rename would replace a symlink, FIFO or device
    /// node itself, and a directory cannot hold our data.
    static func checkReplaceable(_ path: String) throws(OutputFileError) {
        switch POSIX.entryKind(path) {
        case .success(nil), .success(.regular?): return
        case .success(let kind?): throw .notRegularFile(path: path, kind: kind.name)
        case .failure(let error): throw .createFailed(path: path, error)
        }
    }

    /// `path.<pid>-<16 hex digits>.tmp`: unique to this writer, so two writers never share one.
    static func uniqueTemporaryPath(for path: String) -> String {
        var random = SystemRandomNumberGenerator()
        let token = String(random.next() as UInt64, radix: 16)
        return path + ".\(POSIX.processID)-\(token).tmp"
    }

    private mutating func flushBuffer() throws(OutputFileError) {
        if directOffset != nil {
            try flushAroundPageCache()
            if directOffset != nil { return }
        }
        guard buffered > 0 else { return }
        let count = buffered
        buffered = 0
        try emit(UnsafeBufferPointer(rebasing: buffer[..<count]))
    }

    /// Sends bytes on: compressed through the deflater, or straight to the file.
    private mutating func emit(_ bytes: UnsafeBufferPointer<UInt8>) throws(OutputFileError) {
        if let deflater {
            // zlib counts input in UInt32: feed very large writes in buffer-sized slices.
            var start = 0
            while start < bytes.count {
                let end = Swift.min(start + buffer.count, bytes.count)
                try compress(deflater, UnsafeBufferPointer(rebasing: bytes[start..<end]), finish: false)
                start = end
            }
        } else {
            try writeToFile(UnsafeRawBufferPointer(bytes))
        }
    }

    private mutating func compress(_ deflater: GzipDeflater, _ bytes: UnsafeBufferPointer<UInt8>, finish: Bool) throws(OutputFileError) {
        let fd = fd
        let path = path
        var produced = 0
        defer { bytesOnDisk += produced }
        do {
            try deflater.compress(bytes, finish: finish) { (compressed) throws(POSIX.Errno) in
                try POSIX.writeAll(fd, UnsafeRawBufferPointer(compressed)).get()
                produced += compressed.count
            }
        } catch {
            failure = .writeFailed(path: path, error)
            throw failure!
        }
    }

    private mutating func writeToFile(_ bytes: UnsafeRawBufferPointer) throws(OutputFileError) {
        if case .failure(let error) = POSIX.writeAll(fd, bytes) {
            failure = .writeFailed(path: path, error)
            throw failure!
        }
        bytesOnDisk += bytes.count
    }
}

// MARK: Around the page cache

extension OutputFile {
    /// Copies `bytes` into the aligned buffer; each time it fills, its blocks go to the file.
    /// Returns how many bytes it took: all of them, unless the file system refused O_DIRECT
    /// midway (the buffer's bytes are then the usual path's to write).
    private mutating func appendAroundPageCache(_ bytes: UnsafeRawBufferPointer) throws(OutputFileError) -> Int {
        var taken = 0
        while taken < bytes.count {
            let count = Swift.min(buffer.count - buffered, bytes.count - taken)
            UnsafeMutableRawPointer(buffer.baseAddress! + buffered).copyMemory(from: bytes.baseAddress! + taken, byteCount: count)
            buffered += count
            taken += count
            if buffered == buffer.count {
                try writeWholeBlocks()
                if directOffset == nil { break }
            }
        }
        return taken
    }

    /// Writes the buffer's whole blocks with O_DIRECT and moves the partial block that follows
    /// them (if any) to the buffer's start.
    private mutating func writeWholeBlocks() throws(OutputFileError) {
        try followDeviceFlushes()
        guard let offset = directOffset else { return }
        let whole = buffered / Self.directBlock * Self.directBlock
        guard whole > 0 else { return }
        if directSuspended { bytesWrittenDuringFlushes += whole }
        switch POSIX.writeAll(fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<whole])), at: offset) {
        case .success:
            break
        case .failure(let error) where error.isInvalidArgument:
            // The file system took the flag but not the write: carry on through the page cache.
            try leaveDirectWrites()
            return
        case .failure(let error):
            failure = .writeFailed(path: path, error)
            throw failure!
        }
        bytesOnDisk = Swift.max(bytesOnDisk, offset + whole)
        directOffset = offset + whole
        let tail = buffered - whole
        if tail > 0 {
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: buffer.baseAddress! + whole, byteCount: tail)
        }
        buffered = tail
    }

    /// Puts every byte written so far in the file: the whole blocks with O_DIRECT, the partial
    /// block after them through the page cache (it stays in the buffer, to be written again,
    /// whole, when more bytes complete it).
    private mutating func flushAroundPageCache() throws(OutputFileError) {
        try writeWholeBlocks()
        guard let offset = directOffset, buffered > 0 else { return }
        guard directSuspended || POSIX.setDirect(fd, false) else {
            try leaveDirectWrites()
            return
        }
        let tail = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<buffered]))
        if case .failure(let error) = POSIX.writeAll(fd, tail, at: offset) {
            failure = .writeFailed(path: path, error)
            throw failure!
        }
        bytesOnDisk = offset + buffered
        if !directSuspended, !POSIX.setDirect(fd, true) { try leaveDirectWrites() }
    }

    /// Whether the descriptor has O_DIRECT now, as the kernel says (tests).
    var descriptorIsDirect: Bool { POSIX.isDirect(fd) }

    /// Turns O_DIRECT off while an fsync of `flushes` runs and on again once none does. Where it
    /// cannot be turned off, writes stay direct; where it cannot be turned on again, the file
    /// goes on through the page cache.
    private mutating func followDeviceFlushes() throws(OutputFileError) {
        // A file that left direct writes for good (`leaveDirectWrites`) never takes O_DIRECT again.
        guard let flushes, directOffset != nil else { return }
        let suspend = flushes.inProgress
        guard suspend != directSuspended else { return }
        if POSIX.setDirect(fd, !suspend) {
            directSuspended = suspend
        } else if !suspend {
            try leaveDirectWrites()
        }
    }

    /// From here on, writes go through the page cache at the file position: the buffer's bytes
    /// (from `directOffset`) are written again from there by the usual path.
    private mutating func leaveDirectWrites() throws(OutputFileError) {
        guard let offset = directOffset else { return }
        directOffset = nil
        directSuspended = false
        _ = POSIX.setDirect(fd, false)
        if case .failure(let error) = POSIX.seek(fd, to: offset) {
            failure = .writeFailed(path: path, error)
            throw failure!
        }
        bytesOnDisk = offset
    }
}

/// The directory part of `path` (`.` when it has none), for syncing a rename.
private func directory(of path: String) -> String {
    guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    if slash == path.utf8.startIndex { return "/" }
    return String(path[..<slash])
}

// MARK: Checkpoint and resume

extension OutputFile {
    /// Where a resumed file continues.
    public enum ResumeCut: Sendable, Equatable {
        /// After exactly this many bytes, which a checkpoint recorded: what follows belongs to
        /// lines after the checkpoint (written again by the resumed run) or is a torn write. For
        /// gzip, a member ended there.
        case at(Int)
        /// After the last whole line, keeping at least this many bytes: a record written in
        /// completion order (sent, failed…) is kept whatever line it is of; only a torn last line
        /// (no newline) is dropped.
        case afterLastLine(atLeast: Int)
    }

    /// Continues a killed or stopped run's file `temporaryPath` (renamed to `path` on close): it is
    /// cut at `cut` and written after that. The kept part must end a line (or be empty).
    public init(resuming temporaryPath: String, path: String, cut: ResumeCut, options: Options = Options()) throws(OutputFileError) {
        try Self.checkReplaceable(path)
        let fd: Int32
        switch POSIX.openForResume(temporaryPath) {
        case .success(let descriptor): fd = descriptor
        case .failure(let error): throw .createFailed(path: path, error)
        }
        func fail(_ error: OutputFileError) -> OutputFileError {
            _ = POSIX.closeDescriptor(fd)
            return error
        }
        switch POSIX.descriptorKind(fd) {
        case .success(.regular): break
        case .success(let kind): throw fail(.notRegularFile(path: temporaryPath, kind: kind.name))
        case .failure(let error): throw fail(.createFailed(path: path, error))
        }
        let size = POSIX.fileSize(fd)
        let length: Int
        switch cut {
        case .at(let bytes):
            guard bytes >= 0, size >= bytes else {
                throw fail(.resumeMismatch(path: path, "it holds \(size) bytes, fewer than the \(bytes) the checkpoint recorded"))
            }
            let plain = if case .none = options.compression { true } else { false }
            if plain, bytes > 0, POSIX.byte(fd, at: bytes - 1) != 0x0A {
                throw fail(.resumeMismatch(path: path, "byte \(bytes) is not the end of a line"))
            }
            length = bytes
        case .afterLastLine(let atLeast):
            guard atLeast >= 0, size >= atLeast else {
                throw fail(.resumeMismatch(path: path, "it holds \(size) bytes, fewer than the \(atLeast) the checkpoint recorded"))
            }
            guard let end = POSIX.endOfLastLine(fd, size: size) else {
                throw fail(.resumeMismatch(path: path, "it cannot be read"))
            }
            guard end >= atLeast else {
                throw fail(.resumeMismatch(path: path, "byte \(atLeast) recorded by the checkpoint is not the end of a line"))
            }
            length = end
        }
        if case .failure(let error) = POSIX.truncateAndSeek(fd, to: length) {
            throw fail(.writeFailed(path: path, error))
        }
        try self.init(path: path, temporaryPath: temporaryPath, descriptor: fd, options: options)
        bytesOnDisk = length
        bytesWritten = length
        // The file holds a previous run's record: dropped without `close()` (a failure), it is
        // kept for the next resume rather than removed.
        committed = true
    }

    /// Makes everything written so far a point a resume can continue from: the buffer is
    /// written, a gzip member is ended (the next bytes start a new one; concatenated members are
    /// one gzip file to `gzip -d` and to the audience reader), and with `sync` the file is
    /// fsynced. Returns the file's size on disk, which the checkpoint records.
    public mutating func checkpoint(sync: Bool) throws(OutputFileError) -> Int {
        if let failure { throw failure }
        try flushBuffer()
        if let deflater, deflater.hasInputSinceMemberStart {
            try compress(deflater, UnsafeBufferPointer(start: nil, count: 0), finish: true)
            deflater.startNewMember()
        }
        if sync, case .failure(let error) = POSIX.syncToDisk(fd) {
            failure = .syncFailed(path: path, error)
            throw failure!
        }
        return bytesOnDisk
    }
}

/// A second descriptor of an output file, to fsync it from another thread while the writer goes
/// on (`OutputFile.syncHandle()`): what was written before the handle was taken is durable once
/// `sync()` returns.
public final class FileSyncHandle: Sendable {
    private let fd: Int32
    public let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { if fd >= 0 { _ = POSIX.closeDescriptor(fd) } }

    public func sync() throws(OutputFileError) {
        if case .failure(let error) = POSIX.syncToDisk(fd) { throw .syncFailed(path: path, error) }
    }
}

extension OutputFile {
    /// A handle that fsyncs this file from another thread (a dry run's checkpoints).
    public func syncHandle() -> FileSyncHandle {
        FileSyncHandle(fd: POSIX.duplicate(fd), path: path)
    }
}
