import Foundation
import PushlineIO
import Testing

/// Line splitting on plain NDJSON files, under many chunkings: expected values are written by hand
/// from the input below.
@Suite struct LineSplittingTests {
    /// BOM + CRLF on line 1, blank lines (empty, whitespace, lone CR), an inner CR, a BOM that is
    /// not at the start of the file, and no final newline.
    static let input: [UInt8] = Array(
        "\u{FEFF}{\"a\":1}\r\n\n   \t \r\n{\"b\":\"x y\"}\n\r\n{\"c\":\"x\ry\"}\n\u{FEFF}{\"d\":4}\n{\"e\":5}".utf8
    )
    static let expected: [(Int, String)] = [
        (1, "{\"a\":1}"),
        (4, "{\"b\":\"x y\"}"),
        (6, "{\"c\":\"x\ry\"}"),
        (7, "\u{FEFF}{\"d\":4}"),
        (8, "{\"e\":5}"),
    ]

    @Test(arguments: [2, 3, 5, 16, 4096])
    func splitsLinesWhateverTheReadSize(readBufferSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write(Self.input, to: "audience.ndjson")
        for (maxBatchLines, maxBatchBytes) in [(1, 1 << 20), (2, 1 << 20), (4096, 1), (4096, 8), (4096, 1 << 20)] {
            let options = AudienceReader.Options(
                maxBatchLines: maxBatchLines, maxBatchBytes: maxBatchBytes, readBufferSize: readBufferSize)
            let result = try readAll(path: path, options: options)
            #expect(result.error == nil)
            #expect(result.numbers == Self.expected.map(\.0))
            #expect(result.texts == Self.expected.map(\.1))
            #expect(result.oversize.isEmpty)
            expectWellFormedBatches(result, totalLines: 8, options: options)
        }
        var reader = try AudienceReader(path: path, options: .init(readBufferSize: readBufferSize))
        _ = readAll(&reader)
        let (isGzip, lineCount, bytesRead, uncompressed) =
            (reader.isGzip, reader.lineCount, reader.bytesRead, reader.uncompressedBytes)
        #expect(!isGzip)
        #expect(lineCount == 8)
        #expect(bytesRead == Self.input.count)
        #expect(uncompressed == Self.input.count)
    }

    @Test func batchBuffersHoldOnlyTheLineBytes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write(Self.input, to: "audience.ndjson")
        let result = try readAll(path: path)
        let batch = try #require(result.batches.first)
        #expect(result.batches.count == 1)
        // Terminators, trailing CRs and blank lines are not stored; the first line's BOM is (skipped by its range).
        let expectedBytes = 3 + Self.expected.map(\.1.utf8.count).reduce(0, +)
        #expect(batch.buffer.count == expectedBytes)
        #expect(batch.lines.first?.range == 3..<10)
        #expect(batch.lineNumbers == 1..<9)
    }

    @Test func emptyAndBlankFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let empty = try readAll(path: try directory.write([], to: "empty.ndjson"))
        #expect(empty.batches.isEmpty && empty.error == nil)

        // Blank lines still count: one batch accounts for them, with no lines in it.
        let blank = try readAll(path: try directory.write(Array(" \n\n\t\r\n".utf8), to: "blank.ndjson"))
        #expect(blank.batches.count == 1)
        #expect(blank.batches.first?.lineNumbers == 1..<4)
        #expect(blank.lines.isEmpty && blank.error == nil)

        let one = try readAll(path: try directory.write(Array("x".utf8), to: "one.ndjson"))
        #expect(one.numbers == [1] && one.texts == ["x"])
    }

    @Test(arguments: [2, 3, 7, 4096])
    func oversizeLinesAreReportedAtTheExactLimit(readBufferSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let input = "0123456789\n0123456789a\n0123456789\r\n0123456789a\r\nok\n" + String(repeating: "z", count: 25)
        let path = try directory.write(Array(input.utf8), to: "limits.ndjson")
        let options = AudienceReader.Options(maxBatchLines: 2, maxLineBytes: 10, readBufferSize: readBufferSize)
        let result = try readAll(path: path, options: options)
        #expect(result.numbers == [1, 3, 5])
        #expect(result.texts == ["0123456789", "0123456789", "ok"])
        #expect(result.oversize == [
            LineBatch.OversizeLine(lineNumber: 2, byteLength: 11),
            LineBatch.OversizeLine(lineNumber: 4, byteLength: 11),
            LineBatch.OversizeLine(lineNumber: 6, byteLength: 25),
        ])
        expectWellFormedBatches(result, totalLines: 6, options: options)
    }

    @Test func openFailureNamesTheFile() {
        let path = "/nonexistent/pushline/audience.ndjson.gz"
        #expect {
            _ = try AudienceReader(path: path)
        } throws: { error in
            let error = error as! AudienceReadError
            return error.code == .openFailed && error.path == path && error.compressedOffset == nil
                && error.description.contains(path) && error.message.contains("No such file")
        }
    }
}

@Suite("Reader limits from callers")
struct ReaderLimitTests {
    /// `maxLineBytes + 1` once trapped for Int.max; the reader clamps what callers pass.
    @Test(arguments: [Int.max, Int.max - 1, Int.min, 0])
    func extremeLineLimitsDoNotTrap(limit: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write(Array("{\"id\":1}\r\nxy\n".utf8), to: "a.ndjson")
        let result = try readAll(path: path, options: .init(maxLineBytes: limit))
        #expect(result.error == nil)
        if limit > 0 {
            #expect(result.texts == ["{\"id\":1}", "xy"])
        } else {
            // A limit of 0 or below is clamped to 1 byte: both lines (8 and 2 bytes) are oversize.
            #expect(result.texts.isEmpty && result.oversize.map(\.lineNumber) == [1, 2])
        }
    }
}
