import Foundation
import PushlineTestSupport
import PushlineCore
import PushlineRuntime
import Testing

@Suite("Hostile personalized values")
struct HostileAudienceTests {
    /// Personalized strings full of quotes, backslashes, control characters, U+2028, emoji and
    /// template syntax must come out as valid JSON that decodes to exactly the input value.
    @Test func personalizedStringsDecodeBackExactly() async throws {
        let scratch = try Scratch()
        let audience = scratch.file("hostile.ndjson.gz")
        let customers = 20_000
        _ = try AudienceGenerator(seed: 11, hostileFraction: 0.2).write(count: customers, to: audience)
        let pipeline = """
        name: hostile
        personalization: liquid
        device_types: [ios, android]
        notification:
          title: "{{ customer.first_name }}"
          alert: "{{ event.event_title }}"
          ios: { collapse_id: "x" }
        limits: { on_oversize: reject }
        providers:
          apns: { topic: com.example.app }
          fcm: { project_id: demo }
        """
        let report = try await runDry(try writePipeline(pipeline, in: scratch), audience: audience, output: scratch.file("out"))
        #expect(report.status == .completed, "\(report.counts.rejected)")

        // The input, decompressed by the system gzip and parsed by Foundation: independent of our code.
        let gunzip = ChildProcess()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gunzip.arguments = ["-c", "gzip -dc '\(audience)'"]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let raw = pipe.fileHandleForReading.readDataToEndOfFile()
        try #require(gunzip.waitForExit().shellStatus == 0)
        var expected: [String: (title: String, body: String)] = [:]
        for line in raw.split(separator: 0x0A) {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let customer = try #require(record["customer"] as? [String: Any])
            let event = try #require(record["event"] as? [String: Any])
            expected[try #require(record["id"] as? String)] = (try #require(customer["first_name"] as? String), try #require(event["event_title"] as? String))
        }
        #expect(expected.count == customers)

        var checked = 0
        var hostileSeen = 0
        for request in try readLines(scratch.file("out/requests-apns.ndjson")) {
            let id = try #require(request["recipient"] as? String)
            let alert = try #require(((request["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any])
            let want = try #require(expected[id])
            // Empty renders are omitted, so compare only what is present.
            if let title = alert["title"] as? String { #expect(title == want.title, "\(id)") }
            if let body = alert["body"] as? String { #expect(body == want.body, "\(id)") }
            if want.title.contains("{{") || want.body.contains("\u{2028}") { hostileSeen += 1 }
            checked += 1
        }
        for request in try readLines(scratch.file("out/requests-fcm.ndjson")) {
            let id = try #require(request["recipient"] as? String)
            let message = try #require((request["body"] as? [String: Any])?["message"] as? [String: Any])
            let want = try #require(expected[id])
            if let notification = (message["android"] as? [String: Any])?["notification"] as? [String: Any] {
                if let title = notification["title"] as? String { #expect(title == want.title, "\(id)") }
                if let body = notification["body"] as? String { #expect(body == want.body, "\(id)") }
            } else if let aps = ((message["apns"] as? [String: Any])?["payload"] as? [String: Any])?["aps"] as? [String: Any],
                      let alert = aps["alert"] as? [String: Any] {
                if let title = alert["title"] as? String { #expect(title == want.title, "\(id)") }
                if let body = alert["body"] as? String { #expect(body == want.body, "\(id)") }
            } else {
                Issue.record("request without a notification: \(request)")
            }
            checked += 1
        }
        #expect(checked == report.counts.writtenTotal)
        #expect(hostileSeen > 100, "the audience really held hostile values (\(hostileSeen))")
    }
}
