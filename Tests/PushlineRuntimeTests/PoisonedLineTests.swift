import Foundation
import Logging
import PushlineCore
import PushlineEncoding
import PushlineRuntime
import Testing

/// An encoder that encodes like the campaign's, then throws for the poisoned lines: the worst
/// case, a failure after part of the line's output and counts were already added.
struct PoisonedEncoder: LineEncoding {
    struct Poison: Error {}
    let inner: CampaignEncoder
    let poisoned: @Sendable (Int) -> Bool
    var campaign: Campaign { inner.campaign }
    func makeContext() -> EncodeContext { inner.makeContext() }
    func rejectOversizeLine(_ number: Int, length: Int, into batch: inout EncodedBatch) {
        inner.rejectOversizeLine(number, length: length, into: &batch)
    }
    func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch, context: inout EncodeContext) throws {
        inner.encodeLine(buffer: buffer, line: line, into: &batch, context: &context)
        if poisoned(line.number) { throw Poison() }
    }
}

/// An encoder whose counts do not add up: a device counted with no outcome.
struct MiscountingEncoder: LineEncoding {
    let inner: CampaignEncoder
    var campaign: Campaign { inner.campaign }
    func makeContext() -> EncodeContext { inner.makeContext() }
    func rejectOversizeLine(_ number: Int, length: Int, into batch: inout EncodedBatch) {
        inner.rejectOversizeLine(number, length: length, into: &batch)
    }
    func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch, context: inout EncodeContext) throws {
        inner.encodeLine(buffer: buffer, line: line, into: &batch, context: &context)
        if line.number == 2 { batch.counts.devices += 1 }
    }
}

@Suite("A poisoned line does not take the run down")
struct PoisonedLineTests {
    static let iosToken = String(repeating: "ab", count: 32)
    static let fcmToken = String(repeating: "A", count: 22) + ":APA91b" + String(repeating: "b", count: 134)

    /// `count` lines, each one customer with an iOS and an Android device.
    static func audience(_ count: Int, in scratch: Scratch, extra: [String] = []) throws -> String {
        let path = scratch.file("audience.ndjson")
        let lines = (1...count).map { #"{"id":"c-\#($0)","devices":[{"platform":"ios","token":"\#(iosToken)"},{"platform":"android","token":"\#(fcmToken)"}]}"# } + extra
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func run(_ scratch: Scratch, audience: String, workers: Int = 2, encoder: (CampaignEncoder) -> some LineEncoding) async throws -> RunReport {
        let loaded = try PipelineLoader.load(path: try writePipeline(sinkTestPipeline, in: scratch), now: 1_800_000_000)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: scratch.file("out"), workers: workers, logger: logger)
        return await run.run(encoder: encoder(CampaignEncoder(campaign: loaded.campaign)))
    }

    @Test func poisonedLinesBecomeInternalErrorRejectsAndTheRunGoesOn() async throws {
        let scratch = try Scratch()
        let audience = try Self.audience(10, in: scratch)
        let report = try await Self.run(scratch, audience: audience) { PoisonedEncoder(inner: $0, poisoned: { $0 == 4 || $0 == 7 }) }
        // 10 lines × 2 devices; lines 4 and 7 lose both devices to internal_error.
        #expect(report.status == .completedWithRejects && report.exit == .completedWithRejects, "\(report.failure ?? "")")
        #expect(report.counts.lines == 10 && report.counts.devices == 20)
        #expect(report.counts.writtenTotal == 16)
        #expect(report.counts.rejected == ["internal_error": 4])
        #expect(report.counts.reconciles)

        let rejects = try readLines(scratch.file("out/rejects.ndjson"))
        #expect(rejects.map { [$0["line"] as? Int, $0["device"] as? Int] } == [[4, 0], [4, 1], [7, 0], [7, 1]])
        #expect(rejects.allSatisfy { $0["code"] as? String == "internal_error" })
        #expect(rejects.map { $0["recipient"] as? String } == ["c-4", "c-4", "c-7", "c-7"])
        #expect(rejects.map { $0["platform"] as? String } == ["ios", "android", "ios", "android"])
        // Nothing of the poisoned lines reached the request files (their partial output was rolled back).
        let requests = try readLines(scratch.file("out/requests-apns.ndjson")) + (try readLines(scratch.file("out/requests-fcm.ndjson")))
        #expect(requests.count == 16)
        #expect(Set(requests.compactMap { $0["line"] as? Int }) == Set([1, 2, 3, 5, 6, 8, 9, 10]))

        let summary = try readSummary(scratch.file("out"))
        #expect(summary["reconciled"] as? Bool == true)
        #expect(summary["exit_code"] as? Int == 3)
        #expect((summary["devices"] as? [String: Any])?["rejected_by_reason"] as? [String: Int] == ["internal_error": 4])
    }

    /// Every line of every batch failing: still one reject per device, still a summary.
    @Test func aBatchWhereEveryLineFailsIsAccountedLineByLine() async throws {
        let scratch = try Scratch()
        // 5,000 lines make two reader batches (about 4,096 lines each).
        let audience = try Self.audience(5000, in: scratch)
        let report = try await Self.run(scratch, audience: audience) { PoisonedEncoder(inner: $0, poisoned: { _ in true }) }
        #expect(report.status == .completedWithRejects)
        #expect(report.counts.lines == 5000 && report.counts.devices == 10_000)
        #expect(report.counts.writtenTotal == 0 && report.counts.rejected == ["internal_error": 10_000])
        #expect(try readLines(scratch.file("out/rejects.ndjson")).count == 10_000)
        #expect(try readLines(scratch.file("out/requests-apns.ndjson")).isEmpty)
        #expect(try readSummary(scratch.file("out"))["reconciled"] as? Bool == true)
    }

    /// A poisoned line that is not a routable record is rejected whole, with its line number.
    @Test func aPoisonedUnroutableLineIsRejectedWhole() async throws {
        let scratch = try Scratch()
        let audience = try Self.audience(3, in: scratch, extra: [#"{"id":"x"}"#, "not json"])
        let report = try await Self.run(scratch, audience: audience) { PoisonedEncoder(inner: $0, poisoned: { $0 >= 4 }) }
        #expect(report.counts.lines == 5 && report.counts.linesRejected == 2)
        #expect(report.counts.writtenTotal == 6 && report.counts.rejectedTotal == 0)
        let rejects = try readLines(scratch.file("out/rejects.ndjson"))
        #expect(rejects.map { $0["line"] as? Int } == [4, 5])
        #expect(rejects.allSatisfy { $0["code"] as? String == "internal_error" && $0["device"] is NSNull })
        #expect(report.status == .completedWithRejects)
    }

    @Test func countsThatDoNotReconcileStillWriteTheSummaryAndExitAsInternalErrors() async throws {
        let scratch = try Scratch()
        let audience = try Self.audience(3, in: scratch)
        let report = try await Self.run(scratch, audience: audience) { MiscountingEncoder(inner: $0) }
        #expect(report.status == .failed && report.exit == .internalError)
        #expect(report.failure == "counts do not reconcile: 7 devices read, 6 written + 0 rejected + 0 skipped")
        let summary = try readSummary(scratch.file("out"))
        #expect(summary["reconciled"] as? Bool == false)
        #expect(summary["exit_code"] as? Int == 1, "internal_error")
        #expect(summary["status"] as? String == "failed")
    }
}
