import Foundation
@testable import PushlineIO
import Testing

/// A killed run's temporary file continued by a resumed run (`OutputFile(resuming:)`).
@Suite struct ResumedOutputFileTests {
    static func lines(_ range: ClosedRange<Int>) -> [UInt8] {
        Array(range.map { "{\"n\":\($0)}\n" }.joined().utf8)
    }

    /// Written, checkpointed, written past the checkpoint and "killed" (dropped without close):
    /// the resume cuts at the checkpoint and appends, and the closed file is as if never killed.
    @Test(arguments: [false, true])
    func aFileContinuesAtItsCheckpoint(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file(gzip ? "requests-apns.ndjson.gz" : "requests-apns.ndjson")
        let options = OutputFile.Options(compression: gzip ? .gzip(level: 6) : .none, bufferSize: 4096)
        var first = try OutputFile(path: path, options: options)
        try first.write(Self.lines(1...500))
        let mark = try first.checkpoint(sync: true)
        try first.write(Self.lines(501...700))
        try first.flush()
        let temporary = first.temporaryPath
        // A kill: the process never closes it. Dropping it here would remove a fresh file, so
        // keep its bytes the way the kernel would, by copying them aside first.
        let kept = try Data(contentsOf: URL(fileURLWithPath: temporary))
        _ = consume first
        try kept.write(to: URL(fileURLWithPath: temporary))

        var resumed = try OutputFile(resuming: temporary, path: path, cut: .at(mark), options: options)
        try resumed.write(Self.lines(501...1000))
        try resumed.close()
        let expected = Self.lines(1...1000)
        if gzip {
            try Shell.require("gzip -t \(Shell.quoted(path))")
            let plain = directory.file("plain")
            try Shell.require("gzip -dc \(Shell.quoted(path)) > \(Shell.quoted(plain))")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: plain))) == expected)
        } else {
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == expected)
        }
    }

    /// Results in completion order keep every whole line; a torn last one is dropped.
    @Test func aTornLastLineIsDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let temporary = try directory.write(Self.lines(1...3) + Array("{\"n\":4".utf8), to: "sent.ndjson.1-a.tmp")
        var resumed = try OutputFile(resuming: temporary, path: directory.file("sent.ndjson"), cut: .afterLastLine(atLeast: 8))
        try resumed.write(Self.lines(4...5))
        try resumed.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("sent.ndjson")))) == Self.lines(1...5))
    }

    /// A file shorter than its checkpoint, or cut mid-line, is not the file the checkpoint saw.
    @Test func aFileThatDisagreesWithItsCheckpointIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let temporary = try directory.write(Self.lines(1...3), to: "rejects.ndjson.1-a.tmp")
        let size = Self.lines(1...3).count
        #expect(throws: OutputFileError.self) { _ = try OutputFile(resuming: temporary, path: directory.file("rejects.ndjson"), cut: .at(size + 1)) }
        #expect(throws: OutputFileError.self) { _ = try OutputFile(resuming: temporary, path: directory.file("rejects.ndjson"), cut: .at(size - 2)) }
        #expect(throws: OutputFileError.self) {
            _ = try OutputFile(resuming: temporary, path: directory.file("rejects.ndjson"), cut: .afterLastLine(atLeast: size + 5))
        }
        // Refusals leave the file as it was.
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: temporary))) == Self.lines(1...3))
    }
}
