import Foundation
import PushlineIO
import Testing

@Suite struct OutputFileTests {
    /// Writes the same records through small writes, lines and one write larger than the buffer.
    static func writeRecords(to file: inout OutputFile) throws -> [UInt8] {
        var expected: [UInt8] = []
        for number in 1...3000 {
            let line = Array(Records.line(number).utf8)
            try file.writeLine(line)
            expected += line + [0x0A]
        }
        let big = [UInt8](repeating: UInt8(ascii: "q"), count: 300_000) + [0x0A]
        try file.write(big)
        expected += big
        try file.write(ArraySlice(Array("tail\n".utf8)))
        expected += Array("tail\n".utf8)
        return expected
    }

    @Test func plainFileAppearsOnlyOnClose() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write(Array("old contents\n".utf8), to: "requests-apns.ndjson")
        var file = try OutputFile(path: path, options: .init(bufferSize: 64 << 10))
        let expected = try Self.writeRecords(to: &file)
        let (temporary, written) = (file.temporaryPath, file.bytesWritten)
        #expect(temporary == path + ".tmp")
        #expect(written == expected.count)
        #expect(FileManager.default.fileExists(atPath: temporary))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("old contents\n".utf8), "the old file stays until close")

        try file.close()
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }

    @Test(.enabled(if: Shell.has("gzip"), "needs the system gzip binary"), arguments: [0, 1, 6, 9])
    func gzipFileRoundTripsThroughSystemGzip(level: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson.gz")
        var file = try OutputFile(path: path, options: .init(compression: .gzip(level: level), bufferSize: 64 << 10, syncOnClose: true))
        let expected = try Self.writeRecords(to: &file)
        try file.close()

        try Shell.require("gzip -t \(Shell.quoted(path))")
        let decompressed = directory.file("decompressed")
        try Shell.require("gzip -dc \(Shell.quoted(path)) > \(Shell.quoted(decompressed))")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: decompressed))) == expected)
        if level > 0 {
            #expect(try fileSize(path) < expected.count / 2, "level \(level) compresses")
        }
    }

    /// Two of our gzip files concatenated read back as one audience: writer and reader agree.
    @Test func gzipFilesReadBackThroughTheAudienceReader() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        var parts: [[UInt8]] = []
        for (index, range) in [1...700, 701...1500].enumerated() {
            let path = directory.file("part\(index).gz")
            var file = try OutputFile(path: path, options: .init(compression: .gzip()))
            for number in range { try file.writeLine(Array(Records.line(number).utf8)) }
            try file.close()
            parts.append(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        }
        let path = try directory.write(parts[0] + parts[1], to: "both.ndjson.gz")
        let result = try readAll(path: path)
        #expect(result.error == nil)
        #expect(result.numbers == Array(1...1500))
        #expect(result.texts == (1...1500).map(Records.line))
    }

    @Test(arguments: [false, true])
    func droppedWriterLeavesNothingBehind(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("results.ndjson")
        do {
            var file = try OutputFile(path: path, options: .init(compression: gzip ? .gzip() : .none, bufferSize: 16))
            try file.writeLine(Array("a record longer than the buffer".utf8))
            #expect(FileManager.default.fileExists(atPath: path + ".tmp"))
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func createFailureNamesTheFile() {
        let path = "/nonexistent/pushline/requests-apns.ndjson"
        #expect {
            _ = try OutputFile(path: path)
        } throws: { error in
            let error = error as! OutputFileError
            return error.code == .createFailed && error.path == path && error.description.contains(path)
                && error.message.contains("No such file")
        }
    }

    @Test func writeFailureIsReportedWithThePath() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else {
            print("skipped: /dev/full is not available")
            return
        }
        // /dev/full refuses every write with ENOSPC; the ".tmp" name is a symlink to it.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("full.ndjson")
        try FileManager.default.createSymbolicLink(atPath: path + ".tmp", withDestinationPath: "/dev/full")
        var file = try OutputFile(path: path, options: .init(bufferSize: 8))
        #expect {
            try file.write(Array("more than eight bytes".utf8))
        } throws: { error in
            let error = error as! OutputFileError
            return error.code == .writeFailed && error.path == path && error.message.contains("No space")
        }
        do {
            try file.close()
            Issue.record("close succeeded after a failed write")
        } catch {
            #expect(error.code == .writeFailed, "a failed writer keeps failing")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
