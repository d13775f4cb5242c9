import Foundation
import Logging
import PushlineCore
import PushlineEncoding
import PushlineRuntime
import Testing

/// `demoStylePipeline` with quiet hours 21:00–08:00 (wrapping midnight) in `customer.time_zone`.
private func quietPipeline(start: String = "21:00", end: String = "08:00", defaultZone: String = "America/New_York", field: String = "customer.time_zone") -> String {
    demoStylePipeline + """

    quiet_hours:
      start: "\(start)"
      end: "\(end)"
      time_zone_field: \(field)
      default_time_zone: \(defaultZone)

    """
}

/// A record in `zone` (nil: no time zone field) with one iOS device.
private func zoneLine(_ id: String, zone: String?, token: String) -> String {
    let zoneMember = zone.map { #","time_zone":"\#($0)""# } ?? ""
    return #"{"id":"\#(id)","customer":{"first_name":"Ana"\#(zoneMember)},"event":{"event_title":"Trip"},"devices":[{"platform":"ios","token":"\#(token)"},{"platform":"android","token":"fcm-token-\#(id):\#(String(repeating: "A", count: 40))"}]}"#
}

@Suite("Quiet hours")
struct QuietHoursTests {
    /// The verdict for a record in `zone` at UNIX time `now`.
    func verdict(_ zone: String?, now: Int, pipeline: String = quietPipeline()) throws -> QuietHours.Verdict {
        let scratch = try Scratch()
        let loaded = try PipelineLoader.load(path: try writePipeline(pipeline, in: scratch), now: now)
        let quietHours = try #require(loaded.campaign.quietHours)
        let record = try JSONDocument(bytes: Array(zoneLine("r", zone: zone, token: "t").utf8))
        return quietHours.verdict(for: record.root)
    }

    // Expected local times worked out by hand from each zone's UTC offset on that date.
    @Test(arguments: [
        // 2026-01-15T03:00Z: New York (UTC−5) 22:00, Paris (UTC+1) 04:00, Tokyo (UTC+9) 12:00, Los Angeles (UTC−8) 19:00.
        ("America/New_York", 1_768_446_000, true),
        ("Europe/Paris", 1_768_446_000, true),
        ("Asia/Tokyo", 1_768_446_000, false),
        ("America/Los_Angeles", 1_768_446_000, false),
        // US spring forward, 2026-03-08 07:00Z: 12:30Z is 08:30 EDT (outside; it would be 07:30 EST, inside).
        ("America/New_York", 1_772_973_000, false),
        // 11:59Z is 07:59 EDT: inside; 12:00Z is 08:00 EDT: the end is excluded.
        ("America/New_York", 1_772_971_140, true),
        ("America/New_York", 1_772_971_200, false),
        // US fall back, 2026-11-01 06:00Z: 01:00Z is 21:00 EDT (the start is included), 00:59Z 20:59 EDT.
        ("America/New_York", 1_793_494_800, true),
        ("America/New_York", 1_793_494_740, false),
        // 06:30Z that day is 01:30 EST, after the change: inside.
        ("America/New_York", 1_793_514_600, true),
    ])
    func localTimeAcrossZonesAndDaylightSaving(zone: String, now: Int, inside: Bool) throws {
        let result = try verdict(zone, now: now)
        #expect(result == QuietHours.Verdict(inside: inside, usedDefaultZone: false))
    }

    @Test func aWindowThatDoesNotWrapMidnight() throws {
        let pipeline = quietPipeline(start: "13:00", end: "14:00", defaultZone: "UTC")
        #expect(try verdict("UTC", now: 1_768_483_800, pipeline: pipeline).inside)   // 13:30Z
        #expect(try !verdict("UTC", now: 1_768_485_600, pipeline: pipeline).inside)  // 14:00Z
        #expect(try !verdict("UTC", now: 1_768_446_000, pipeline: pipeline).inside)  // 03:00Z
    }

    @Test func anAbsentOrUnknownZoneUsesTheDefault() throws {
        // 2026-01-15T17:00Z: New York 12:00 (outside), Tokyo 02:00 (inside).
        let now = 1_768_496_400
        let tokyoDefault = quietPipeline(defaultZone: "Asia/Tokyo")
        #expect(try verdict(nil, now: now, pipeline: tokyoDefault) == .init(inside: true, usedDefaultZone: true))
        #expect(try verdict("Mars/Olympus_Mons", now: now, pipeline: tokyoDefault) == .init(inside: true, usedDefaultZone: true))
        #expect(try verdict(String(repeating: "x", count: 10_000), now: now, pipeline: tokyoDefault) == .init(inside: true, usedDefaultZone: true))
        #expect(try verdict("America/New_York", now: now, pipeline: tokyoDefault) == .init(inside: false, usedDefaultZone: false))
    }

    @Test(arguments: [
        (quietPipeline(start: "25:00"), "quiet_hours.start", "expected a time of day as HH:MM"),
        (quietPipeline(end: "8:00"), "quiet_hours.end", "expected a time of day as HH:MM"),
        (quietPipeline(start: "08:00"), "quiet_hours.end", "is the same time as start"),
        (quietPipeline(defaultZone: "America/Gotham"), "quiet_hours.default_time_zone", "'America/Gotham' is not a time zone name"),
        (quietPipeline(field: "\"customer..zone\""), "quiet_hours.time_zone_field", "not a field path"),
    ])
    func badSettingsFailValidationWithTheirPath(pipeline: String, path: String, message: String) throws {
        let scratch = try Scratch()
        let file = try writePipeline(pipeline, in: scratch)
        do {
            _ = try PipelineLoader.load(path: file, now: 0)
            Issue.record("accepted")
        } catch {
            let diagnostic = try #require(error.diagnostics.first { $0.path == path }, "\(error.description)")
            #expect(diagnostic.message.contains(message), "\(diagnostic.message)")
        }
    }

    /// Deferred lines are written as read; run again with a clock outside the window, that file
    /// as the audience writes exactly the devices deferred the first time.
    @Test func deferredLinesRunAgainLaterSendExactlyTheDeferredDevices() async throws {
        let scratch = try Scratch()
        let zones = ["America/New_York", "Asia/Tokyo", "Europe/Paris", "America/Los_Angeles", "Not/AZone"]
        var lines: [String] = []
        for i in 0..<60 {
            lines.append(zoneLine("r\(i)", zone: i % 6 == 5 ? nil : zones[i % 6 == 5 ? 0 : i % 5], token: String(format: "%064x", i)))
        }
        let audience = scratch.file("audience.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(toFile: audience, atomically: true, encoding: .utf8)
        let pipeline = try writePipeline(quietPipeline(), in: scratch)
        var logger = Logger(label: "test")
        logger.logLevel = .error

        // 2026-01-15T03:00Z: inside for New York, Paris, and the default (New York) for no or an
        // unknown zone; outside for Tokyo and Los Angeles.
        let first = try PipelineLoader.load(path: pipeline, now: 1_768_446_000)
        var run = CampaignRun(pipeline: first, audiencePath: audience, outputFolder: scratch.file("first"), workers: 3, logger: logger)
        run.readerOptions.maxBatchLines = 7
        let report = await run.run()
        #expect(report.status == .completed && report.reconciled, "\(report.failure ?? "")")
        let deferredIDs = lines.indices.filter { i in
            let zone = i % 6 == 5 ? nil : zones[i % 5]
            return zone != "Asia/Tokyo" && zone != "America/Los_Angeles"
        }.map { "r\($0)" }
        let deferredText = try String(contentsOfFile: scratch.file("first/deferred.ndjson"), encoding: .utf8)
        let expectedText = lines.enumerated().filter { deferredIDs.contains("r\($0.offset)") }.map { $0.element + "\n" }.joined()
        #expect(deferredText == expectedText, "the deferred lines, as read, in input order")
        #expect(report.counts.skipped == ["quiet_hours": 2 * deferredIDs.count])
        #expect(report.counts.writtenTotal == 2 * (60 - deferredIDs.count))
        #expect(report.counts.deferredLines == deferredIDs.count)
        let unknownOrAbsent = lines.indices.filter { $0 % 6 == 5 || ($0 % 5 == 4) }.count
        #expect(report.counts.defaultTimeZoneLines == unknownOrAbsent)
        let summary = try readSummary(scratch.file("first"))
        let quiet = try #require(summary["quiet_hours"] as? [String: Any])
        #expect(quiet["deferred_lines"] as? Int == deferredIDs.count && quiet["deferred_devices"] as? Int == 2 * deferredIDs.count)
        let writtenFirst = try readLines(scratch.file("first/requests-apns.ndjson")).compactMap { $0["recipient"] as? String }
        #expect(Set(writtenFirst).isDisjoint(with: deferredIDs))

        // 2026-01-15T17:00Z: 12:00 in New York, 18:00 in Paris: outside for every deferred line.
        let later = try PipelineLoader.load(path: pipeline, now: 1_768_496_400)
        let again = await CampaignRun(pipeline: later, audiencePath: scratch.file("first/deferred.ndjson"), outputFolder: scratch.file("later"), workers: 2, logger: logger).run()
        #expect(again.status == .completed && again.reconciled)
        #expect(again.counts.skippedTotal == 0 && again.counts.deferredLines == 0)
        let writtenLater = try readLines(scratch.file("later/requests-apns.ndjson")).compactMap { $0["recipient"] as? String }
        #expect(writtenLater == deferredIDs, "exactly the deferred devices, in order")
        #expect(again.counts.writtenTotal == 2 * deferredIDs.count)
        #expect(try String(contentsOfFile: scratch.file("later/deferred.ndjson"), encoding: .utf8).isEmpty)
    }

    /// A sending run hands the lanes only the recipients outside the window.
    @Test func aSendingRunDefersTheSameWay() async throws {
        let scratch = try Scratch()
        let lines = [
            zoneLine("ny", zone: "America/New_York", token: String(repeating: "a1", count: 32)),
            zoneLine("tokyo", zone: "Asia/Tokyo", token: String(repeating: "b2", count: 32)),
        ]
        let apns = ScriptedLane(provider: .apns) { _ in .settle(.sent(providerID: "ok", attempts: 1)) }
        let fcm = ScriptedLane(provider: .fcm) { _ in .settle(.sent(providerID: "m", attempts: 1)) }
        let run = try sendRun(quietPipeline(), lines: lines, lanes: [apns, fcm], in: scratch)
        var atNight = run
        atNight.pipeline = try PipelineLoader.load(path: scratch.file("pipeline.yaml"), now: 1_768_446_000)
        let report = await atNight.run()
        #expect(report.status == .completed && report.reconciled, "\(report.failure ?? "")")
        let apnsReceived = await apns.received
        let fcmReceived = await fcm.received
        #expect(apnsReceived == 1 && fcmReceived == 1)
        #expect(report.counts.skipped == ["quiet_hours": 2] && report.counts.sentTotal == 2)
        #expect(try resultLines(scratch, "deferred.ndjson") == [lines[0]])
    }
}
