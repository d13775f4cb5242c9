import Foundation
import PushlineCore
import PushlineRuntime
import PushlineTestSupport
import Testing

/// An experiment run as `pushline` processes: split over shards and merged, and killed and
/// resumed. Either way each recipient keeps its variant, and the counts are the whole run's.
@Suite("Experiments: shards and resume", .serialized, .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ExperimentProcessTests {
    static func setUp(customers: Int) throws -> (scratch: Scratch, pipeline: String, audience: String) {
        let scratch = try Scratch()
        let pipeline = try writePipeline(experimentPipeline, in: scratch)
        let audience = scratch.file("audience.ndjson.gz")
        _ = try AudienceGenerator(seed: 23, hostileFraction: 0.02).write(count: customers, to: audience)
        return (scratch, pipeline, audience)
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Three shards write exactly the whole run's request, reject and holdout lines (each
    /// carrying its variant), and `merge-results` gives the whole run's variant counts.
    @Test func shardsKeepEveryRecipientsVariantAndMergeToTheWholeRunsCounts() async throws {
        let (scratch, pipeline, audience) = try Self.setUp(customers: 4000)
        let common = ["run", pipeline, "--dry-run", "--audience", audience, "--now", "1800000000", "--no-progress", "--log-level", "error"]
        let whole = scratch.file("whole")
        let wholeRun = try await PushlineBinary.run(common + ["--output", whole])
        #expect([PushlineExit.ok.code, PushlineExit.completedWithRejects.code].contains(wholeRun.status), "\(wholeRun.stderr)")
        let folders = try await ShardRunTests.runShards(common, count: 3, in: scratch)
        for file in ["requests-apns.ndjson", "requests-fcm.ndjson", "rejects.ndjson", "holdout.ndjson"] {
            let union = try folders.flatMap { try Self.lines($0 + "/" + file) }
            let expected = try Self.lines(whole + "/" + file)
            #expect(!expected.isEmpty || file == "rejects.ndjson", "\(file) is empty")
            #expect(union.sorted() == expected.sorted(), "\(file): the shards together are the whole run, each line once")
        }
        let merged = try await PushlineBinary.run(["merge-results"] + folders)
        #expect(merged.status == 0, "\(merged.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)) as? [String: Any])
        let reference = try readSummary(whole)
        for key in ["variants", "experiment", "devices"] {
            let ours = try #require(summary[key] as? NSDictionary, "merged summary has no \(key)")
            let theirs = try #require(reference[key] as? NSDictionary)
            #expect(ours == theirs, "merged \(key) equals the unsharded run's")
        }
        // Each shard's variants add up with its other-shard skips to what it read.
        for folder in folders {
            let shard = try readSummary(folder)
            let rows = try #require(shard["variants"] as? [String: [String: Int]])
            let devices = try #require(shard["devices"] as? [String: Any])
            let otherShard = (devices["skipped_by_reason"] as? [String: Int])?["other_shard"] ?? 0
            #expect(rows.values.reduce(0) { $0 + ($1["devices"] ?? 0) } + otherShard == devices["read"] as? Int)
        }

        // Shards of another experiment (another id) are refused.
        let other = scratch.file("other.yaml")
        try experimentPipeline.replacingOccurrences(of: "copy-test-1", with: "copy-test-2").write(toFile: other, atomically: true, encoding: .utf8)
        let otherShard = scratch.file("other-shard-2")
        let otherRun = try await PushlineBinary.run(["run", other] + common.dropFirst(2) + ["--output", otherShard, "--shard", "2/3"])
        #expect([PushlineExit.ok.code, PushlineExit.completedWithRejects.code].contains(otherRun.status), "\(otherRun.stderr)")
        let refused = try await PushlineBinary.run(["merge-results", folders[0], folders[1], otherShard])
        #expect(refused.status == PushlineExit.shardsDoNotMatch.code, "\(refused.stderr)")
        #expect(refused.stderr.contains("experiment"), "\(refused.stderr)")

        // A doctored shard's variants (a count a sum would overflow, a negative one, nesting past
        // a summary's): refused with 12 in one line, never a crash.
        let original = try Data(contentsOf: URL(fileURLWithPath: folders[2] + "/summary.json"))
        var deep: Any = 1
        for _ in 0..<40 { deep = ["a": deep] }
        for value in [Int64.max as Any, -5 as Any, deep] {
            var summary = try readSummary(folders[2])
            var rows = try #require(summary["variants"] as? [String: Any])
            var row = try #require(rows["a"] as? [String: Any])
            row["devices"] = value
            rows["a"] = row
            summary["variants"] = rows
            try JSONSerialization.data(withJSONObject: summary).write(to: URL(fileURLWithPath: folders[2] + "/summary.json"))
            let doctored = try await PushlineBinary.run(["merge-results"] + folders)
            #expect(doctored.status == PushlineExit.shardsDoNotMatch.code, "\(value): \(doctored.stderr)")
            #expect(doctored.stderrLines.count == 1 && doctored.stdout.isEmpty, "\(doctored.stderr)")
        }
        try original.write(to: URL(fileURLWithPath: folders[2] + "/summary.json"))
    }

    /// Killed with SIGKILL once past a checkpoint and resumed: the files (holdout included) and
    /// the variant counts are the uninterrupted run's, byte for byte.
    @Test(.timeLimit(.minutes(10))) func killedAndResumedKeepsEveryVariant() async throws {
        let (scratch, pipeline, audience) = try Self.setUp(customers: 30_000)
        let reference = scratch.file("reference")
        let whole = try await PushlineBinary.run(ResumeEndToEnd.ResumeDryRunTests.arguments(pipeline, audience, reference, ["--now", ResumeEndToEnd.ResumeDryRunTests.clock]))
        #expect([PushlineExit.ok.code, PushlineExit.completedWithRejects.code].contains(whole.status), "\(whole.stderr)")
        let folder = scratch.file("killed")
        let run = try KillableRun.start(ResumeEndToEnd.ResumeDryRunTests.arguments(pipeline, audience, folder, ["--now", ResumeEndToEnd.ResumeDryRunTests.clock]), log: scratch.file("run.log"))
        let reached = run.wait(for: folder) { checkpointWatermark(folder) >= 10_000 && filesPastCheckpoint(folder) }
        let exit = run.kill()
        try #require(reached && exit == ChildExit(code: SIGKILL, signalled: true), "the run ended before line 10,000 was checkpointed: \(run.stderr)")
        let resumed = try await PushlineBinary.run(ResumeEndToEnd.ResumeDryRunTests.arguments(pipeline, audience, folder, ["--resume"]))
        #expect(resumed.status == whole.status, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("resuming after line"))
        let expected = try ResumeEndToEnd.ResumeDryRunTests.contents(reference)
        let got = try ResumeEndToEnd.ResumeDryRunTests.contents(folder)
        #expect(expected.keys.contains("holdout.ndjson"))
        #expect(got.keys.sorted() == expected.keys.sorted())
        for (name, bytes) in expected {
            #expect(got[name] == bytes, "\(name) differs from the uninterrupted run's")
        }
        let ours = try #require(try readSummary(folder)["variants"] as? NSDictionary)
        let theirs = try #require(try readSummary(reference)["variants"] as? NSDictionary)
        #expect(ours == theirs)
    }
}

/// `pushline validate` on a pipeline whose variants have problems: exit 2, each problem with the
/// file's line and column and the variant's path, nothing read.
@Suite("Experiments: validate", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ExperimentValidateCommandTests {
    @Test func validateExitsTwoWithEveryVariantsProblem() async throws {
        let scratch = try Scratch()
        let bad = experimentPipeline
            .replacingOccurrences(of: "control: 10%", with: "control: 10")
            .replacingOccurrences(of: "ios: { sound: chime }", with: "ios: { sond: chime }")
        let file = try writePipeline(bad, in: scratch)
        let outcome = try await PushlineBinary.run(["validate", file])
        #expect(outcome.status == PushlineExit.invalidPipeline.code, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("pipeline.yaml:11:12: error: experiment.control: expected a percentage such as 10%"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("pipeline.yaml:18:53: error: experiment.variants[1].notification.ios.sond: unknown key 'sond' in ios (did you mean 'sound'?)"), "\(outcome.stderr)")
        let good = try writePipeline(experimentPipeline, in: scratch)
        let valid = try await PushlineBinary.run(["validate", good])
        #expect(valid.status == 0 && valid.stdout.contains("experiment 'copy-test-1': variants a, b, 10% control"), "\(valid.stdout)\(valid.stderr)")
    }
}

/// The metrics file of an experiment's run: `pushline_variant_devices_total` per variant and
/// outcome, equal to summary.json's `variants` rows, and promtool-clean.
@Suite("Experiments: metrics", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ExperimentMetricsTests {
    @Test func theVariantFamilyFollowsTheSummary() async throws {
        let (scratch, pipeline, audience) = try ExperimentProcessTests.setUp(customers: 1500)
        let folder = scratch.file("out")
        let metrics = scratch.file("metrics.prom")
        let run = try await PushlineBinary.run(["run", pipeline, "--dry-run", "--audience", audience, "--output", folder, "--metrics-file", metrics, "--no-progress", "--log-level", "error"])
        #expect([PushlineExit.ok.code, PushlineExit.completedWithRejects.code].contains(run.status), "\(run.stderr)")
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        let file = try MetricsFileTests.readText(text, campaign: "exp")
        let rows = try #require(try readSummary(folder)["variants"] as? [String: [String: Int]])
        for (variant, row) in rows {
            for (outcome, key) in [("written", "written"), ("skipped", "skipped"), ("rejected", "rejected"), ("invalid_token", "invalid_token")] {
                #expect(file.value("pushline_variant_devices_total", ["variant": variant, "outcome": outcome]) == Double(row[key] ?? -1), "\(variant) \(outcome)")
            }
        }
        // The dashboard's experiment panel queries what this file has.
        let written = Set(file.samples.map(\.name))
        let dashboard = try Dashboard(path: MetricsLintAndDashboardTests.dashboardPath)
        var shown = false
        for query in dashboard.queries {
            for name in try PromQLMetricNames.of(query) where RunMetrics.experimentFamilies.contains(name) {
                #expect(written.contains(name), "\(name) (in \(query)) is not in an experiment's file")
                shown = true
            }
        }
        #expect(shown, "the dashboard shows the experiment's variants")
        if Promtool.path != nil {
            let lint = try await Promtool.checkMetrics(text)
            #expect(lint.status == 0, "\(lint.stdout)\(lint.stderr)")
        } else {
            print("skipped: promtool check of the experiment's metrics file (promtool is not installed)")
        }
    }
}
