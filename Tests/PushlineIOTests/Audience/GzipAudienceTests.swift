import Foundation
import PushlineCore
import PushlineIO
import Testing

/// Gzip input made by the system tools (`gzip`, `pigz`), read back line for line.
@Suite(.enabled(if: Shell.has("gzip"), "needs the system gzip binary"))
struct GzipAudienceTests {
    @Test(arguments: [(2, 1), (3, 7), (64, 5), (256 << 10, 1 << 20)])
    func readsSystemGzipWhateverTheBufferSizes(readBufferSize: Int, inflateBufferSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(LineSplittingTests.input, to: "plain")
        // No .gz in the name: gzip is recognised by its magic bytes.
        let path = directory.file("audience.ndjson")
        try Shell.require("gzip -c \(Shell.quoted(plain)) > \(Shell.quoted(path))")

        let options = AudienceReader.Options(maxBatchLines: 2, readBufferSize: readBufferSize, inflateBufferSize: inflateBufferSize)
        var reader = try AudienceReader(path: path, options: options)
        let result = readAll(&reader)
        #expect(result.error == nil)
        #expect(result.numbers == LineSplittingTests.expected.map(\.0))
        #expect(result.texts == LineSplittingTests.expected.map(\.1))
        expectWellFormedBatches(result, totalLines: 8, options: options)
        let (isGzip, bytesRead, uncompressed) = (reader.isGzip, reader.bytesRead, reader.uncompressedBytes)
        #expect(isGzip)
        #expect(bytesRead == (try fileSize(path)))
        #expect(uncompressed == LineSplittingTests.input.count)
    }

    @Test(.enabled(if: Shell.has("pigz"), "needs pigz"), arguments: [["-6"], ["-1", "-b", "32"], ["-9", "-i", "-b", "64"]])
    func readsPigzOutput(flags: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 20_000, blankEvery: 333), to: "plain")
        let path = directory.file("audience.ndjson.gz")
        try Shell.require("pigz -p 2 \(flags.joined(separator: " ")) -c \(Shell.quoted(plain)) > \(Shell.quoted(path))")
        let result = try readAll(path: path, options: .init(maxBatchLines: 1000))
        #expect(result.error == nil)
        let expected = Records.expected(lines: 20_000, blankEvery: 333)
        #expect(result.numbers == expected)
        #expect(result.texts == expected.map(Records.line))
        expectWellFormedBatches(result, totalLines: 20_000, options: .init(maxBatchLines: 1000))
    }

    /// `cat a.gz empty.gz b.gz`: three members, line numbers running on across them.
    @Test func readsConcatenatedMembers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let first = try directory.write(Records.file(lines: 1000), to: "a")
        let empty = try directory.write([], to: "empty")
        let second = try directory.write(Records.file(lines: 1000, blankEvery: 10, firstNumber: 1001), to: "b")
        for file in [first, empty, second] {
            try Shell.require("gzip -k \(Shell.quoted(file))")
        }
        let path = directory.file("all.ndjson.gz")
        try Shell.require("cat \(Shell.quoted(first)).gz \(Shell.quoted(empty)).gz \(Shell.quoted(second)).gz > \(Shell.quoted(path))")

        let expected = Records.expected(lines: 1000) + Records.expected(lines: 1000, blankEvery: 10, firstNumber: 1001)
        // The default buffers, then a read size that ends exactly at the first member's end.
        let firstMemberSize = try fileSize(first + ".gz")
        for readBufferSize in [256 << 10, firstMemberSize, 1000] {
            let result = try readAll(path: path, options: .init(readBufferSize: readBufferSize))
            #expect(result.error == nil)
            #expect(result.numbers == expected)
            #expect(result.texts == expected.map(Records.line))
        }
    }

    /// Concatenated members (one of them empty) read with every small read size and output
    /// buffer: each split of a header, a trailer or the junk or cut member after the last is read
    /// the same way.
    @Test func readsConcatenatedMembersWhateverTheSplits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        var whole: [UInt8] = []
        var expected: [Int] = []
        for (index, lines) in [3, 0, 1, 4].enumerated() {
            let first = expected.count + 1
            let plain = try directory.write(Records.file(lines: lines, firstNumber: first), to: "part\(index)")
            try Shell.require("gzip -n \(Shell.quoted(plain))")
            whole += try [UInt8](Data(contentsOf: URL(fileURLWithPath: plain + ".gz")))
            expected += lines == 0 ? [] : Array(first..<(first + lines))
        }
        let path = try directory.write(whole, to: "members.gz")
        let junkPath = try directory.write(whole + Array("junk".utf8), to: "junk.gz")
        let cutPath = try directory.write(whole + [0x1F, 0x8B, 0x08], to: "cut.gz")
        for readBufferSize in 2...17 {
            for inflateBufferSize in [1, 2, 3, 5, 8, 64] {
                let options = AudienceReader.Options(maxBatchLines: 3, readBufferSize: readBufferSize, inflateBufferSize: inflateBufferSize)
                let result = try readAll(path: path, options: options)
                #expect(result.error == nil, "read \(readBufferSize), inflate \(inflateBufferSize)")
                #expect(result.numbers == expected, "read \(readBufferSize), inflate \(inflateBufferSize)")
                #expect(result.texts == expected.map(Records.line))

                let junk = try readAll(path: junkPath, options: options)
                #expect(junk.numbers == expected)
                #expect(junk.error?.code == .corruptGzip, "read \(readBufferSize), inflate \(inflateBufferSize)")
                #expect(junk.error?.compressedOffset.map { $0 >= whole.count && $0 <= whole.count + 4 } == true)

                let cut = try readAll(path: cutPath, options: options)
                #expect(cut.numbers == expected)
                #expect(cut.error?.code == .truncatedGzip, "read \(readBufferSize), inflate \(inflateBufferSize)")
            }
        }
    }

    /// A member whose header carries every optional field (FEXTRA, FNAME, FCOMMENT and a header
    /// CRC), as few tools write but RFC 1952 allows, read whole and two bytes at a time; gzip
    /// reads it too, and refuses it once the header CRC is wrong, as we do.
    @Test func readsAHeaderWithEveryOptionalField() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 300), to: "plain")
        let bare = directory.file("bare.gz")
        try Shell.require("gzip -n -c \(Shell.quoted(plain)) > \(Shell.quoted(bare))")
        let member = try [UInt8](Data(contentsOf: URL(fileURLWithPath: bare)))
        try #require(member.count > 18 && member[3] == 0, "gzip -n writes a bare 10-byte header")
        var header: [UInt8] = [0x1F, 0x8B, 0x08, 0x1E, 0, 0, 0, 0, 0, 3]  // FHCRC|FEXTRA|FNAME|FCOMMENT
        header += [6, 0, UInt8(ascii: "P"), UInt8(ascii: "L"), 2, 0, 0xAA, 0xBB]  // XLEN, one subfield
        header += Array("audience.ndjson".utf8) + [0] + Array("nightly campaign".utf8) + [0]
        let headerCRC = GzipTestCRC.crc32(header) & 0xFFFF
        let whole = header + [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)] + member[10...]
        let path = try directory.write(whole, to: "fields.gz")
        try #require(try Shell.run("gzip -t \(Shell.quoted(path)) 2>/dev/null") == 0, "gzip reads the header")
        for readBufferSize in [256 << 10, 2] {
            let result = try readAll(path: path, options: .init(readBufferSize: readBufferSize, inflateBufferSize: 7))
            #expect(result.error == nil)
            #expect(result.numbers == Array(1...300))
            #expect(result.texts == (1...300).map(Records.line))
        }

        var badCRC = whole
        badCRC[header.count] ^= 0x01
        try expectCorruptAsGzipSays(try directory.write(badCRC, to: "bad-header-crc.gz"))
    }

    /// Damaged copies of one file (a flipped byte anywhere or in the header or trailer, a cut,
    /// junk appended), each judged by the system gzip as well: the reader fails exactly when gzip
    /// does, and when both accept, the lines are the original ones. Never a trap.
    @Test func failsExactlyWhenGzipDoes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 2000), to: "plain")
        let whole = directory.file("whole.gz")
        try Shell.require("gzip -c \(Shell.quoted(plain)) > \(Shell.quoted(whole))")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        var generator = SplitMix64(seed: 12)
        var copies: [(name: String, bytes: [UInt8])] = []
        for index in 0..<90 {
            var copy = bytes
            // A third of the flips land in the header (method, flags, the name "plain") or the
            // trailer (CRC-32, length), which a random position rarely hits. Not in the magic
            // bytes: without them the file is plain text by design, and its lines are rejected
            // as JSON later.
            let region = index >= 60 ? (index % 2 == 0 ? 2..<16 : (copy.count - 8)..<copy.count) : 2..<copy.count
            let position = region.lowerBound + Int(generator.next() % UInt64(region.count))
            switch index >= 60 ? 0 : index % 3 {
            case 0: copy[position] ^= UInt8(1 + generator.next() % 255)
            case 1: copy.removeSubrange(position...)
            default: copy += (0..<(1 + Int(generator.next() % 12))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            }
            copies.append(("copy-\(index)", copy))
        }
        var disagreements: [String] = []
        for copy in copies {
            let path = try directory.write(copy.bytes, to: copy.name + ".gz")
            // 0: fine; 2: a warning, such as trailing zeros ignored, which we refuse: skip those.
            let gzipStatus = try Shell.run("gzip -t \(Shell.quoted(path)) 2>/dev/null")
            guard gzipStatus != 2 else { continue }
            for readBufferSize in [256 << 10, 3] {
                let result = try readAll(path: path, options: .init(readBufferSize: readBufferSize))
                let accepted = result.error == nil
                if accepted != (gzipStatus == 0) {
                    disagreements.append("\(copy.name) read \(readBufferSize): gzip \(gzipStatus), ours \(result.error?.description ?? "accepted")")
                }
                if accepted {
                    #expect(result.numbers == Array(1...2000))
                    #expect(result.texts == (1...2000).map(Records.line))
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    /// A file cut in the middle: every complete line before the cut comes back, exactly, then the error.
    @Test func truncatedFileReturnsCompleteLinesThenFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 50_000), to: "plain")
        let whole = directory.file("whole.gz")
        try Shell.require("gzip -c \(Shell.quoted(plain)) > \(Shell.quoted(whole))")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        let path = try directory.write(Array(bytes[..<(bytes.count / 2)]), to: "cut.ndjson.gz")

        let result = try readAll(path: path, options: .init(maxBatchLines: 512))
        let error = try #require(result.error)
        #expect(error.code == .truncatedGzip)
        #expect(error.path == path)
        #expect(error.description.contains(path))
        let offset = try #require(error.compressedOffset)
        #expect(offset > 0 && offset <= bytes.count / 2)
        // About half the lines survive; each is exact and none is a torn tail.
        #expect(result.lines.count > 10_000 && result.lines.count < 50_000)
        #expect(result.numbers == Array(1...result.lines.count))
        #expect(result.texts == result.numbers.map(Records.line))
    }

    @Test func corruptDeflateDataFailsWithItsOffset() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 50_000), to: "plain")
        let whole = directory.file("whole.gz")
        try Shell.require("gzip -c \(Shell.quoted(plain)) > \(Shell.quoted(whole))")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        bytes[bytes.count / 2] ^= 0xFF
        let path = try directory.write(bytes, to: "corrupt.ndjson.gz")
        try #require(try Shell.run("gzip -t \(Shell.quoted(path)) 2>/dev/null") != 0, "gzip agrees the file is corrupt")

        let result = try readAll(path: path)
        let error = try #require(result.error)
        #expect(error.code == .corruptGzip)
        #expect(error.path == path)
        let offset = try #require(error.compressedOffset)
        #expect(offset >= 0 && offset <= bytes.count)
        #expect(result.lines.count < 50_000)
        #expect(result.numbers == Array(1..<(result.lines.count + 1)))
    }

    /// Bad deflate data on which ISA-L 2.30 leaves its count of unread input at 0xFFFFFFFF (it
    /// went below zero): a fuzz finding that trapped the reader, which took the count as given.
    /// Now the step is a corrupt-data failure, as gzip judges the file.
    @Test func badDataThatUnderflowsISALsInputCountIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let bytes: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0xFA, 0x08, 0x00, 0x00, 0x02, 0xFF, 0x85, 0x8F, 0xCD, 0x8E,
            0x00, 0x00, 0x9B, 0x30, 0x14, 0x85, 0xF7, 0x7D, 0x8A, 0x00,
        ]
        let path = try directory.write(bytes, to: "underflow.gz")
        for (readBufferSize, inflateBufferSize) in [(64 << 10, 5), (2, 1), (256 << 10, 1 << 20)] {
            try expectCorruptAsGzipSays(path, options: .init(readBufferSize: readBufferSize, inflateBufferSize: inflateBufferSize))
        }
    }

    /// A file `gzip -t` refuses gives no line and a corrupt-gzip error.
    private func expectCorruptAsGzipSays(_ path: String, options: AudienceReader.Options = .init(), sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(try Shell.run("gzip -t \(Shell.quoted(path)) 2>/dev/null") != 0, "gzip refuses the file", sourceLocation: sourceLocation)
        let result = try readAll(path: path, options: options)
        #expect(result.lines.isEmpty, sourceLocation: sourceLocation)
        #expect(result.error?.code == .corruptGzip, sourceLocation: sourceLocation)
    }

    /// Bytes after the last member that are not another member are refused, not ignored.
    @Test func trailingGarbageIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 10), to: "plain")
        let whole = directory.file("whole.gz")
        try Shell.require("gzip -c \(Shell.quoted(plain)) > \(Shell.quoted(whole))")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        let path = try directory.write(bytes + Array("junk".utf8), to: "garbage.gz")

        let result = try readAll(path: path)
        #expect(result.numbers == Array(1...10))
        let error = try #require(result.error)
        #expect(error.code == .corruptGzip)
        #expect(error.compressedOffset.map { $0 >= bytes.count && $0 <= bytes.count + 4 } == true)
    }

    /// A 5 MiB line with a 1 MiB limit, plain and gzip: reported, neighbours kept, never buffered whole.
    @Test(arguments: [false, true])
    func hugeLineIsSkippedWithoutBufferingIt(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let hugeLength = 5 << 20
        var bytes = Array("{\"a\":1}\n".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "x"), count: hugeLength)
        bytes += Array("\r\n{\"b\":2}\n".utf8)
        var path = try directory.write(bytes, to: "huge.ndjson")
        if gzip {
            try Shell.require("gzip \(Shell.quoted(path))")
            path += ".gz"
        }
        let options = AudienceReader.Options(maxLineBytes: 1 << 20)
        let result = try readAll(path: path, options: options)
        #expect(result.error == nil)
        #expect(result.numbers == [1, 3])
        #expect(result.texts == ["{\"a\":1}", "{\"b\":2}"])
        #expect(result.oversize == [LineBatch.OversizeLine(lineNumber: 2, byteLength: hugeLength)])
        for batch in result.batches {
            #expect(batch.buffer.capacity < 3 << 20, "the huge line was never held in a batch buffer")
        }
    }

    /// A few hundred thousand lines through `gzip -1`: exact numbers and bounded batches all the way.
    @Test func streamsALargeFileInBoundedBatches() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let count = 300_000
        let plain = try directory.write(Records.file(lines: count, blankEvery: 1009), to: "plain")
        let path = directory.file("large.ndjson.gz")
        try Shell.require("gzip -1 -c \(Shell.quoted(plain)) > \(Shell.quoted(path))")

        let options = AudienceReader.Options(maxBatchLines: 4096, maxBatchBytes: 256 << 10)
        var reader = try AudienceReader(path: path, options: options)
        var expected = Records.expected(lines: count, blankEvery: 1009).makeIterator()
        var batches: [LineBatch] = []
        var mismatches = 0
        while let batch = try reader.nextBatch() {
            #expect(batch.buffer.count < options.maxBatchBytes + 512)
            #expect(batch.lines.count <= options.maxBatchLines)
            for line in batch.lines {
                let number = expected.next()
                if line.lineNumber != number || batch[line].elementsEqual(Records.line(line.lineNumber).utf8) == false {
                    mismatches += 1
                }
            }
            batches.append(LineBatch(buffer: [], lines: [], oversizeLines: [], lineNumbers: batch.lineNumbers))
        }
        #expect(mismatches == 0)
        #expect(expected.next() == nil, "every line came back")
        #expect(batches.count > 50, "the file was streamed in many batches")
        expectWellFormedBatches(ReadResult(batches: batches), totalLines: count, options: options)
        let (lineCount, bytesRead) = (reader.lineCount, reader.bytesRead)
        #expect(lineCount == count)
        #expect(bytesRead == (try fileSize(path)))
    }

    /// Standard input is read through `init(fileDescriptor:...)` (what `path: "-"` calls with fd 0);
    /// a pipe fed by another thread exercises the same short-read path here.
    @Test func readsGzipFromAPipe() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let plain = try directory.write(Records.file(lines: 5000), to: "plain")
        try Shell.require("gzip \(Shell.quoted(plain))")
        let compressed = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))

        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let feeder = Thread {
            // Small writes so the reader sees short reads, including of the magic bytes.
            var offset = 0
            while offset < compressed.count {
                let end = min(offset + 1 + offset % 3000, compressed.count)
                writer.write(compressed[offset..<end])
                offset = end
            }
            try? writer.close()
        }
        feeder.start()
        var reader = try AudienceReader(
            fileDescriptor: pipe.fileHandleForReading.fileDescriptor, closesDescriptor: false, name: "-")
        let result = readAll(&reader)
        #expect(result.error == nil)
        #expect(result.numbers == Array(1...5000))
        #expect(result.texts == (1...5000).map(Records.line))
    }
}

func fileSize(_ path: String) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
}

/// CRC-32 (the gzip polynomial), for building headers in tests without a second inflater.
enum GzipTestCRC {
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
