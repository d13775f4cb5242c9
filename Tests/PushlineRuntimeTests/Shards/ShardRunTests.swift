import Crypto
import Foundation
import PushlineCore
import PushlineDelivery
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Three `pushline run --shard I/3` processes over one audience against one unsharded run: the
/// shards partition the campaign (their requests and rejects together are exactly the
/// unsharded run's, with no recipient in two shards), and `merge-results` gives its counts.
@Suite("Shards: a campaign split over processes", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ShardRunTests {
    static let demo = PushlineBinary.root.appendingPathComponent("pipelines/demo.yaml").path

    /// The documented hash, written here again: 64-bit FNV-1a of the id's bytes.
    static func shardOf(_ id: String, count: UInt64) -> Int {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 1_099_511_628_211
        }
        return Int(hash % count)
    }

    /// `command` once per shard of `count` (`--shard I/N`), each into `shard-I`: their folders.
    static func runShards(_ command: [String], count: Int, in scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        var folders: [String] = []
        for index in 0..<count {
            let folder = scratch.file("shard-\(index)")
            let run = try await PushlineBinary.run(command + ["--output", folder, "--shard", "\(index)/\(count)"])
            #expect([PushlineExit.ok.code, PushlineExit.completedWithRejects.code].contains(run.status), "\(run.stderr)", sourceLocation: sourceLocation)
            folders.append(folder)
        }
        return folders
    }

    @Test func threeShardsPartitionTheCampaignAndMergeToItsSummary() async throws {
        let scratch = try Scratch()
        let plain = scratch.file("audience.ndjson")
        let generated = try await PushlineBinary.run(["generate-audience", "3000", plain, "--seed", "5"])
        try #require(generated.status == 0, "\(generated.stderr)")
        // Lines no shard can hash (not JSON, no id): exactly one shard rejects each.
        let bad = "not json\n{\"devices\":[{\"platform\":\"ios\",\"token\":\"\(String(repeating: "ab", count: 32))\"}]}\n{\"id\":\"\"}\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: plain))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bad.utf8))
        try handle.close()
        let audience = scratch.file("audience.ndjson.gz")
        let gzip = ChildProcess()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c \"$0\" > \"$1\"", plain, audience]
        try gzip.run()
        try #require(gzip.waitForExit().shellStatus == 0)

        let common = ["run", Self.demo, "--dry-run", "--audience", audience, "--now", "1700000000", "--no-progress", "--log-level", "error"]
        let whole = scratch.file("whole")
        let wholeRun = try await PushlineBinary.run(common + ["--output", whole])
        #expect(wholeRun.status == PushlineExit.completedWithRejects.code, "\(wholeRun.stderr)")
        let shardFolders = try await Self.runShards(common, count: 3, in: scratch)

        for file in ["requests-apns.ndjson", "requests-fcm.ndjson", "rejects.ndjson"] {
            var union: [String] = []
            for (index, folder) in shardFolders.enumerated() {
                let lines = try String(contentsOfFile: folder + "/" + file, encoding: .utf8).split(separator: "\n").map(String.init)
                union += lines
                // Every recipient a shard addressed hashes to it.
                for record in try readLines(folder + "/" + file) {
                    if let recipient = record["recipient"] as? String, !recipient.isEmpty, file != "rejects.ndjson" {
                        #expect(Self.shardOf(recipient, count: 3) == index, "\(recipient) in shard \(index)")
                    }
                }
            }
            let expected = try String(contentsOfFile: whole + "/" + file, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(!expected.isEmpty)
            #expect(union.sorted() == expected.sorted(), "\(file): the shards together are the whole run, each line once")
        }
        let rejects = try readLines(whole + "/rejects.ndjson").filter { $0["device"] is NSNull }.count
        #expect(rejects >= 3, "the unparseable lines are rejected once in all")

        let merged = try await PushlineBinary.run(["merge-results"] + shardFolders)
        #expect(merged.status == 0, "\(merged.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)) as? [String: Any])
        let reference = try readSummary(whole)
        for key in ["devices", "providers", "lines"] {
            let ours = try #require(summary[key] as? NSDictionary)
            let theirs = try #require(reference[key] as? NSDictionary)
            #expect(ours == theirs, "merged \(key) equals the unsharded run's")
        }
        #expect(summary["reconciled"] as? Bool == true)

        // Refused, exit 12, one line: a shard missing, a shard twice, a folder that is no shard.
        for folders in [Array(shardFolders.prefix(2)), shardFolders + [shardFolders[1]], [shardFolders[0], whole]] {
            let refused = try await PushlineBinary.run(["merge-results"] + folders)
            #expect(refused.status == PushlineExit.shardsDoNotMatch.code)
            #expect(refused.stderrLines.count == 1 && refused.stderr.hasPrefix("pushline: error:"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }

        // A doctored shard summary: counts that would overflow a sum, a negative count, nesting
        // past a summary's. Refused with 12, never a crash.
        let original = try readSummary(shardFolders[2])
        var deep: Any = 1
        for _ in 0..<40 { deep = ["a": deep] }
        let doctorings: [(String, Any)] = [("read", 9_223_372_036_854_775_807), ("read", -5), ("read", 2.5), ("deep", deep)]
        for (key, value) in doctorings {
            var doctored = original
            var devices = try #require(doctored["devices"] as? [String: Any])
            devices[key] = value
            doctored["devices"] = devices
            let hostile = scratch.file("hostile")
            try? FileManager.default.removeItem(atPath: hostile)
            try FileManager.default.createDirectory(atPath: hostile, withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: doctored).write(to: URL(fileURLWithPath: hostile + "/summary.json"))
            let refused = try await PushlineBinary.run(["merge-results", shardFolders[0], shardFolders[1], hostile])
            #expect(refused.status == PushlineExit.shardsDoNotMatch.code, "\(refused.stderr)")
        }
    }

    @Test func eachShardSendsAtItsShareOfTheRate() throws {
        let settings = SenderSettings(connections: 1, streamsPerConnection: 1, rate: try SendRate(perSecond: 900, burst: 90), retry: RetryPolicy())
        let key = try APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "ABCDE12345")
        let mode = RunMode.send([ProviderSendConfiguration(provider: .apns, credentials: .apns(key), settings: settings)], validateOnly: false)
        guard case .send(let configurations, _) = mode.sharded(try AudienceShard(index: 1, count: 3)) else {
            Issue.record("a sharded send is still a send")
            return
        }
        #expect(configurations[0].settings.rate.perSecond == 300)
        #expect(configurations[0].settings.rate.burst == 30)
    }
}
