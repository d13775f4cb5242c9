import Foundation
import PushlineCore
@testable import PushlineIO
import Testing

/// `bypassPageCache`: whole blocks go to the file with O_DIRECT, the partial block after them
/// through the page cache at each flush, checkpoint and close.
@Suite struct OutputFileAroundPageCacheTests {
    /// Whether the file system under the temporary directory takes an O_DIRECT write of one
    /// aligned block (ext4, xfs and, since Linux 6.6, tmpfs do).
    static let temporaryDirectoryTakesDirectWrites: Bool = {
        let path = NSTemporaryDirectory() + "pushline-direct-probe-" + UUID().uuidString
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: OutputFile.directBlock, alignment: OutputFile.directBlock)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0)
        guard POSIX.setDirect(fd, true) else { return false }
        if case .success = POSIX.writeAll(fd, UnsafeRawBufferPointer(block), at: 0) { return true }
        return false
    }()

    private static func contents(of path: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Where `file` first differs from `expected` (its length when one is a prefix of the
    /// other); nil when they are equal. A failure names an offset instead of dumping megabytes.
    private static func firstDifference(_ file: [UInt8], _ expected: [UInt8]) -> Int? {
        let common = min(file.count, expected.count)
        let same = file.withUnsafeBytes { a in expected.withUnsafeBytes { b in common == 0 || memcmp(a.baseAddress!, b.baseAddress!, common) == 0 } }
        if !same, let index = (0..<common).first(where: { file[$0] != expected[$0] }) { return index }
        return file.count == expected.count ? nil : common
    }

    /// Writes of every size around the block and buffer sizes, with flushes and checkpoints
    /// between them: after each, the file holds exactly the bytes written so far (no padding,
    /// nothing missing), and once closed, all of them in order.
    @Test(.enabled(if: temporaryDirectoryTakesDirectWrites, "skipped: the temporary directory's file system refuses O_DIRECT"),
          arguments: [1 as UInt64, 2, 3])
    func everyByteLandsInOrderAcrossFlushesAndCheckpoints(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson")
        var file = try OutputFile(path: path, options: .init(bufferSize: 64 << 10, bypassPageCache: true))
        let around = file.writesAroundPageCache
        #expect(around)
        var rng = SplitMix64(seed: seed)
        let block = OutputFile.directBlock
        let sizes = [0, 1, 7, block - 1, block, block + 1, 3 * block + 5, (64 << 10) - 1, 64 << 10, (64 << 10) + 1, 200_000]
        var expected: [UInt8] = []
        var checks = 0
        for round in 0..<120 {
            let size = sizes[Int(rng.next() % UInt64(sizes.count))]
            let chunk = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) }
            try chunk.withUnsafeBytes { try file.write($0) }
            expected += chunk
            let onDisk: Int
            switch rng.next() % 4 {
            case 0: onDisk = try file.checkpoint(sync: rng.next() % 2 == 0)
            case 1:
                try file.flush()
                onDisk = file.bytesOnDisk
            default: continue
            }
            checks += 1
            #expect(onDisk == expected.count, "round \(round)")
            // Its size and its last bytes (the partial block, written through the page cache);
            // every earlier byte is compared once closed.
            let temporary = file.temporaryPath
            let now = try Self.contents(of: temporary)
            #expect(now.count == expected.count, "round \(round): the file after a flush or checkpoint")
            #expect(Self.firstDifference(Array(now.suffix(3 * block)), Array(expected.suffix(3 * block))) == nil, "round \(round): the file's last bytes")
        }
        #expect(checks > 20)
        let (stillAround, written) = (file.writesAroundPageCache, file.bytesWritten)
        #expect(stillAround, "still around the page cache: no write was refused")
        #expect(written == expected.count)
        let onDisk = try file.close()
        #expect(onDisk == expected.count)
        #expect(Self.firstDifference(try Self.contents(of: path), expected) == nil)
    }

    /// A checkpoint's mark is where a resumed run continues (through the page cache): the
    /// resumed file is the checkpointed bytes, then the new ones.
    @Test(.enabled(if: temporaryDirectoryTakesDirectWrites, "skipped: the temporary directory's file system refuses O_DIRECT"))
    func aResumeContinuesFromTheCheckpointMark() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-fcm.ndjson")
        let kept = directory.file("killed.tmp")
        var expected: [UInt8] = []
        var mark = 0
        do {
            var file = try OutputFile(path: path, options: .init(bufferSize: 16 << 10, bypassPageCache: true))
            for number in 1...700 {
                let line = Array(Records.line(number).utf8) + [0x0A]
                try file.write(line)
                expected += line
            }
            mark = try file.checkpoint(sync: true)
            // Lines after the checkpoint: a killed run may have written them or not.
            try file.write(Array(Records.line(9_999).utf8) + [0x0A])
            try file.flush()
            // The run is killed here: its temporary file stays (a copy, as this writer removes its own).
            try FileManager.default.copyItem(atPath: file.temporaryPath, toPath: kept)
        }
        #expect(mark == expected.count)
        var resumed = try OutputFile(resuming: kept, path: path, cut: .at(mark))
        for number in 701...720 {
            let line = Array(Records.line(number).utf8) + [0x0A]
            try resumed.write(line)
            expected += line
        }
        try resumed.close()
        #expect(Self.firstDifference(try Self.contents(of: path), expected) == nil)
    }

    /// While a checkpoint's fsync runs (`DeviceFlushes`), whole blocks go through the page cache,
    /// as an O_DIRECT write would queue behind the disk's cache flush; once it ends they go
    /// around it again. Every byte lands in order either way.
    @Test(.enabled(if: temporaryDirectoryTakesDirectWrites, "skipped: the temporary directory's file system refuses O_DIRECT"))
    func wholeBlocksGoThroughThePageCacheWhileAnFsyncRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson")
        let flushes = DeviceFlushes()
        let bufferSize = 16 << 10
        var file = try OutputFile(path: path, options: .init(bufferSize: bufferSize, bypassPageCache: true, flushes: flushes))
        var expected: [UInt8] = []
        var rng = SplitMix64(seed: 5)
        var duringFlush = [Int]()
        var direct = [Bool]()
        for phase in 0..<3 {
            if phase == 1 { flushes.begin() }
            if phase == 2 { flushes.end() }
            let before = file.bytesWrittenDuringFlushes
            while expected.count < (phase + 1) * 10 * bufferSize {
                let piece = (0..<Int(1 + rng.next() % 3_000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                try piece.withUnsafeBytes { try file.write($0) }
                expected += piece
            }
            duringFlush.append(file.bytesWrittenDuringFlushes - before)
            direct.append(file.descriptorIsDirect)
            if phase == 1 {
                // A checkpoint during the flush: the partial block, too, through the page cache.
                #expect(try file.checkpoint(sync: false) == expected.count)
            }
        }
        #expect(duringFlush[0] == 0, "no fsync yet: every whole block around the page cache")
        #expect(duringFlush[1] >= 8 * bufferSize, "during the fsync: through the page cache")
        #expect(duringFlush[2] == 0, "after it: around the page cache again")
        #expect(direct == [true, false, true], "the descriptor's O_DIRECT flag, as the kernel has it")
        let around = file.writesAroundPageCache
        #expect(around)
        let onDisk = try file.close()
        #expect(onDisk == expected.count)
        #expect(Self.firstDifference(try Self.contents(of: path), expected) == nil)
    }
}
