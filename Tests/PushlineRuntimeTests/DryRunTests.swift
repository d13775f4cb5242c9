import Foundation
import Logging
import PushlineCore
import PushlineEncoding
import PushlineIO
import PushlineRuntime
import Testing

/// A temporary folder per test, removed afterwards.
final class Scratch {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "pushline-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

func writePipeline(_ yaml: String, in scratch: Scratch) throws -> String {
    let path = scratch.file("pipeline.yaml")
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

func runDry(_ pipelinePath: String, audience: String, output: String, workers: Int = 2) async throws -> RunReport {
    let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000)
    var logger = Logger(label: "test")
    logger.logLevel = .error
    return await CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: output, workers: workers, logger: logger).run()
}

/// Every line of an NDJSON file, parsed by Foundation (an independent, strict parser).
func readLines(_ path: String) throws -> [[String: Any]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try data.split(separator: 0x0A).map { line in
        try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }
}

func readSummary(_ folder: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))) as? [String: Any])
}

let demoStylePipeline = """
name: e2e
personalization: liquid
device_types: [ios, android]
notification:
  title: "Hi {{ customer.first_name }}"
  alert: "Your {{ event.event_title }} is waiting"
  ios: { sound: default }
  android: { notification_channel: promos }
providers:
  apns: { topic: com.example.app }
  fcm: { project_id: demo }
"""

@Suite("Dry runs end to end")
struct DryRunTests {
    @Test func generatedGzipAudienceWritesValidRequestsAndReconciles() async throws {
        let scratch = try Scratch()
        let audience = scratch.file("audience.ndjson.gz")
        let devices = try AudienceGenerator(seed: 3).write(count: 2000, to: audience)
        let report = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: audience, output: scratch.file("out"))
        #expect(report.status == .completed, "\(report.failure ?? "")")
        #expect(report.source.isGzip)
        #expect(report.counts.lines == 2000)
        #expect(report.counts.devices == devices)
        #expect(report.counts.reconciles)

        let apns = try readLines(scratch.file("out/requests-apns.ndjson"))
        let fcm = try readLines(scratch.file("out/requests-fcm.ndjson"))
        #expect(apns.count == report.counts.written[.apns])
        #expect(fcm.count == report.counts.written[.fcm])
        #expect(apns.count + fcm.count + report.counts.skippedTotal == devices)
        // Output follows input order (the sink reorders worker batches).
        let lines = apns.compactMap { $0["line"] as? Int }
        #expect(lines == lines.sorted())

        let summary = try readSummary(scratch.file("out"))
        #expect(summary["status"] as? String == "completed")
        #expect(summary["reconciled"] as? Bool == true)
        #expect((summary["devices"] as? [String: Any])?["read"] as? Int == devices)
    }

    @Test func truncatedGzipFailsWithTheOffsetAndKeepsWhatCameBefore() async throws {
        let scratch = try Scratch()
        let full = scratch.file("full.ndjson.gz")
        _ = try AudienceGenerator(seed: 5).write(count: 20_000, to: full)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let cut = scratch.file("cut.ndjson.gz")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))

        let report = try await runDry(try writePipeline(demoStylePipeline, in: scratch), audience: cut, output: scratch.file("out"))
        #expect(report.status == .inputError)
        #expect(report.exit == .inputError && report.exit.rawValue == 4)
        let error = try #require(report.source.error)
        #expect(error.description.contains("cut.ndjson.gz"))
        let offset = try #require(error.compressedOffset)
        #expect(offset > 0 && offset <= bytes.count / 2)
        // Everything read before the cut was encoded and written, and still reconciles.
        #expect(report.counts.lines > 1000 && report.counts.lines < 20_000)
        #expect(report.counts.reconciles)
        let written = try readLines(scratch.file("out/requests-apns.ndjson")).count + (try readLines(scratch.file("out/requests-fcm.ndjson")).count)
        #expect(written == report.counts.writtenTotal && written > 0)
        let summary = try readSummary(scratch.file("out"))
        #expect(summary["status"] as? String == "input_error")
        #expect((summary["input_error"] as? [String: Any])?["compressed_offset"] as? Int == offset)
    }

    @Test func badLinesBecomeRejectsWithLineNumbersAndTheRestIsSent() async throws {
        let scratch = try Scratch()
        let token = String(repeating: "ab", count: 32)
        let lines = [
            #"{"id":"a","platform":"ios","token":"\#(token)"}"#,
            "",
            #"{"id":"b","platform":"ios","token":"\#(token)""#,                       // invalid JSON
            #"{"platform":"ios","token":"\#(token)"}"#,                              // no id
            #"{"id":"c","devices":[{"platform":"ios","token":"zz"},{"platform":"ios","token":"\#(token)"}]}"#,
            #"{"id":"d","devices":[{"platform":"pager","token":"x"}]}"#,
            String(repeating: "[", count: 500) + String(repeating: "]", count: 500),  // too deep
        ]
        let audience = scratch.file("a.ndjson")
        try (lines.joined(separator: "\r\n") + "\r\n").write(toFile: audience, atomically: true, encoding: .utf8)
        let report = try await runDry(try writePipeline(sinkTestPipeline, in: scratch), audience: audience, output: scratch.file("out"))
        #expect(report.status == .completedWithRejects)
        #expect(report.exit == .completedWithRejects && report.exit.rawValue == 3)
        #expect(report.counts.lines == 6 && report.counts.blankLines == 1)
        #expect(report.counts.linesRejected == 3)
        #expect(report.counts.writtenTotal == 2)
        #expect(report.counts.rejected == ["invalid_token": 1, "unknown_platform": 1])
        let rejects = try readLines(scratch.file("out/rejects.ndjson"))
        let byLine = Dictionary(grouping: rejects, by: { $0["line"] as? Int ?? 0 })
        #expect(byLine[3]?.first?["code"] as? String == "invalid_json")
        #expect(byLine[4]?.first?["code"] as? String == "missing_id")
        #expect(byLine[5]?.first?["device"] as? Int == 0)
        #expect(byLine[5]?.first?["recipient"] as? String == "c")
        #expect(byLine[6]?.first?["code"] as? String == "unknown_platform")
        #expect((byLine[7]?.first?["reason"] as? String)?.contains("nest") == true, "\(byLine[7] ?? [])")
    }

    @Test func invalidPipelineReadsNothing() throws {
        let scratch = try Scratch()
        let path = try writePipeline("name: x\nnotification:\n  alert: hi\n  android: { icon_color: red }\n", in: scratch)
        do {
            _ = try PipelineLoader.load(path: path, now: 0)
            Issue.record("invalid pipeline accepted")
        } catch {
            #expect(error.description.contains("pipeline.yaml:4:"))
            #expect(error.description.contains("notification.android.icon_color: expected #rrggbb"))
        }
    }
}

@Suite("The demo campaign")
struct DemoCampaignTests {
    /// Workers after the first encode with their own compile of the campaign's routes (no
    /// reference-counted object shared on the hot path): every file of the demo's dry run is
    /// byte for byte the same with one worker and with three, and the copy's routes are fresh
    /// objects with the same table.
    @Test func otherWorkersEncodeWithTheirOwnCopyAndWriteTheSameBytes() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = try Scratch()
        let audience = scratch.file("audience.ndjson.gz")
        _ = try AudienceGenerator(seed: 8).write(count: 3000, to: audience)
        let loaded = try PipelineLoader.load(path: root.appendingPathComponent("pipelines/demo.yaml").path, now: 1_800_000_000)
        let encoder = CampaignEncoder(campaign: loaded.campaign)
        let copy = encoder.forAnotherWorker()
        #expect(copy.campaign.routes.table.hasSameRoutes(as: encoder.campaign.routes.table))
        #expect(copy.campaign.routes.table.routes.count == encoder.campaign.routes.table.routes.count)
        #expect(copy.campaign.templateSlots == encoder.campaign.templateSlots)

        var logger = Logger(label: "test")
        logger.logLevel = .error
        var outputs: [[String: Data]] = []
        for workers in [1, 3] {
            let folder = scratch.file("out-\(workers)")
            let report = await CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: folder, workers: workers, logger: logger).run()
            #expect(report.status == .completed && report.counts.reconciles)
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasPrefix("requests-") || name == "rejects.ndjson" {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            }
            #expect(files.count >= 2)
            outputs.append(files)
        }
        #expect(outputs[0] == outputs[1])
    }

    /// The README's main job: the committed demo pipeline and audience dry-run clean.
    @Test func demoWritesOnlyValidRequestsAndReconciles() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = try Scratch()
        let pipeline = root.appendingPathComponent("pipelines/demo.yaml").path
        let loaded = try PipelineLoader.load(path: pipeline, now: 1_800_000_000)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let report = await CampaignRun(pipeline: loaded, audiencePath: try #require(loaded.audiencePath), outputFolder: scratch.path, logger: logger).run()
        #expect(report.status == .completed)
        #expect(report.counts.lines == 300 && report.counts.reconciles)
        let apns = try readLines(scratch.file("requests-apns.ndjson"))
        let fcm = try readLines(scratch.file("requests-fcm.ndjson"))
        #expect(apns.count + fcm.count == report.counts.writtenTotal && apns.count > 100 && fcm.count > 100)
        // Liquid really ran: no template syntax left in any body.
        let bodies = try (apns + fcm).map { String(decoding: try JSONSerialization.data(withJSONObject: $0["body"] as Any), as: UTF8.self) }
        #expect(bodies.allSatisfy { !$0.contains("{{") && !$0.contains("{%") })
    }
}

@Suite("Every push provider end to end")
struct AllProvidersDryRunTests {
    @Test func iosAndroidWebAndFireOSAllWrittenAndValid() async throws {
        let scratch = try Scratch()
        let audience = scratch.file("audience.ndjson.gz")
        let devices = try AudienceGenerator(seed: 9).write(count: 3000, to: audience)
        let pipeline = """
        name: everywhere
        device_types: [ios, android, web, amazon]
        notification:
          title: "Hi {{ customer.first_name }}"
          alert: "Your {{ event.event_title }} is waiting"
          web: { require_interaction: true }
          amazon: { consolidation_key: trips }
        providers:
          apns: { topic: com.example.app }
          fcm: { project_id: demo }
        """
        let report = try await runDry(try writePipeline(pipeline, in: scratch), audience: audience, output: scratch.file("out"))
        #expect(report.status == .completed)
        #expect(report.counts.devices == devices && report.counts.writtenTotal == devices, "every generated device is addressable")
        for provider in [Provider.apns, .fcm, .webpush, .adm] {
            let lines = try readLines(scratch.file("out/requests-\(provider.rawValue).ndjson"))
            #expect(lines.count == report.counts.written[provider], "\(provider)")
            #expect(lines.count > 0, "\(provider) got requests")
            #expect(lines.allSatisfy { $0["provider"] as? String == provider.rawValue && $0["body"] != nil })
        }
    }
}
