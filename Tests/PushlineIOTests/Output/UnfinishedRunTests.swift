import Foundation
@testable import PushlineIO
import Testing

/// The rule that keeps a killed or stopped run's record (docs/output.md, "A run that did not
/// finish"): which folders hold an unfinished run, and how its files are moved aside.
@Suite("Unfinished runs in an output folder")
struct UnfinishedRunTests {
    /// A folder with these files (name → content), locked as a run would.
    private static func folder(_ files: [String: String]) throws -> (TemporaryDirectory, OutputFolderLock) {
        let directory = try TemporaryDirectory()
        for (name, content) in files { try directory.write(Array(content.utf8), to: name) }
        return (directory, try OutputFolderLock.acquire(directory.path, startedAt: "t"))
    }

    private static let sentLine = #"{"recipient":"r1","line":1,"device":0,"provider":"apns","apns_id":"x","attempts":1}"# + "\n"

    @Test func anEmptyFolderOrADryRunAloneIsNotAnUnfinishedRun() throws {
        let (empty, emptyLock) = try Self.folder([:])
        defer { empty.cleanUp() }
        #expect(try UnfinishedRun.find(in: emptyLock) == nil)
        // A killed dry run: its request files are a preview, not a record of sends.
        let (dry, dryLock) = try Self.folder([
            "requests-apns.ndjson.4242-a1b2.tmp": "{}\n", "rejects.ndjson.4242-c3d4.tmp": "",
        ])
        defer { dry.cleanUp() }
        #expect(try UnfinishedRun.find(in: dryLock) == nil)
    }

    /// Each way a sending run can be left unfinished, and the finished ones beside them.
    @Test(arguments: [
        // Killed while sending: temporary files, no summary.
        (["sent.ndjson.4242-a1b2.tmp": sentLine, "failed.ndjson.4242-c3d4.tmp": ""], UnfinishedRun.Evidence.temporaryFiles),
        // Killed after closing the results, before the summary.
        (["sent.ndjson": sentLine, "failed.ndjson": "", "rejects.ndjson": ""], .noSummary),
        // Killed while writing the summary: its own temporary file.
        (["sent.ndjson": sentLine, "summary.json.4242-ffff.tmp": "{"], .temporaryFiles),
        // Stopped by a signal: complete files, status stopped.
        (["unsent.ndjson": "", "sent.ndjson": sentLine, "summary.json": #"{"status":"stopped","mode":"send"}"#], .stopped),
        // Failed (a full disk, a stopped provider): its journal is open for a resume, with or
        // without the temporary files a failed write leaves.
        (["sent.ndjson": sentLine, "summary.json": #"{"status":"failed","mode":"send"}"#], .failed),
        (["sent.ndjson.4242-a1b2.tmp": sentLine, "summary.json": #"{"status":"failed","mode":"send"}"#], .failed),
        (["sent.ndjson": sentLine, "summary.json": "not json"], .unreadableSummary),
        (["sent.ndjson": sentLine, "summary.json": #"["completed"]"#], .unreadableSummary),
        (["sent.ndjson": sentLine, "summary.json": #"{"status":7}"#], .unreadableSummary),
        // A finished summary does not excuse a writer that never closed.
        (["sent.ndjson": sentLine, "sent.ndjson.99-1.tmp": sentLine, "summary.json": #"{"status":"completed"}"#], .temporaryFiles),
    ] as [([String: String], UnfinishedRun.Evidence)])
    func unfinishedRunsAreFound(files: [String: String], evidence: UnfinishedRun.Evidence) throws {
        let (directory, lock) = try Self.folder(files.merging(["notes.txt": "mine"]) { a, _ in a })
        defer { directory.cleanUp() }
        let found = try #require(try UnfinishedRun.find(in: lock))
        #expect(found.evidence == evidence)
        #expect(found.files == files.keys.sorted(), "every result file, and nothing else (notes.txt, the lock)")
        #expect(found.refusal.code == .unfinishedRun)
        #expect(found.refusal.description.contains(directory.path) && found.refusal.description.contains("--force"))
        for name in files.keys { #expect(found.refusal.description.contains(name)) }
    }

    @Test(arguments: ["completed", "completed_with_rejects", "completed_with_failures", "input_error"])
    func aFinishedRunIsReplacedAsBefore(status: String) throws {
        let (directory, lock) = try Self.folder([
            "sent.ndjson": Self.sentLine, "failed.ndjson": "", "summary.json": #"{"mode":"send","status":"\#(status)"}"#,
        ])
        defer { directory.cleanUp() }
        #expect(try UnfinishedRun.find(in: lock) == nil)
    }

    /// The files move into `interrupted-<UTC time>/` byte for byte; a second move in the same
    /// second gets its own folder; nothing else in the folder is touched.
    @Test func movingAsideKeepsEveryByte() throws {
        let files = ["sent.ndjson.4242-a1b2.tmp": Self.sentLine + Self.sentLine, "failed.ndjson.4242-c3d4.tmp": "", "rejects.ndjson.4242-e5f6.tmp": "{\"line\":3}\n"]
        let (directory, lock) = try Self.folder(files.merging(["notes.txt": "mine"]) { a, _ in a })
        defer { directory.cleanUp() }
        let found = try #require(try UnfinishedRun.find(in: lock))
        // 2026-01-02T03:04:05Z.
        let aside = try found.moveAside(unixTime: 1_767_323_045)
        #expect(aside == "interrupted-20260102T030405Z")
        for (name, content) in files {
            #expect(try String(contentsOfFile: directory.file(aside + "/" + name), encoding: .utf8) == content)
            #expect(!FileManager.default.fileExists(atPath: directory.file(name)))
        }
        #expect(try String(contentsOfFile: directory.file("notes.txt"), encoding: .utf8) == "mine")
        #expect(try UnfinishedRun.find(in: lock) == nil, "the folder is clear for the new run")

        try directory.write(Array(Self.sentLine.utf8), to: "sent.ndjson.777-1.tmp")
        let again = try #require(try UnfinishedRun.find(in: lock))
        #expect(try again.moveAside(unixTime: 1_767_323_045) == "interrupted-20260102T030405Z-2")
        #expect(FileManager.default.fileExists(atPath: directory.file("interrupted-20260102T030405Z-2/sent.ndjson.777-1.tmp")))
        #expect(FileManager.default.fileExists(atPath: directory.file(aside + "/sent.ndjson.4242-a1b2.tmp")), "the first folder is untouched")
    }

    /// Only regular files are results: a symlink under a result name is refused, not followed.
    @Test func aSymlinkUnderAResultNameIsRefused() throws {
        let (directory, lock) = try Self.folder(["elsewhere": "precious"])
        defer { directory.cleanUp() }
        try Plant.symlink(directory.file("sent.ndjson.1-2.tmp"), to: directory.file("elsewhere"))
        #expect { try UnfinishedRun.find(in: lock) } throws: { ($0 as? OutputFolderError)?.code == .foreignEntry }
    }

    /// What settled reaches the file at `flush()`, not when 1 MiB has accumulated: a run killed
    /// after it leaves those bytes on disk.
    @Test func flushPutsBufferedBytesInTheTemporaryFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        var file = try OutputFile(path: directory.file("sent.ndjson"))
        try file.writeLine(Array(#"{"line":1}"#.utf8))
        let temporary = file.temporaryPath
        #expect(try Data(contentsOf: URL(fileURLWithPath: temporary)).isEmpty, "still in the 1 MiB buffer")
        try file.flush()
        #expect(try String(contentsOfFile: temporary, encoding: .utf8) == "{\"line\":1}\n")
        try file.writeLine(Array(#"{"line":2}"#.utf8))
        try file.flush()
        #expect(try String(contentsOfFile: temporary, encoding: .utf8) == "{\"line\":1}\n{\"line\":2}\n")
        try file.close()
        #expect(try String(contentsOfFile: directory.file("sent.ndjson"), encoding: .utf8) == "{\"line\":1}\n{\"line\":2}\n")
    }
}
