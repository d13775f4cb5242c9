import Foundation
import PushlineCore
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// A tmpfs of a chosen size, mounted for one test: a real full disk (ENOSPC, short writes), not an
/// injected failure. Needs root (CI runs as root); elsewhere the tests that use it are skipped,
/// saying so.
struct SmallFilesystem {
    let path: String

    /// Whether this machine lets the tests mount one (tried once).
    static let available: Bool = {
        guard getuid() == 0, let scratch = try? Scratch() else { return false }
        let probe = scratch.file("probe")
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil,
              run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]) == 0
        else { return false }
        _ = run("/bin/umount", [probe])
        return true
    }()

    init(at path: String, kilobytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path]) == 0 else {
            throw Failure(description: "cannot mount a tmpfs at \(path)")
        }
        self.path = path
    }

    /// Gives the file system `kilobytes` in all: the files on it stay (freeing space).
    func resize(kilobytes: Int) throws {
        guard Self.run("/bin/mount", ["-o", "remount,size=\(kilobytes)k", path]) == 0 else {
            throw Failure(description: "cannot resize the tmpfs at \(path)")
        }
    }

    func unmount() { _ = Self.run("/bin/umount", ["-l", path]) }

    struct Failure: Error, CustomStringConvertible { var description: String }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Issue 34, item 3: a sending run whose output file system fills up keeps every result line
/// it wrote and a checkpoint consistent with them, stops with exit 5, and once there is room a
/// `--resume` finishes the campaign, notifying nobody twice outside the marked window: a full
/// disk in the first run, again in the resumed run, then room.
extension ResumeEndToEnd {
@Suite("Resume: the output file system fills up", .enabled(if: SmallFilesystem.available, "skipped: mounting a tmpfs needs root (CI runs as root)"))
struct DiskFullTests {
    static let customers = 6_000

    @Test(.timeLimit(.minutes(10)))
    func aFullDiskKeepsTheRecordAndAResumeFinishesTheCampaign() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        try RerunTests.writeAudience(harness.scratch.file("audience.ndjson"), customers: Self.customers)
        // About 250 bytes a result line: 12,000 lines need 3 MB; 384 KiB fills early, 1 MiB later.
        let disk = try SmallFilesystem(at: harness.scratch.file("small"), kilobytes: 384)
        defer { disk.unmount() }
        let folder = disk.path + "/out"
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--log-level", "notice"] + extra
        }

        let first = try await PushlineBinary.run(arguments(["--now", "1800000000"]))
        #expect(first.status == 5, "\(first.stderr)")
        #expect(first.stderr.contains("No space left on device"), "\(first.stderr)")
        let kept = resultLineCount(folder, "sent.ndjson")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(kept > 0, "the sent devices' record was removed: \(left)")
        // The record is not deleted by a plain rerun either: it is refused (9), nothing sent.
        let connectionsBefore = RerunTests.connections(harness)
        let plain = try await PushlineBinary.run(arguments([]))
        #expect(plain.status == 9, "\(plain.stderr)")
        #expect(RerunTests.connections(harness) == connectionsBefore, "a refused run connected")

        // A little room: the resumed run fills the disk again and keeps its record too.
        try disk.resize(kilobytes: 1_536)
        let second = try await PushlineBinary.run(arguments(["--resume"]))
        #expect([3, 5].contains(second.status), "\(second.stderr)")
        #expect(resultLineCount(folder, "sent.ndjson") >= kept)

        try disk.resize(kilobytes: 64 << 10)
        let last = try await PushlineBinary.run(arguments(["--resume"]))
        let stats = harness.emulator.stats()
        await harness.stop()
        #expect(last.status == 3 || second.status == 3, "\(last.stderr)")
        let summary = try readSummary(folder)
        #expect(summary["reconciled"] as? Bool == true, "\(last.stderr)")

        // Every device once across the results; every device the emulator delivered twice marked.
        // Lines: customer n is line n + 1, and n + 2 after the malformed line in the middle.
        func key(_ n: Int, _ device: Int) -> String { "\(n < Self.customers / 2 ? n + 1 : n + 2)/\(device)" }
        var outcomes: [String: Int] = [:]
        var marked: Set<String> = []
        for name in ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson"] {
            for record in try readResults(folder + "/" + name) {
                let key = "\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)"
                outcomes[key, default: 0] += 1
                if record["possible_duplicate"] as? Bool == true { marked.insert(key) }
            }
        }
        #expect(outcomes.count == 2 * Self.customers, "\(outcomes.count) devices have an outcome")
        #expect(outcomes.values.filter { $0 != 1 }.isEmpty, "\(outcomes.values.filter { $0 != 1 }.count) devices with more than one outcome")
        #expect(try readResults(folder + "/unsent.ndjson").isEmpty)
        var deliveredTwice = 0
        var unmarked: [String] = []
        for n in 0..<Self.customers {
            for (device, token, tokens) in [(0, TestTokens.apns(n), stats.apns.tokens), (1, TestTokens.fcm(n), stats.fcm.tokens)] {
                let delivered = tokens[token]?.delivered ?? 0
                if delivered == 0 { unmarked.append("never: \(key(n, device))") }
                if delivered > 1 {
                    deliveredTwice += 1
                    if !marked.contains(key(n, device)) { unmarked.append(key(n, device)) }
                }
            }
        }
        #expect(unmarked.isEmpty, "\(unmarked.count) devices never delivered or delivered twice unmarked: \(unmarked.prefix(10))")
        #expect(marked.count >= deliveredTwice)
    }
}
}
