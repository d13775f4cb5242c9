import Foundation
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Issue 13's "Done when" for dry runs: a running dry run killed with SIGKILL at several points
/// and resumed writes exactly the files and counts of one uninterrupted run.
/// The resume tests that run `pushline` children, one at a time (each keeps both cores busy).
@Suite("Resume: pushline processes killed and resumed", .serialized, .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
enum ResumeEndToEnd {}

extension ResumeEndToEnd {
@Suite("Resume: a dry run killed with SIGKILL")
struct ResumeDryRunTests {
    static let customers = 60_000
    static let clock = "1800000000"

    /// The pipeline, with gzip output or plain, and a reject now and then (a device type the
    /// campaign targets with a bad token) so rejects.ndjson is cut at the watermark too.
    static func setUp(gzip: Bool) throws -> (scratch: Scratch, pipeline: String, audience: String) {
        let scratch = try Scratch()
        let pipeline = try writePipeline(demoStylePipeline + (gzip ? "\ndry_run: { gzip: true }\n" : "\n"), in: scratch)
        let audience = scratch.file("audience.ndjson.gz")
        _ = try AudienceGenerator(seed: 11, hostileFraction: 0.02).write(count: customers, to: audience)
        return (scratch, pipeline, audience)
    }

    static func arguments(_ pipeline: String, _ audience: String, _ folder: String, _ extra: [String] = []) -> [String] {
        ["run", pipeline, "--dry-run", "--audience", audience, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--log-level", "notice"] + extra
    }

    /// The folder's results as bytes (gzip files decompressed: members may differ, content not).
    static func contents(_ folder: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".ndjson") || name.hasSuffix(".ndjson.gz") {
            let path = folder + "/" + name
            if name.hasSuffix(".gz") {
                let plain = folder + "/../" + UUID().uuidString
                let gunzip = ChildProcess()
                gunzip.executableURL = URL(fileURLWithPath: "/bin/sh")
                gunzip.arguments = ["-c", "gzip -dc '\(path)' > '\(plain)'"]
                try gunzip.run()
                #expect(gunzip.waitForExit() == ChildExit(code: 0, signalled: false), "\(name) is not a valid gzip file")
                files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: plain)))
            } else {
                files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
        }
        return files
    }

    /// Kills at three points (the first checkpoint, about a third and two thirds through), each
    /// once the files have grown past the checkpoint (so the kill leaves bytes the resume must
    /// cut), resuming after each kill: three resumes, one campaign. No sleeps: each point is a
    /// state of the folder, not a time.
    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func killedThreeTimesAndResumedEqualsOneRun(gzip: Bool) async throws {
        let (scratch, pipeline, audience) = try Self.setUp(gzip: gzip)
        let reference = scratch.file("reference")
        let whole = try await PushlineBinary.run(Self.arguments(pipeline, audience, reference, ["--now", Self.clock]))
        #expect(whole.status == 0, "\(whole.stderr)")

        let folder = scratch.file("killed")
        var kills = 0
        for target in [1, Self.customers / 3, 2 * Self.customers / 3] {
            let resuming = kills > 0
            let run = try KillableRun.start(
                Self.arguments(pipeline, audience, folder, resuming ? ["--resume"] : ["--now", Self.clock]), log: scratch.file("run-\(kills).log")
            )
            let reached = run.wait(for: folder) { checkpointRuns(folder) == kills + 1 && checkpointWatermark(folder) >= target && filesPastCheckpoint(folder) }
            let exit = run.kill()
            try #require(reached && exit == ChildExit(code: SIGKILL, signalled: true), "the run ended before line \(target) was checkpointed: \(run.stderr)")
            kills += 1
        }
        let last = try await PushlineBinary.run(Self.arguments(pipeline, audience, folder, ["--resume"]))
        #expect(last.status == 0, "\(last.stderr)")
        #expect(last.stderr.contains("resuming after line"))

        // The same files, byte for byte (decompressed), and the same counts.
        let expected = try Self.contents(reference)
        let got = try Self.contents(folder)
        #expect(got.keys.sorted() == expected.keys.sorted())
        for (name, bytes) in expected {
            #expect(got[name] == bytes, "\(name) differs from the uninterrupted run's")
        }
        let referenceSummary = try readSummary(reference)
        let summary = try readSummary(folder)
        for key in ["devices", "lines", "providers", "status", "reconciled", "exit_code"] {
            #expect(NSDictionary(dictionary: ["v": summary[key] as Any]) == NSDictionary(dictionary: ["v": referenceSummary[key] as Any]), "summary \(key)")
        }
        let resume = try #require(summary["resume"] as? [String: Any])
        #expect(resume["runs"] as? Int == kills + 1)
        // Nothing but the results, the summary, the journal and the lock is left.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "temporary files left: \(left)")
        // And a finished run is not run again: --resume reports it, with its exit code, and
        // leaves its summary as it was.
        let finished = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        let again = try await PushlineBinary.run(Self.arguments(pipeline, audience, folder, ["--resume"]))
        #expect(Int(again.status) == summary["exit_code"] as? Int ?? -1, "\(again.stderr)")
        #expect(again.stderr.contains("already finished this campaign"), "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json")) == finished)
    }
}

@Suite("Resume: refusals")
struct ResumeRefusalTests {
    static func stoppedRun() throws -> (scratch: Scratch, pipeline: String, audience: String, folder: String) {
        let (scratch, pipeline, audience) = try ResumeDryRunTests.setUp(gzip: false)
        let folder = scratch.file("out")
        let run = try KillableRun.start(ResumeDryRunTests.arguments(pipeline, audience, folder, ["--now", ResumeDryRunTests.clock]), log: scratch.file("run.log"))
        let reached = run.wait(for: folder) { checkpointWatermark(folder) >= 1 }
        let exit = run.kill()
        try #require(reached && exit.signalled, "the run ended before its first checkpoint: \(run.stderr)")
        return (scratch, pipeline, audience, folder)
    }

    @Test func noCheckpointIsRefusedWithExit13() async throws {
        let (scratch, pipeline, audience) = try ResumeDryRunTests.setUp(gzip: false)
        let outcome = try await PushlineBinary.run(ResumeDryRunTests.arguments(pipeline, audience, scratch.file("empty"), ["--resume"]))
        #expect(outcome.status == 13)
        #expect(outcome.stderrLines.last?.hasPrefix("pushline: error: cannot resume: no checkpoint.json in ") == true, "\(outcome.stderr)")
    }

    /// A changed pipeline, another audience, another clock or a sending run: each refused by
    /// name, with nothing read and the killed run's files untouched.
    @Test func aResumeOfAnotherCampaignIsRefused() async throws {
        let (scratch, pipeline, audience, folder) = try Self.stoppedRun()
        let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()

        let otherAudience = scratch.file("other.ndjson.gz")
        _ = try AudienceGenerator(seed: 12).write(count: 100, to: otherAudience)
        let changedPipeline = scratch.file("changed.yaml")
        try (String(contentsOfFile: pipeline, encoding: .utf8) + "# changed\n").write(toFile: changedPipeline, atomically: true, encoding: .utf8)

        let cases: [([String], String)] = [
            (ResumeDryRunTests.arguments(changedPipeline, audience, folder, ["--resume"]), "changed since the checkpoint"),
            (ResumeDryRunTests.arguments(pipeline, otherAudience, folder, ["--resume"]), "is not the one the checkpoint read"),
            (ResumeDryRunTests.arguments(pipeline, audience, folder, ["--resume", "--now", "1800000001"]), "differs from the checkpoint's clock"),
        ]
        for (arguments, message) in cases {
            let outcome = try await PushlineBinary.run(arguments)
            #expect(outcome.status == 13, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)
        // The rightful resume still works after the refusals, and removes the journal a kill
        // left half-replaced (its temporary file is never read).
        let halfReplaced = folder + "/checkpoint.json.4242-abc.tmp"
        try "{\"version\":1,".write(toFile: halfReplaced, atomically: false, encoding: .utf8)
        let resumed = try await PushlineBinary.run(ResumeDryRunTests.arguments(pipeline, audience, folder, ["--resume"]))
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: halfReplaced))
    }

    @Test func resumeAndForceCannotBeCombined() async throws {
        let outcome = try await PushlineBinary.run(["run", "p.yaml", "--resume", "--force"])
        #expect(outcome.status == 64)
    }
}

@Suite("Resume: --auto-resume, for schedulers that retry the same command")
struct AutoResumeTests {
    /// The same command line twice: the first run starts anew (an empty folder), is killed, and
    /// the second continues it; the result equals one run.
    @Test func theSameCommandStartsThenResumes() async throws {
        let (scratch, pipeline, audience) = try ResumeDryRunTests.setUp(gzip: false)
        let folder = scratch.file("out")
        let command = ResumeDryRunTests.arguments(pipeline, audience, folder, ["--auto-resume", "--now", ResumeDryRunTests.clock])
        let first = try KillableRun.start(command, log: scratch.file("first.log"))
        let reached = first.wait(for: folder) { checkpointWatermark(folder) >= ResumeDryRunTests.customers / 3 }
        let exit = first.kill()
        try #require(reached && exit.signalled, "the run ended before it could be killed: \(first.stderr)")
        #expect(!first.stderr.contains("resuming"))

        let second = try await PushlineBinary.run(command)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("resuming after line"))
        let summary = try readSummary(folder)
        #expect((summary["resume"] as? [String: Any])?["runs"] as? Int == 2)
        #expect((summary["lines"] as? [String: Any])?["read"] as? Int == ResumeDryRunTests.customers)
        #expect(summary["reconciled"] as? Bool == true)

        // Once finished, the same command (a scheduler's retry) reports the finished run and
        // writes nothing; the plain command (no --auto-resume) writes the dry run again.
        let finishedSummary = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        let third = try await PushlineBinary.run(command)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stderr.contains("already finished this campaign"), "\(third.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json")) == finishedSummary)
        let plain = try await PushlineBinary.run(ResumeDryRunTests.arguments(pipeline, audience, folder, ["--now", ResumeDryRunTests.clock]))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stderr.contains("already finished"))
        #expect(try readSummary(folder)["resume"] == nil)
    }
}
}
