import Foundation
import PushlineTestSupport
import Logging
import PushlineCore
import PushlineIO
import PushlineRuntime
import Testing

@Suite("A run owns its output folder")
struct OutputFolderRunTests {
    static func audience(in scratch: Scratch, customers: Int = 50, seed: UInt64 = 7) throws -> String {
        let path = scratch.file("audience.ndjson.gz")
        _ = try AudienceGenerator(seed: seed).write(count: customers, to: path)
        return path
    }

    static let everyProviderPipeline = """
    name: everywhere
    device_types: [ios, android, web, amazon]
    notification:
      title: "Hi {{ customer.first_name }}"
      alert: "Your {{ event.event_title }} is waiting"
    providers:
      apns: { topic: com.example.app }
      fcm: { project_id: demo }
    """

    @Test func aSecondRunIsRefusedAtOnceAndReadsNothing() async throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        let holder = try OutputFolderLock.acquire(folder, startedAt: "2026-05-06T07:08:09Z")
        try "previous summary\n".write(toFile: folder + "/summary.json", atomically: true, encoding: .utf8)
        let report = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: try Self.audience(in: scratch), output: folder)
        #expect(report.status == .failed && report.exit == .outputFolderBusy)
        #expect(report.failure == "output folder \(folder) is in use by another run (pid \(getpid()) on host \(systemHostName()), started 2026-05-06T07:08:09Z); wait for it to finish or choose another output folder")
        #expect(report.source.physicalLines == 0 && report.counts.lines == 0, "nothing was read")
        #expect(try String(contentsOfFile: folder + "/summary.json", encoding: .utf8) == "previous summary\n", "the holder's files are untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".pushline.lock", "summary.json"])
        _ = holder.folder
    }

    @Test func resultsOfAnEarlierRunWithMoreProvidersAreRemoved() async throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        let audience = try Self.audience(in: scratch, customers: 300)
        let first = try await runDry(try writePipeline(Self.everyProviderPipeline, in: scratch), audience: audience, output: folder)
        #expect(first.status == .completed)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)).isSuperset(of: ["requests-webpush.ndjson", "requests-adm.ndjson"]))
        // A dead run's leftovers, under the old fixed and the new unique temporary names.
        for name in ["requests-apns.ndjson.tmp", "rejects.ndjson.999-abc.tmp", "summary.json.1-2.tmp"] {
            try "partial".write(toFile: folder + "/" + name, atomically: false, encoding: .utf8)
        }
        try "mine\n".write(toFile: folder + "/notes.txt", atomically: false, encoding: .utf8)

        let second = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: audience, output: folder)
        #expect(second.status == .completed)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        // checkpoint.json is this run's (the first run's was removed with its results).
        #expect(left == [".pushline.lock", "checkpoint.json", "notes.txt", "rejects.ndjson", "requests-apns.ndjson", "requests-fcm.ndjson", "summary.json"])
        #expect(try #require(try CheckpointJournal.read(from: folder)).counts == second.counts)
        let files = try #require(try readSummary(folder)["files"] as? [String: Int])
        #expect(Set(files.keys) == ["rejects.ndjson", "requests-apns.ndjson", "requests-fcm.ndjson"])
        // Every request line is this run's: the second pipeline's campaign targets iOS and Android only.
        let platforms = Set(try (readLines(folder + "/requests-apns.ndjson") + readLines(folder + "/requests-fcm.ndjson")).compactMap { $0["platform"] as? String })
        #expect(platforms == ["ios", "android"])
    }

    /// A symlink at every name the run creates, or would remove, is refused; its target is untouched.
    @Test(arguments: ["requests-apns.ndjson", "requests-fcm.ndjson", "rejects.ndjson", "summary.json", ".pushline.lock", "requests-fcm.ndjson.tmp"])
    func aPlantedSymlinkIsNeverFollowed(name: String) async throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let victim = scratch.file("victim")
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/" + name, withDestinationPath: victim)
        let report = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: try Self.audience(in: scratch), output: folder)
        #expect(report.status == .failed && report.exit == .outputError)
        let failure = try #require(report.failure)
        if name == ".pushline.lock" {
            #expect(failure.hasPrefix("cannot lock the output folder \(folder): cannot open .pushline.lock: "))
        } else {
            #expect(failure == "refusing to use the output folder \(folder): \(name) is a symbolic link, and only regular files are replaced")
        }
        #expect(report.counts.lines == 0)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name) == victim)
    }

    @Test(arguments: ["requests-fcm.ndjson", "summary.json"])
    func aFIFOAtAResultNameIsRefusedWithoutBlocking(name: String) async throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(mkfifo(folder + "/" + name, 0o644) == 0)
        let report = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: try Self.audience(in: scratch), output: folder)
        #expect(report.status == .failed)
        #expect(report.failure == "refusing to use the output folder \(folder): \(name) is a FIFO, and only regular files are replaced")
    }

    @Test func gzipFileSizesInTheSummaryAreTheBytesOnDisk() async throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        let pipeline = demoStylePipeline + "\ndry_run: { gzip: true }\n"
        let report = try await runDry(try writePipeline(pipeline, in: scratch), audience: try Self.audience(in: scratch, customers: 2000), output: folder)
        #expect(report.status == .completed)
        let files = try #require(try readSummary(folder)["files"] as? [String: Int])
        #expect(Set(files.keys) == ["rejects.ndjson", "requests-apns.ndjson.gz", "requests-fcm.ndjson.gz"])
        for (name, bytes) in files {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int)
            #expect(bytes == size, "\(name)")
        }
    }
}

@Suite("Two pushline processes, one output folder", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ConcurrentRunTests {
    @Test func theSecondProcessFailsAtOnceNamingTheFirst() async throws {
        let scratch = try Scratch()
        let pipeline = try writePipeline(demoStylePipeline, in: scratch)
        let folder = scratch.file("out")
        // The first run reads its audience from a pipe we keep open: it holds the folder meanwhile.
        let first = ChildProcess()
        first.executableURL = URL(fileURLWithPath: PushlineBinary.path)
        first.arguments = ["run", pipeline, "--dry-run", "--audience", "-", "--output", folder, "--log-level", "error"]
        let input = Pipe()
        first.standardInput = input
        // Watched before the run starts: the lock's write is reported, not looked for on a clock.
        let changes = try FileChanges(watching: [folder])
        try first.run()
        defer { if first.isRunning { first.terminate() } }
        let lockFile = folder + "/.pushline.lock"
        let deadline = ContinuousClock.now + .seconds(120)
        while (try? String(contentsOfFile: lockFile, encoding: .utf8))?.hasPrefix("pid=\(first.processIdentifier)\n") != true {
            try #require(ContinuousClock.now < deadline && first.isRunning, "the first run never took the lock")
            _ = await changes.next(orExitOf: first.processIdentifier, limit: deadline - ContinuousClock.now)
        }

        let second = try await PushlineBinary.run(["run", pipeline, "--dry-run", "--audience", scratch.file("none.ndjson"), "--output", folder, "--log-level", "critical"])
        #expect(second.status == 9, "output_folder_busy")
        #expect(second.stderrLines.count == 1)
        #expect(second.stderr.hasPrefix("pushline: error: output folder \(folder) is in use by another run (pid \(first.processIdentifier) on host "))
        // Refused at once, not after waiting: it ended while the first still held the folder
        // (which it does until its input ends, below). A clock bound here failed on a loaded
        // machine, where a debug binary took 10.8 s just to start and refuse.
        #expect(first.isRunning, "the second run ended only after the first released the folder")

        // The first run finishes normally once its input ends, and its folder holds only its results.
        let token = String(repeating: "ab", count: 32)
        try input.fileHandleForWriting.write(contentsOf: Data(#"{"id":"a","platform":"ios","token":"\#(token)"}"#.utf8 + [0x0A]))
        try input.fileHandleForWriting.close()
        #expect(first.waitForExit() == ChildExit(code: 0, signalled: false))
        #expect(try readLines(folder + "/requests-apns.ndjson").map { $0["recipient"] as? String } == ["a"])
        #expect(try readSummary(folder)["reconciled"] as? Bool == true)
    }
}

/// The host name as gethostname(2) gives it (what the lock file records; Foundation's may differ).
func systemHostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
