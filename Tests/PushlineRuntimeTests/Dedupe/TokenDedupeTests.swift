import Foundation
import Logging
import PushlineCore
import PushlineRuntime
import Testing

/// Line `n` (1-based) of a dedupe audience: recipient `r<n>` with an iOS device whose APNs token
/// is the `n % distinct`-th, and an Android device whose FCM token is the same text (another
/// provider: never a duplicate of the APNs one).
private func dedupeLine(_ n: Int, distinct: Int) -> String {
    let token = String(format: "%064x", n % distinct)
    return line("\"r\(n)\"", [("ios", token), ("android", "fcm:" + token)])
}

/// Runs a dry run over `lines` with small batches, so duplicates fall in other batches and
/// other workers than their first occurrence.
private func dryRunLines(_ lines: [String], pipeline: String = demoStylePipeline, workers: Int, batchLines: Int, in scratch: Scratch, output: String = "out") async throws -> RunReport {
    let audience = scratch.file("audience.ndjson")
    try (lines.joined(separator: "\n") + "\n").write(toFile: audience, atomically: true, encoding: .utf8)
    let loaded = try PipelineLoader.load(path: try writePipeline(pipeline, in: scratch), now: 1_800_000_000)
    var logger = Logger(label: "test")
    logger.logLevel = .error
    var run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: scratch.file(output), workers: workers, logger: logger)
    run.readerOptions.maxBatchLines = batchLines
    return await run.run()
}

@Suite("Dedupe: one request per device token, the first in input order")
struct TokenDedupeTests {
    static let distinct = 50
    static let lines = (1...400).map { dedupeLine($0, distinct: distinct) }

    @Test(arguments: [1, 3, 8])
    func duplicatesAcrossBatchesAndWorkersAreSkippedAndTheFirstWins(workers: Int) async throws {
        let scratch = try Scratch()
        let report = try await dryRunLines(Self.lines, workers: workers, batchLines: 7, in: scratch)
        #expect(report.status == .completed, "\(report.failure ?? "")")
        #expect(report.reconciled)
        // 400 lines × 2 devices; 50 distinct tokens per provider: 50 + 50 written, 700 skipped.
        #expect(report.counts.devices == 800)
        #expect(report.counts.writtenTotal == 100)
        #expect(report.counts.skipped == ["duplicate_token": 700])
        #expect(report.counts.byProvider[.apns]?.skipped == 350 && report.counts.byProvider[.fcm]?.skipped == 350)
        // The first occurrence of token k (k = n % 50) is line n = k for k ≥ 1, and line 50 for k = 0.
        let firstLines = Set((1...Self.distinct).map { "r\($0)" })
        for name in ["requests-apns.ndjson", "requests-fcm.ndjson"] {
            let recipients = try readLines(scratch.file("out/" + name)).map { $0["recipient"] as? String ?? "" }
            #expect(recipients == (1...Self.distinct).map { "r\($0)" }, "\(name): in input order, first occurrences only")
            #expect(Set(recipients) == firstLines)
        }
        let summary = try readSummary(scratch.file("out"))
        let devices = try #require(summary["devices"] as? [String: Any])
        #expect(devices["skipped_by_reason"] as? [String: Int] == ["duplicate_token": 700])
    }

    @Test func theOutputIsTheSameWhateverTheWorkers() async throws {
        let scratch = try Scratch()
        _ = try await dryRunLines(Self.lines, workers: 1, batchLines: 3, in: scratch, output: "one")
        _ = try await dryRunLines(Self.lines, workers: 8, batchLines: 3, in: scratch, output: "eight")
        for name in ["requests-apns.ndjson", "requests-fcm.ndjson"] {
            let one = try Data(contentsOf: URL(fileURLWithPath: scratch.file("one/" + name)))
            let eight = try Data(contentsOf: URL(fileURLWithPath: scratch.file("eight/" + name)))
            #expect(one == eight && !one.isEmpty, "\(name)")
        }
    }

    @Test func dedupeFalseWritesEveryDevice() async throws {
        let scratch = try Scratch()
        let report = try await dryRunLines(Self.lines, pipeline: demoStylePipeline + "\ndedupe: false\n", workers: 2, batchLines: 7, in: scratch)
        #expect(report.status == .completed && report.reconciled)
        #expect(report.counts.writtenTotal == 800 && report.counts.skippedTotal == 0)
    }

    /// A repeated token inside one record, and the same token on two lines of one batch.
    @Test func duplicatesWithinALineAndWithinABatch() async throws {
        let scratch = try Scratch()
        let token = String(repeating: "ab", count: 32)
        let lines = [
            line(#""a""#, [("ios", token), ("ios", token)]),
            line(#""b""#, [("ios", token)]),
            line(#""c""#, [("ios", String(repeating: "cd", count: 32))]),
        ]
        let report = try await dryRunLines(lines, workers: 2, batchLines: 100, in: scratch)
        #expect(report.reconciled && report.counts.writtenTotal == 2 && report.counts.skipped == ["duplicate_token": 2])
        let written = try readLines(scratch.file("out/requests-apns.ndjson"))
        #expect(written.map { $0["recipient"] as? String } == ["a", "c"])
        #expect(written.map { $0["device"] as? Int } == [0, 0], "device 0 of a, the first of the two")
    }

    /// Sending: the lane is handed only first occurrences; the others are settled as skipped.
    @Test func aSendingRunSendsEachTokenOnce() async throws {
        let scratch = try Scratch()
        let apns = ScriptedLane(provider: .apns) { _ in .settle(.sent(providerID: "ok", attempts: 1)) }
        let fcm = ScriptedLane(provider: .fcm) { _ in .settle(.sent(providerID: "m", attempts: 1)) }
        let report = try await runSend(demoStylePipeline, lines: Self.lines, lanes: [apns, fcm], batchLines: 9, workers: 4, in: scratch)
        #expect(report.status == .completed && report.reconciled, "\(report.failure ?? "")")
        let apnsReceived = await apns.received
        let fcmReceived = await fcm.received
        #expect(apnsReceived == Self.distinct && fcmReceived == Self.distinct)
        #expect(report.counts.sentTotal == 2 * Self.distinct)
        #expect(report.counts.skipped == ["duplicate_token": 800 - 2 * Self.distinct])
        let sent = try resultLines(scratch, "sent.ndjson")
        #expect(sent.count == 2 * Self.distinct)
        let recipients = Set(sent.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.compactMap { $0["recipient"] as? String })
        #expect(recipients == Set((1...Self.distinct).map { "r\($0)" }))
    }

    /// Empty, huge and odd tokens are rejected or deduped; nothing traps and the counts add up.
    @Test func hostileTokensDoNotCrash() async throws {
        let scratch = try Scratch()
        let huge = String(repeating: "f", count: 200_000)
        let lines = [
            line(#""a""#, [("ios", ""), ("android", ""), ("web", "")]),
            line(#""b""#, [("android", huge), ("android", huge)]),
            line(#""c""#, [("ios", ""), ("android", "x")]),
            line(#""d""#, [("android", "x")]),
            #"{"id":"e","devices":[{"platform":"android","token":"\u0000"},{"platform":"android","token":"\u0000"}]}"#,
        ]
        let report = try await dryRunLines(lines, workers: 3, batchLines: 1, in: scratch)
        #expect(report.reconciled, "\(report.failure ?? "")")
        #expect(report.counts.devices == 10)
        #expect(report.counts.settledTotal == 10)
    }
}

@Suite("Dedupe: the digest set")
struct TokenDigestSetTests {
    @Test func insertFindsEveryEarlierDigestAcrossGrowth() {
        var set = TokenDigestSet(initialSlots: 16)
        var rng = SystemRandomNumberGenerator()
        var seen: [UInt64] = [0, 1, UInt64.max]
        for _ in 0..<10_000 { seen.append(rng.next()) }
        for digest in seen {
            let added = set.insert(digest)
            #expect(added)
        }
        #expect(set.count == seen.count)
        #expect(set.capacity >= seen.count * 4 / 3)
        for digest in seen.shuffled() {
            let added = set.insert(digest)
            #expect(!added, "\(digest) again")
        }
        #expect(set.count == seen.count)
    }

    @Test func aBatchInsertReportsWhatInsertsOneByOneWould() {
        // Duplicates within the batch, of earlier batches, the digest 0, and growth mid-batch.
        var rng = SplitMix64(seed: 2026_11_28)
        var pool: [UInt64] = [0, UInt64.max]
        for _ in 0..<3_000 { pool.append(rng.next()) }
        var batched = TokenDigestSet(initialSlots: 16)
        var single = TokenDigestSet(initialSlots: 16)
        var duplicatesSeen = 0
        for batchSize in [1, 7, 500, 2_000, 4_000] {
            let batch = (0..<batchSize).map { _ in pool[Int(rng.next() % UInt64(pool.count))] }
            var expected: [Int] = []
            for (i, digest) in batch.enumerated() where !single.insert(digest) { expected.append(i) }
            var reported: [Int] = []
            batched.insert(batch: batch) { reported.append($0) }
            #expect(reported == expected, "batch of \(batchSize)")
            duplicatesSeen += expected.count
        }
        #expect(batched.count == single.count && batched.capacity == single.capacity)
        #expect(duplicatesSeen > 1_000, "the batches repeat digests, so the check means something")
    }

    @Test func theSetStopsGrowingAtItsBound() {
        var set = TokenDigestSet(initialSlots: 16, maxSlots: 64)
        for digest in 1...48 {
            let added = set.insert(UInt64(digest))
            #expect(added)
        }
        #expect(set.capacity == 64 && !set.isSaturated)
        // Full at its bound: new digests are not remembered (so never wrongly skipped), old ones still are.
        let first = set.insert(1000)
        let second = set.insert(1000)
        #expect(first && second)
        #expect(set.isSaturated && set.capacity == 64)
        let seven = set.insert(7)
        #expect(!seven)
    }

    @Test func digestsDependOnChannelAndEveryByte() {
        let token = Array("0123456789abcdef0123456789abcdef!".utf8)
        var digests = Set<UInt64>()
        for length in 0...token.count {
            digests.insert(TokenDigest.digest(channel: 0, token: token.prefix(length)))
            digests.insert(TokenDigest.digest(channel: 1, token: token.prefix(length)))
        }
        #expect(digests.count == 2 * (token.count + 1), "every prefix and channel differs")
        var flipped = token
        flipped[20] ^= 1
        #expect(TokenDigest.digest(channel: 0, token: flipped) != TokenDigest.digest(channel: 0, token: token))
        // Zero padding does not make "a" and "a\0" one token.
        #expect(TokenDigest.digest(channel: 0, token: [0x61]) != TokenDigest.digest(channel: 0, token: [0x61, 0]))
        let huge = [UInt8](repeating: 0x66, count: 1 << 20)
        #expect(TokenDigest.digest(channel: 0, token: huge) != TokenDigest.digest(channel: 0, token: huge.dropLast()))
    }
}
