import Foundation
import PushlineTestSupport
import PushlineIO
import Testing

/// A fresh directory under the system temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "pushline-io-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

enum Shell {
    /// Runs `command` with /bin/sh and returns its exit status.
    @discardableResult
    static func run(_ command: String) throws -> Int32 {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        return process.waitForExit().shellStatus
    }

    /// Runs `command`, failing the test when it exits non-zero.
    static func require(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let status = try run(command)
        try #require(status == 0, "`\(command)` exited with \(status)", sourceLocation: sourceLocation)
    }

    static func quoted(_ path: String) -> String { "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static func has(_ tool: String) -> Bool { (try? run("command -v \(tool) >/dev/null 2>&1")) == 0 }
}

/// What a reader returned: the kept lines with their text, the oversize lines, the batches.
struct ReadResult {
    var lines: [(number: Int, text: String)] = []
    var oversize: [LineBatch.OversizeLine] = []
    var batches: [LineBatch] = []
    var error: AudienceReadError?

    var numbers: [Int] { lines.map(\.number) }
    var texts: [String] { lines.map(\.text) }
}

/// Reads everything `reader` gives, stopping at the first error (and checking that it repeats).
func readAll(_ reader: inout AudienceReader) -> ReadResult {
    var result = ReadResult()
    do {
        while let batch = try reader.nextBatch() {
            result.batches.append(batch)
            for line in batch.lines {
                result.lines.append((line.lineNumber, String(decoding: batch[line], as: UTF8.self)))
            }
            result.oversize += batch.oversizeLines
        }
        #expect(try reader.nextBatch() == nil, "a finished reader stays finished")
    } catch {
        result.error = error
        // Once it failed, it keeps failing with the same error.
        #expect(throws: error) { try reader.nextBatch() }
    }
    return result
}

func readAll(path: String, options: AudienceReader.Options = .init()) throws -> ReadResult {
    var reader = try AudienceReader(path: path, options: options)
    return readAll(&reader)
}

/// Checks the batches tile the physical lines from 1 without gaps and respect the limits.
func expectWellFormedBatches(
    _ result: ReadResult, totalLines: Int, options: AudienceReader.Options,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var next = 1
    for batch in result.batches {
        #expect(batch.lineNumbers.lowerBound == next, sourceLocation: sourceLocation)
        next = batch.lineNumbers.upperBound
        #expect(batch.lines.count + batch.oversizeLines.count <= options.maxBatchLines, sourceLocation: sourceLocation)
        // A batch closes once it reaches maxBatchBytes, so it holds at most one line beyond that.
        #expect(batch.buffer.count < options.maxBatchBytes + options.maxLineBytes + 1, sourceLocation: sourceLocation)
        for line in batch.lines {
            #expect(batch.lineNumbers.contains(line.lineNumber), sourceLocation: sourceLocation)
        }
    }
    #expect(next == totalLines + 1, "batches cover lines 1...\(totalLines)", sourceLocation: sourceLocation)
}
