import Foundation
@testable import PushlineIO
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
        #expect(temporary.hasPrefix(path + ".") && temporary.hasSuffix(".tmp") && temporary != path + ".tmp")
        #expect(written == expected.count)
        #expect(FileManager.default.fileExists(atPath: temporary))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("old contents\n".utf8), "the old file stays until close")

        try file.close()
        #expect(!FileManager.default.fileExists(atPath: temporary))
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

    /// A `.gzipMembers` file: members compressed elsewhere (as encode workers do), of every size
    /// around the direct-write threshold, read back whole by system gzip and by the audience
    /// reader; with no member at all it is still a valid (empty) gzip file.
    @Test(.enabled(if: Shell.has("gzip"), "skipped: needs the system gzip binary"))
    func precompressedMembersMakeOneGzipFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson.gz")
        var file = try OutputFile(path: path, options: .init(compression: .gzipMembers, bufferSize: 64 << 10))
        var expected: [UInt8] = []
        var number = 0
        for lines in [1, 0, 40, 700, 1, 3000, 5] {
            var plain: [UInt8] = []
            for _ in 0..<lines {
                number += 1
                plain += Array(Records.line(number).utf8) + [0x0A]
            }
            var member: [UInt8] = []
            try plain.withUnsafeBytes { bytes in Result { () throws(GzipMemberFailure) in try GzipMember.compress(bytes, level: 6, into: &member) } }.get()
            // Every other member comes uncompressed (as when a worker's zlib could not start):
            // the file compresses it itself.
            if lines % 2 == 1 { member.removeAll() }
            try member.withUnsafeBytes { member in try plain.withUnsafeBytes { try file.writeMember(member, of: $0) } }
            expected += plain
        }
        #expect(file.bytesWritten == expected.count)
        let onDisk = try file.close()
        #expect(onDisk == (try fileSize(path)) && onDisk < expected.count / 2)
        try Shell.require("gzip -t \(Shell.quoted(path))")
        let decompressed = directory.file("decompressed")
        try Shell.require("gzip -dc \(Shell.quoted(path)) > \(Shell.quoted(decompressed))")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: decompressed))) == expected)
        let read = try readAll(path: path)
        #expect(read.error == nil && read.numbers == Array(1...number))

        let emptyPath = directory.file("requests-fcm.ndjson.gz")
        let empty = try OutputFile(path: emptyPath, options: .init(compression: .gzipMembers))
        #expect(try empty.close() > 0)
        try Shell.require("gzip -t \(Shell.quoted(emptyPath))")
        try Shell.require("gzip -dc \(Shell.quoted(emptyPath)) > \(Shell.quoted(decompressed))")
        #expect(try fileSize(decompressed) == 0)
    }

    /// Writes of every size around an 8-byte buffer (exactly filling it, overflowing it, larger
    /// than it, empty) keep their order.
    @Test(.enabled(if: Shell.has("gzip"), "skipped: needs the system gzip binary to read the .gz back"), arguments: [false, true])
    func writesOfEverySizeKeepTheirOrder(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file(gzip ? "sizes.gz" : "sizes")
        var file = try OutputFile(path: path, options: .init(compression: gzip ? .gzip(level: 1) : .none, bufferSize: 8))
        var expected: [UInt8] = []
        var next: UInt8 = 0
        for size in [3, 5, 8, 0, 1, 7, 9, 16, 2, 6, 8, 20, 4, 4, 8, 1] {
            let chunk = (0..<size).map { _ in next &+= 1; return next }
            try file.write(chunk)
            expected += chunk
        }
        try file.close()
        var actual = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        if gzip {
            let decompressed = directory.file("decompressed")
            try Shell.require("gzip -dc \(Shell.quoted(path)) > \(Shell.quoted(decompressed))")
            actual = try [UInt8](Data(contentsOf: URL(fileURLWithPath: decompressed)))
        }
        #expect(actual == expected)
    }

    @Test(arguments: [false, true])
    func droppedWriterLeavesNothingBehind(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("results.ndjson")
        do {
            var file = try OutputFile(path: path, options: .init(compression: gzip ? .gzip() : .none, bufferSize: 16))
            try file.writeLine(Array("a record longer than the buffer".utf8))
            #expect(FileManager.default.fileExists(atPath: file.temporaryPath))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
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

    /// Large writes skip the buffer (one writev with what is buffered): the bytes still land in
    /// order, whatever mix of sizes comes, and the counts hold.
    @Test func largeWritesAfterBufferedOnesKeepTheOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-fcm.ndjson")
        var file = try OutputFile(path: path, options: .init(bufferSize: 256 << 10))
        var expected: [UInt8] = []
        var g = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let size = [10, 1000, OutputFile.directWriteBytes - 1, OutputFile.directWriteBytes, 300_000, 2 << 20].randomElement(using: &g)!
            let block = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            try block.withUnsafeBytes { try file.write($0) }
            expected += block
        }
        #expect(file.bytesWritten == expected.count)
        let onDisk = try file.close()
        #expect(onDisk == expected.count)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "skipped: /dev/full is not available"))
    func largeWriteFailureIsReportedWithThePath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("full.ndjson")
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        var file = try OutputFile(path: path, temporaryPath: directory.file("full.tmp"), descriptor: fd, options: .init(bufferSize: 1 << 20))
        try file.write(Array("buffered\n".utf8))
        #expect {
            try file.write([UInt8](repeating: 0x41, count: 1 << 20))
        } throws: { error in
            let error = error as! OutputFileError
            return error.code == .writeFailed && error.path == path && error.message.contains("No space")
        }
        #expect(throws: OutputFileError.self) { try file.write(Array("after\n".utf8)) }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "skipped: /dev/full is not available"))
    func writeFailureIsReportedWithThePath() throws {
        // /dev/full refuses every write with ENOSPC; the writer is handed a descriptor on it
        // (symlinks at the temporary name are no longer followed).
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("full.ndjson")
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        var file = try OutputFile(path: path, temporaryPath: directory.file("full.tmp"), descriptor: fd, options: .init(bufferSize: 8))
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
