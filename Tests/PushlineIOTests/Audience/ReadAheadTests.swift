import Foundation
@testable import PushlineIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A reader of a regular file keeps the next `readAheadWindow` bytes on their way into the page
/// cache, so that a disk busy with the run's own fsyncs (a cache flush holds up every read queued
/// behind it) does not leave the reader waiting. Seen from outside, with `mincore(2)`: after the
/// first step, pages far past the kernel's own read-ahead (`read_ahead_kb`, 128 KiB to 8 MiB) come
/// into memory without anyone reading them.
@Suite struct ReadAheadTests {
    static let fileBytes = 48 << 20

    /// Whether files under the temporary directory can be dropped from memory (not on tmpfs,
    /// which has no disk to read them back from: read-ahead cannot be seen there).
    static let temporaryDirectoryDropsPages: Bool = {
        #if os(Linux)
        guard let directory = try? TemporaryDirectory() else { return false }
        defer { directory.cleanUp() }
        guard let path = try? directory.write([UInt8](repeating: 0x41, count: 1 << 20), to: "probe") else { return false }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return dropFromMemory(fd) && residentFraction(fd, 0..<(1 << 20)) < 0.5
        #else
        return false
        #endif
    }()

    @Test(.enabled(if: temporaryDirectoryDropsPages, "the temporary directory's file system keeps files in memory (tmpfs?): read-ahead cannot be seen there"))
    func aRegularFileIsReadAheadFarPastTheKernelsOwnReadAhead() throws {
        #if os(Linux)
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let line = Array(("{\"id\":\"" + String(repeating: "r", count: 90) + "\"}\n").utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.fileBytes + line.count)
        while bytes.count < Self.fileBytes { bytes += line }
        let path = try directory.write(bytes, to: "audience.ndjson")
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(Self.dropFromMemory(fd))
        // From 24 to 32 MiB past the first read: beyond any kernel read-ahead, within the window
        // (nine pages in ten: room for a page the kernel drops again, none without the advice).
        let far = (24 << 20)..<(32 << 20)
        try #require(Self.residentFraction(fd, far) < 0.5, "the file was dropped from memory")

        var reader = try AudienceReader(path: path, options: .init(readBufferSize: 1 << 20))
        var lines = 0
        if case .batch(let batch) = try reader.nextStep(splittingAtMost: 1) { lines += batch.lines.count }
        #expect(reader.bytesRead <= 2 << 20, "one or two reads so far, not the file")
        // The reads are queued, not awaited: give the disk time (a hang guard, not a measurement;
        // the whole test took 52 s once under full CI load, 0.7 s alone).
        var fraction = Self.residentFraction(fd, far)
        let deadline = ContinuousClock.now + .seconds(120)
        while fraction < 0.9, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            fraction = Self.residentFraction(fd, far)
        }
        #expect(fraction >= 0.9, "24-32 MiB ahead of the reading is in memory: \(fraction)")

        // And the reading itself is untouched: every line.
        while let batch = try reader.nextBatch() { lines += batch.lines.count }
        #expect(lines == bytes.count / line.count)
        #endif
    }

    #if os(Linux)
    /// Writes the file's pages back and asks the kernel to drop them.
    static func dropFromMemory(_ fd: Int32) -> Bool {
        fsync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0
    }

    /// The share of the pages of `range` that are in memory.
    static func residentFraction(_ fd: Int32, _ range: Range<Int>) -> Double {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let map = mmap(nil, range.count, PROT_READ, MAP_SHARED, fd, off_t(range.lowerBound)), map != MAP_FAILED else { return 0 }
        defer { munmap(map, range.count) }
        let pages = (range.count + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(map, range.count, &vector) == 0 else { return 0 }
        return Double(vector.count { $0 & 1 == 1 }) / Double(pages)
    }
    #endif
}
