import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Class 6 of issue 7: a lone surrogate escape in the audience reaches no output line as it
/// stands, whichever way the value is copied: it becomes U+FFFD.
@Suite("Lone surrogates never reach the output")
struct LoneSurrogateOutputTests {
    static let ids = [#"\ud800"#, #"c-\udc00"#, #"\udbff\u0041"#, #"\ud800\ud800x"#]

    /// The output bytes hold no surrogate escape (`encode` then parses them with Foundation).
    static func assertClean(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        for prefix in [#"\ud8"#, #"\ud9"#, #"\uda"#, #"\udb"#, #"\udc"#, #"\udd"#, #"\ude"#, #"\udf"#] {
            #expect(!text.contains(prefix), "\(text)")
        }
    }

    static func encodeRaw(_ campaign: Campaign, _ line: String) -> EncodedBatch {
        let buffer = Array(line.utf8)
        var batch = EncodedBatch(sequence: 0)
        CampaignEncoder(campaign: campaign).encodeLine(buffer: buffer, line: AudienceLine(number: 1, range: 0..<buffer.count), into: &batch)
        batch.renderDryRunLines(routes: campaign.routeTable)
        return batch
    }

    static func expected(_ escapedID: String) throws -> String {
        try #require(try JSONDocument(parsing: "\"\(escapedID)\"").root.stringValue)
    }

    @Test(arguments: ids)
    func recipientIDOnRequestsAndRejects(_ id: String) throws {
        let campaign = try compileCampaign("""
        name: t
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification: { alert: Hello }
        """)
        let line = #"{"id":"\#(id)","devices":[{"platform":"ios","token":"\#(apnsToken)"},{"platform":"ios","token":"zz"}]}"#
        let batch = Self.encodeRaw(campaign, line)
        for writer in batch.dryRunLines { Self.assertClean(writer.bytes) }
        Self.assertClean(batch.rejects.bytes)
        let out = try encode(campaign, line)
        let want = try Self.expected(id)
        #expect(want.contains("\u{FFFD}"))
        #expect(out.requests.count == 1 && out.rejects.count == 1)
        #expect(out.requests.first?["recipient"] as? String == want)
        #expect(out.rejects.first?["recipient"] as? String == want)
    }

    @Test(arguments: ["liquid", "handlebars"])
    func personalizedTitleAndBody(_ dialect: String) throws {
        let campaign = try compileCampaign("""
        name: t
        personalization: \(dialect)
        device_types: [ios, android]
        providers: { apns: { topic: com.example.app }, fcm: { project_id: p } }
        notification: { title: "Hi {{ customer.name }}", alert: "{{ customer.name }}!" }
        """)
        let line = #"{"id":"c","customer":{"name":"A\ud800B\udc00"},"devices":[{"platform":"ios","token":"\#(apnsToken)"},{"platform":"android","token":"\#(fcmToken)"}]}"#
        let batch = Self.encodeRaw(campaign, line)
        for writer in batch.dryRunLines { Self.assertClean(writer.bytes) }
        let out = try encode(campaign, line)
        #expect(out.requests.count == 2)
        let apns = try #require(out.requests.first { $0["provider"] as? String == "apns" })
        let alert = try #require(((apns["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Hi A\u{FFFD}B\u{FFFD}")
        #expect(alert["body"] as? String == "A\u{FFFD}B\u{FFFD}!")
    }

    @Test func customPayloadValuesAndRecordValues() throws {
        let campaign = try compileCampaign("""
        name: t
        style: custom
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification:
          custom:
            ios: { aps: { alert: "{{ customer.name }}" }, ref: { v: "{{ customer.ref }}" } }
        """)
        let line = #"{"id":"c","customer":{"name":"\udc00x","ref":"\ud800"},"platform":"ios","token":"\#(apnsToken)"}"#
        let batch = Self.encodeRaw(campaign, line)
        for writer in batch.dryRunLines { Self.assertClean(writer.bytes) }
        let out = try encode(campaign, line)
        let body = try #require(out.requests.first?["body"] as? [String: Any])
        #expect((body["aps"] as? [String: Any])?["alert"] as? String == "\u{FFFD}x")
        #expect((body["ref"] as? [String: Any])?["v"] as? String == "\u{FFFD}")
    }

    @Test func webhookAddressAndBody() throws {
        let campaign = try compileCampaign("""
        name: t
        device_types: ["open::chat"]
        providers: { "open::chat": { url: "https://hooks.example.com/chat" } }
        notification: { alert: "Hi {{ customer.name }}" }
        """)
        let line = #"{"id":"\ud800","customer":{"name":"\udbff"},"platform":"open::chat","address":"user-\udc00"}"#
        let batch = Self.encodeRaw(campaign, line)
        for writer in batch.dryRunLines { Self.assertClean(writer.bytes) }
        let out = try encode(campaign, line)
        let request = try #require(out.requests.first)
        #expect(request["recipient"] as? String == "\u{FFFD}")
        let body = try #require(request["body"] as? [String: Any])
        #expect(body["to"] as? String == "user-\u{FFFD}")
        #expect(body["alert"] as? String == "Hi \u{FFFD}")
    }
}

extension LoneSurrogateOutputTests {
    /// Liquid prints a whole record object as its JSON text; that text must carry U+FFFD too,
    /// so whoever parses the printed JSON never meets a lone surrogate.
    @Test func liquidPrintsAWholeObjectWithoutSurrogates() throws {
        let campaign = try compileCampaign("""
        name: t
        device_types: [android]
        providers: { fcm: { project_id: p } }
        notification: { alert: "{{ customer.meta }}" }
        """)
        let line = #"{"id":"c","customer":{"meta":{"k\udc00":"v\ud800"}},"devices":[{"platform":"android","token":"\#(fcmToken)"}]}"#
        let batch = Self.encodeRaw(campaign, line)
        for writer in batch.dryRunLines { Self.assertClean(writer.bytes) }
        let out = try encode(campaign, line)
        let message = try #require((out.requests.first?["body"] as? [String: Any])?["message"] as? [String: Any])
        let notification = (message["android"] as? [String: Any])?["notification"] as? [String: Any]
        let body = try #require(notification?["body"] as? String)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String])
        #expect(printed == ["k\u{FFFD}": "v\u{FFFD}"])
    }
}
