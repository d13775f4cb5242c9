import Foundation
@testable import PushlineIO
import Testing

/// Plants entries the way a hostile or confused user would.
enum Plant {
    static func symlink(_ path: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    static func fifo(_ path: String) throws {
        try #require(mkfifo(path, 0o644) == 0, "mkfifo \(path)")
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }
}

/// The host name as gethostname(2) gives it (what the lock file records; Foundation's may differ).
func systemHostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

@Suite("Output files replace only regular files")
struct OutputFileOwnershipTests {
    @Test func temporaryNamesAreUniquePerWriter() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson")
        var first = try OutputFile(path: path)
        var second = try OutputFile(path: path)
        #expect(first.temporaryPath != second.temporaryPath)
        try first.writeLine(Array("first".utf8))
        try second.writeLine(Array("second".utf8))
        try first.close()
        #expect(try Plant.text(path) == "first\n")
        try second.close()
        #expect(try Plant.text(path) == "second\n", "each file is whole: never lines of two writers")
    }

    @Test func aSymlinkAtTheOldTemporaryNameIsNeverFollowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let victim = try directory.write(Array("precious\n".utf8), to: "victim")
        let path = directory.file("rejects.ndjson")
        try Plant.symlink(path + ".tmp", to: victim)
        var file = try OutputFile(path: path)
        try file.writeLine(Array("ours".utf8))
        try file.close()
        #expect(try Plant.text(victim) == "precious\n")
        #expect(try Plant.text(path) == "ours\n")
    }

    /// A symlink, FIFO or directory at the final name is refused when the writer is created.
    @Test(arguments: ["symlink", "dangling symlink", "fifo", "directory"])
    func nonRegularTargetsAreRefusedUpFront(kind: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let victim = try directory.write(Array("precious\n".utf8), to: "victim")
        let path = directory.file("summary.json")
        switch kind {
        case "symlink": try Plant.symlink(path, to: victim)
        case "dangling symlink": try Plant.symlink(path, to: directory.file("nowhere"))
        case "fifo": try Plant.fifo(path)
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        #expect {
            _ = try OutputFile(path: path)
        } throws: { error in
            let error = error as! OutputFileError
            return error.code == .notRegularFile && error.path == path && error.message.hasPrefix("refusing to replace a")
        }
        #expect(try Plant.text(victim) == "precious\n")
        #expect(!FileManager.default.fileExists(atPath: directory.file("nowhere")))
        // Nothing of ours is left behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty)
    }

    /// Planted after the writer was created: the rename is refused and the temporary removed.
    @Test func aSymlinkPlantedDuringTheWriteIsRefusedAtClose() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let victim = try directory.write(Array("precious\n".utf8), to: "victim")
        let path = directory.file("requests-fcm.ndjson")
        var file = try OutputFile(path: path)
        try file.writeLine(Array("ours".utf8))
        try Plant.symlink(path, to: victim)
        do {
            try file.close()
            Issue.record("renamed over a symlink")
        } catch {
            #expect(error.code == .notRegularFile)
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == victim)
        #expect(try Plant.text(victim) == "precious\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["requests-fcm.ndjson", "victim"])
    }

    @Test func gzipSizeIsTheSizeOnDisk() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("requests-apns.ndjson.gz")
        var file = try OutputFile(path: path, options: .init(compression: .gzip()))
        for number in 1...2000 { try file.writeLine(Array(Records.line(number).utf8)) }
        let uncompressed = file.bytesWritten
        let onDisk = try file.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(onDisk == size)
        #expect(onDisk < uncompressed)
    }
}

@Suite("The output folder belongs to one run")
struct OutputFolderLockTests {
    @Test func aSecondHolderIsRefusedWithTheFirstOnesDetails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let folder = directory.file("out/nested")
        let first = try OutputFolderLock.acquire(folder, startedAt: "2026-01-02T03:04:05Z")
        let content = try Plant.text(folder + "/.pushline.lock")
        #expect(content == "pid=\(getpid())\nhost=\(systemHostName())\nstarted=2026-01-02T03:04:05Z\n")
        do {
            _ = try OutputFolderLock.acquire(folder, startedAt: "later")
            Issue.record("a second lock was granted")
        } catch {
            #expect(error.code == .inUse)
            #expect(error.description == "output folder \(folder) is in use by another run (pid \(getpid()) on host \(systemHostName()), started 2026-01-02T03:04:05Z); wait for it to finish or choose another output folder")
        }
        _ = first.folder
    }

    @Test func theLockIsReleasedWithItsHolder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        do { _ = try OutputFolderLock.acquire(directory.path, startedAt: "t1") }
        let again = try OutputFolderLock.acquire(directory.path, startedAt: "t2")
        #expect(try Plant.text(directory.file(".pushline.lock")).hasSuffix("started=t2\n"))
        _ = again.folder
    }

    /// A run releases the folder when it ends, even while something still holds the lock: a
    /// reference kept elsewhere, or a copy of its descriptor (as a child process has between its
    /// fork and its exec). A close alone would leave the lock with the copy.
    @Test func releaseFreesTheFolderWhileACopyOfTheDescriptorIsOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let first = try OutputFolderLock.acquire(directory.path, startedAt: "t1")
        let copy = dup(first.fd)
        try #require(copy >= 0)
        defer { close(copy) }
        #expect(throws: OutputFolderError.self) { _ = try OutputFolderLock.acquire(directory.path, startedAt: "t2") }
        first.release()
        first.release()
        let second = try OutputFolderLock.acquire(directory.path, startedAt: "t3")
        #expect(second.folder == directory.path)
        withExtendedLifetime(first) {}
    }

    @Test(arguments: ["symlink", "fifo", "hard link"])
    func aPlantedLockFileIsRefused(kind: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let victim = try directory.write(Array("precious\n".utf8), to: "victim")
        switch kind {
        case "symlink": try Plant.symlink(directory.file(".pushline.lock"), to: victim)
        case "fifo": try Plant.fifo(directory.file(".pushline.lock"))
        default: try FileManager.default.linkItem(atPath: victim, toPath: directory.file(".pushline.lock"))
        }
        #expect {
            _ = try OutputFolderLock.acquire(directory.path, startedAt: "t")
        } throws: { error in
            (error as! OutputFolderError).code == .cannotLock
        }
        #expect(try Plant.text(victim) == "precious\n")
    }

    @Test func anEmptyFolderPathIsRefused() throws {
        #expect {
            _ = try OutputFolderLock.acquire("", startedAt: "t")
        } throws: { error in
            (error as! OutputFolderError).description == "cannot create the output folder : the path is empty"
        }
    }

    @Test func aFileWhereTheFolderShouldBeIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write([], to: "out")
        #expect {
            _ = try OutputFolderLock.acquire(path, startedAt: "t")
        } throws: { error in
            (error as! OutputFolderError).description == "the output folder \(path) is a regular file, not a directory"
        }
    }

    @Test func stalePreviousResultsAreRemovedAndNothingElse() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let stale = [
            "requests-adm.ndjson", "requests-webpush.ndjson.gz", "rejects.ndjson", "summary.json",
            "requests-apns.ndjson.tmp", "requests-fcm.ndjson.4242-deadbeef.tmp", "summary.json.77-1.tmp",
        ]
        let kept = ["notes.txt", "requests.txt", "requests-apns.json", "my-summary.json", "audience.ndjson", "rejects.ndjson.bak", "x.tmp"]
        for name in stale + kept { try directory.write(Array("old\n".utf8), to: name) }
        let lock = try OutputFolderLock.acquire(directory.path, startedAt: "t")
        #expect(try lock.removeStaleResults() == stale.sorted())
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == (kept + [".pushline.lock"]).sorted())
    }

    @Test(arguments: ["symlink", "fifo", "directory"])
    func aNonRegularEntryUnderAResultNameIsRefused(kind: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let victim = try directory.write(Array("precious\n".utf8), to: "victim")
        let path = directory.file("requests-apns.ndjson")
        switch kind {
        case "symlink": try Plant.symlink(path, to: victim)
        case "fifo": try Plant.fifo(path)
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let lock = try OutputFolderLock.acquire(directory.path, startedAt: "t")
        #expect {
            try lock.removeStaleResults()
        } throws: { error in
            let error = error as! OutputFolderError
            return error.code == .foreignEntry && error.description.contains("requests-apns.ndjson is a")
        }
        #expect(try Plant.text(victim) == "precious\n")
        #expect(FileManager.default.fileExists(atPath: path) || kind == "symlink")
    }
}
