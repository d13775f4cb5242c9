import Foundation
import PushlineRuntime
import Testing

/// `merge-results` over a campaign with a shard that has not finished (a scheduler stopped it with
/// SIGTERM, killed it, or it failed) names that shard and says how to finish it, instead of
/// reporting a mismatch of inputs; exit 12 and one line, as every refusal.
@Suite(
    "Shards: merging with an unfinished shard",
    .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"),
    .serialized
)
struct ShardMergeUnfinishedTests {
    static let resumeHint = "resume it with the same command and --resume (or --auto-resume)"

    /// Two finished shards of a small generated audience, in `shard-0` and `shard-1`.
    static func finishedShards(_ scratch: Scratch) async throws -> [String] {
        let audience = scratch.file("audience.ndjson")
        let generated = try await PushlineBinary.run(["generate-audience", "400", audience, "--seed", "3"])
        try #require(generated.status == 0, "\(generated.stderr)")
        var folders: [String] = []
        for index in 0..<2 {
            let folder = scratch.file("shard-\(index)")
            let run = try await PushlineBinary.run([
                "run", CommandLineTests.demo, "--dry-run", "--audience", audience, "--output", folder,
                "--shard", "\(index)/2", "--now", "1700000000", "--no-progress", "--log-level", "error",
            ])
            try #require([0, 3].contains(run.status), "\(run.stderr)")
            folders.append(folder)
        }
        return folders
    }

    static func refusal(_ folders: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let outcome = try await PushlineBinary.run(["merge-results"] + folders)
        #expect(outcome.status == 12, "\(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(outcome.stderrLines.count == 1, "one line: \(outcome.stderr)", sourceLocation: sourceLocation)
        let prefix = "pushline: error: "
        try #require(outcome.stderr.hasPrefix(prefix), sourceLocation: sourceLocation)
        return String(outcome.stderr.dropFirst(prefix.count).dropLast())
    }

    /// A shard stopped by SIGTERM (a scheduler's stop before its time limit): its summary says
    /// `stopped`. The message names the folder as the user typed it, without a glob's `/`.
    @Test func aShardStoppedBySIGTERMIsNamedWithHowToResumeIt() async throws {
        let scratch = try Scratch()
        let folders = try await Self.finishedShards(scratch)
        let stopped = scratch.file("stopped")
        let feed = try await SignalStopTests.generatedAudience(scratch)
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", stopped, "--shard", "1/2", "--no-progress"],
            feed: feed, stderrPath: scratch.file("stderr.log")
        )
        try await child.waitUntil("requests on disk", watching: [stopped]) {
            guard let file = temporaryFile("requests-apns.ndjson", in: stopped) else { return false }
            return completeLines(file) > 0
        }
        child.send(SIGTERM)
        try #require(try await child.waitForExit() == 6, "\(child.stderr)")
        #expect(try readSummary(stopped)["status"] as? String == "stopped")

        let message = try await Self.refusal([folders[0] + "/", stopped + "/"])
        #expect(message == "\(stopped) is unfinished (status stopped): \(Self.resumeHint)")
        #expect(!message.contains("another input"))
    }

    /// A killed shard leaves no summary, only its open journal; a failed one (a full disk) says
    /// `failed` with its exit code and cause. Every unfinished shard is named in the one line.
    @Test func killedAndFailedShardsAreNamedTogether() async throws {
        let scratch = try Scratch()
        let folders = try await Self.finishedShards(scratch)

        // Killed: as a SIGKILL before the end leaves it, the journal open and no summary.
        var journal = try #require(try CheckpointJournal.read(from: folders[1]))
        journal.complete = false
        try journal.write(to: folders[1], sync: false)
        try FileManager.default.removeItem(atPath: folders[1] + "/summary.json")
        let killed = try await Self.refusal(folders)
        #expect(killed == "\(folders[1]) is unfinished (no summary.json, and a checkpoint.json: it was killed, or it is still running): \(Self.resumeHint)")

        // Failed: the summary's status, exit code and failure.
        var summary = try readSummary(folders[0])
        summary["status"] = "failed"
        summary["exit_code"] = 5
        summary["failure"] = "requests-apns.ndjson: No space left on device"
        try JSONSerialization.data(withJSONObject: summary).write(to: URL(fileURLWithPath: folders[0] + "/summary.json"))
        let both = try await Self.refusal(folders)
        #expect(both == "\(folders[0]) is unfinished (status failed, exit 5: requests-apns.ndjson: No space left on device); "
            + "\(folders[1]) is unfinished (no summary.json, and a checkpoint.json: it was killed, or it is still running): "
            + "resume each with the same command and --resume (or --auto-resume)")
    }

    /// A finished run whose journal is complete but whose summary is gone is not resumable: the
    /// usual refusal names the missing summary.
    @Test func aFinishedShardWithoutItsSummaryIsNotCalledUnfinished() async throws {
        let scratch = try Scratch()
        let folders = try await Self.finishedShards(scratch)
        try FileManager.default.removeItem(atPath: folders[1] + "/summary.json")
        let message = try await Self.refusal(folders)
        #expect(message.hasPrefix("\(folders[1])/summary.json cannot be read"), "\(message)")
        #expect(!message.contains("unfinished"))
    }

    @Test func finishedShardsStillMerge() async throws {
        let scratch = try Scratch()
        let folders = try await Self.finishedShards(scratch)
        let merged = try await PushlineBinary.run(["merge-results"] + folders.map { $0 + "/" })
        #expect(merged.status == 0, "\(merged.stderr)")
    }
}
