import Foundation
import Logging
import PushlineCore
import PushlineRuntime
import Testing

/// The progress line's numbers (a pure function of counts, bytes read and elapsed time: no test
/// here waits for anything) and the end-of-run summary table.
@Suite("Progress line and summary table")
struct ProgressAndSummaryTests {
    static func written(apns: Int, fcm: Int, rejectedUnrouted: Int = 0) -> RunCounts {
        var counts = RunCounts()
        for (provider, n) in [(Provider.apns, apns), (.fcm, fcm)] {
            for _ in 0..<n { counts.countDevice(provider: provider) }
            counts.record(.written, reason: nil, provider: provider, count: n)
        }
        for _ in 0..<rejectedUnrouted { counts.countDevice(provider: nil) }
        counts.record(.rejected, reason: "unknown_platform", provider: nil, count: rejectedUnrouted)
        return counts
    }

    @Test func percentAndETAComeFromCompressedBytesRead() {
        // A quarter of the file in 10 s: 25 %, 30 s to go.
        let line = ProgressLine(counts: Self.written(apns: 300, fcm: 200), compressedBytesRead: 250, audienceBytes: 1000, seconds: 10, sending: false)
        #expect(line.percent == 25)
        #expect(line.etaSeconds == 30)
        #expect(line.text.hasPrefix("25.0% ETA 0:30 | 0:10 | 500 devices 50/s | "))
        #expect(line.text.contains("apns written 300 30/s"))
        #expect(line.text.contains("fcm written 200 20/s"))
        #expect(line.metadata["percent"] == "25.0" && line.metadata["eta_seconds"] == "30")
        #expect(line.metadata["apns_written_per_second"] == "30")
    }

    @Test func standardInputHasNoPercentAndSaysSo() {
        let line = ProgressLine(counts: Self.written(apns: 10, fcm: 0, rejectedUnrouted: 2), compressedBytesRead: 4096, audienceBytes: nil, seconds: 2, sending: false)
        #expect(line.percent == nil && line.etaSeconds == nil)
        #expect(line.text.hasPrefix("size unknown (not a regular file): no percent or ETA | "))
        #expect(line.text.contains("unrouted devices 2"))
        #expect(line.metadata["percent"] == "unknown" && line.metadata["eta_seconds"] == nil)
    }

    @Test func nothingReadYetHasNoETA() {
        let line = ProgressLine(counts: RunCounts(), compressedBytesRead: 0, audienceBytes: 1000, seconds: 0, sending: true)
        #expect(line.percent == 0 && line.etaSeconds == nil)
        #expect(line.text.hasPrefix("0.0% | 0:00 | 0 devices 0/s"))
    }

    @Test func topReasonsAreTheLargestFiveLargestFirst() {
        let tally = ["a": 5, "b": 9, "c": 1, "d": 9, "e": 3, "f": 2, "g": 7]
        let top = SummaryTable.topReasons(tally)
        // Ties in name order, so the table is the same every run.
        #expect(top.map(\.reason) == ["b", "d", "g", "a", "e"])
        #expect(top.map(\.count) == [9, 9, 7, 5, 3])
    }

    /// A real dry run whose audience holds three reject reasons in known numbers.
    @Test func theTableListsOutcomesAndTheTopRejects() async throws {
        let scratch = try Scratch()
        let pipeline = try writePipeline(demoStylePipeline, in: scratch)
        var text = ""
        for n in 0..<20 {
            text += #"{"id":"c\#(n)","customer":{"first_name":"A"},"event":{"event_title":"t"},"devices":[{"platform":"ios","token":"\#(TestTokens.apns(n))"},{"platform":"android","token":"\#(TestTokens.fcm(n))"}]}"# + "\n"
        }
        for n in 0..<5 { text += #"{"id":"u\#(n)","devices":[{"platform":"blackberry","token":"x"}]}"# + "\n" }
        for n in 0..<3 { text += #"{"id":"d\#(n)","devices":[42]}"# + "\n" }
        for n in 0..<2 { text += #"{"id":"t\#(n)","devices":[{"platform":"ios"}]}"# + "\n" }
        let audience = scratch.file("a.ndjson")
        try text.write(toFile: audience, atomically: true, encoding: .utf8)
        let report = try await runDry(pipeline, audience: audience, output: scratch.file("out"))
        let lines = SummaryTable.render(report)
        #expect(lines.first?.hasPrefix("pushline: run completed_with_rejects in ") == true, "\(lines)")
        #expect(lines.first?.hasSuffix("(dry run): 30 lines, 50 devices") == true, "\(lines)")
        #expect(lines.contains("top rejects: unknown_platform 5, invalid_device 3, invalid_token 2"), "\(lines)")
        // Header and one row per provider, unrouted and the total, aligned in columns.
        let header = try #require(lines.first { $0.hasPrefix("provider") })
        #expect(header.split(separator: " ") == ["provider", "devices", "written", "rejected", "devices/s"])
        let apns = try #require(lines.first { $0.hasPrefix("apns") })
        #expect(apns.split(separator: " ").prefix(4) == ["apns", "20", "20", "0"])
        let unrouted = try #require(lines.first { $0.hasPrefix("unrouted") })
        // A device without a token is rejected before it is routed, like the unknown platforms.
        #expect(unrouted.split(separator: " ").prefix(4) == ["unrouted", "10", "0", "10"])
        let total = try #require(lines.first { $0.hasPrefix("total") })
        #expect(total.split(separator: " ").prefix(4) == ["total", "50", "40", "10"])
        #expect(Set([header, apns, unrouted, total].map(\.count)).count == 1, "columns are aligned")
    }

    @Test func groupsDigits() {
        #expect(SummaryTable.group(0) == "0")
        #expect(SummaryTable.group(999) == "999")
        #expect(SummaryTable.group(1000) == "1,000")
        #expect(SummaryTable.group(-1234567) == "-1,234,567")
    }
}
