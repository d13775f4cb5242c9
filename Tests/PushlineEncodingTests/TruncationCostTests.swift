import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Class 8 of issue 7: under `on_oversize: truncate` the cut is chosen from the texts' grapheme
/// tables, so a device costs a few payload encodes whatever its text holds, and the result still
/// fits, is marked truncated and keeps whole graphemes.
@Suite("Truncation cost")
struct TruncationCostTests {
    /// Hostile units: multi-byte letters, characters that grow when escaped, U+2028, controls,
    /// combining sequences and emoji clusters, alone and mixed.
    static let units = [
        "é", "\"", "\\", "\u{2028}", "\u{01}", "a\u{0301}", "👩‍👩‍👧‍👦", "\"\\\n\u{2029}é😀\u{7F}", "\u{1F}x\u{2028} ",
    ]

    static let routes = """
    name: t
    device_types: [ios, android, amazon, web]
    limits: { on_oversize: truncate }
    providers: { apns: { topic: com.example.app }, fcm: { project_id: p } }
    notification:
      title: "{{ t }}"
      alert: "{{ b }} / {{ b }}"
    """

    static func line(title: String, body: String) throws -> String {
        let devices: [[String: Any]] = [
            ["platform": "ios", "token": apnsToken],
            ["platform": "ios", "provider": "fcm", "token": fcmToken],
            ["platform": "android", "token": fcmToken],
            ["platform": "amazon", "token": Reference.admToken],
            ["platform": "web", "subscription": ["endpoint": "https://push.example.net/1", "keys": ["p256dh": Reference.p256dh, "auth": Reference.auth]]],
        ]
        let record: [String: Any] = ["id": "c", "t": title, "b": body, "devices": devices]
        return String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
    }

    @Test(arguments: units.indices)
    func aFewEncodesPerDevice(_ i: Int) throws {
        let unit = Self.units[i]
        let campaign = try compileCampaign(Self.routes)
        let encoder = CampaignEncoder(campaign: campaign)
        var context = encoder.makeContext()
        var batch = EncodedBatch(sequence: 0)
        // Bodies long enough to be cut on every route (8 KB limit per field, rendered twice in alert).
        let body = String(repeating: unit, count: 3500 / unit.utf8.count)
        let title = String(repeating: unit, count: 1500 / unit.utf8.count)
        let buffer = Array(try Self.line(title: title, body: body).utf8)
        encoder.encodeLine(buffer: buffer, line: AudienceLine(number: 1, range: 0..<buffer.count), into: &batch, context: &context)
        #expect(batch.counts.devices == 5)
        #expect(batch.counts.truncated == 5, "unit \(i): \(String(decoding: batch.rejects.bytes, as: UTF8.self))")
        // First write, probe, one checked cut; a bounded number of corrections at worst.
        #expect(context.payloadEncodes <= 5 * PayloadFittingBound.maxEncodes, "unit \(i): \(context.payloadEncodes) encodes for 5 devices")
        #expect(context.payloadEncodes <= 5 * 4, "unit \(i): the model should rarely need a second try: \(context.payloadEncodes)")
    }

    @Test(arguments: units.indices)
    func resultsStillFitAndKeepWholeGraphemes(_ i: Int) throws {
        let unit = Self.units[i]
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"{"title": "{{ t }}", "alert": "{{ b }}"}"#, extra: "limits: { on_oversize: truncate }\n"))
        let body = String(repeating: unit, count: 6000 / unit.utf8.count)
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "ios", "token": apnsToken, "t": "T", "b": body])
        let buffer = Array(record)
        var batch = EncodedBatch(sequence: 0)
        let encoder = CampaignEncoder(campaign: campaign)
        var context = encoder.makeContext()
        encoder.encodeLine(buffer: buffer, line: AudienceLine(number: 1, range: 0..<buffer.count), into: &batch, context: &context)
        #expect(context.payloadEncodes <= 4)
        // The request line as written: the body object's bytes are what APNs counts.
        batch.renderDryRunLines(routes: campaign.routeTable)
        let line = try #require(batch.dryRunLines.first { !$0.bytes.isEmpty })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.bytes.split(separator: 0x0A)[0])) as? [String: Any])
        #expect(object["truncated"] as? Bool == true)
        let text = try #require((((object["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String)
        #expect(text.hasSuffix("…"))
        var kept = String(text.dropLast())
        #expect(body.hasPrefix(kept), "unit \(i)")
        // Whole graphemes: the kept text is a prefix of the body in Characters too (trailing
        // spaces may have been dropped before the ellipsis).
        while kept.last == " " { kept.removeLast() }
        #expect(Array(body.prefix(kept.count)) == Array(kept))
        let written = String(decoding: line.bytes, as: UTF8.self)
        let bodyStart = try #require(written.range(of: #""body":"#))
        let bodyBytes = written[bodyStart.upperBound...].utf8.count - #","truncated":true}"#.utf8.count - 1
        #expect(bodyBytes <= 4096, "unit \(i): \(bodyBytes)")
        // And it keeps what it can: one more grapheme (at most 25 escaped bytes here) would not fit.
        #expect(bodyBytes > 4096 - 6 * 25, "unit \(i): \(bodyBytes)")
    }

    static func encodeCounting(_ campaign: Campaign, _ record: [String: Any]) throws -> (EncodedBatch, Int) {
        let buffer = Array(try JSONSerialization.data(withJSONObject: record))
        let encoder = CampaignEncoder(campaign: campaign)
        var context = encoder.makeContext()
        var batch = EncodedBatch(sequence: 0)
        encoder.encodeLine(buffer: buffer, line: AudienceLine(number: 1, range: 0..<buffer.count), into: &batch, context: &context)
        return (batch, context.payloadEncodes)
    }

    @Test(arguments: ["T", "\"", "\u{2028}", "👩‍👩‍👧‍👦"])
    func titleAfterAnEmptiedBodyAlsoCostsAFewEncodes(_ unit: String) throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"{"title": "{{ t }}", "alert": "{{ b }}"}"#, extra: "limits: { on_oversize: truncate }\n"))
        let (batch, encodes) = try Self.encodeCounting(campaign, ["id": "c", "platform": "ios", "token": apnsToken, "t": String(repeating: unit, count: 6000 / unit.utf8.count), "b": "short body"])
        #expect(batch.counts.truncated == 1 && batch.counts.writtenTotal == 1)
        #expect(encodes <= 4, "\(encodes)")
    }

    @Test func aPayloadThatCannotFitIsARejectAfterBoundedEncodes() throws {
        // The oversize part is not personalized text that may be cut (an `other` field).
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"{"alert": "{{ b }}", "ios": {"thread_id": "{{ t }}"}}"#, extra: "limits: { on_oversize: truncate }\n"))
        let (batch, encodes) = try Self.encodeCounting(campaign, ["id": "c", "platform": "ios", "token": apnsToken, "t": String(repeating: "x", count: 5000), "b": "body"])
        #expect(batch.counts.writtenTotal == 0)
        let reject = String(decoding: batch.rejects.bytes, as: UTF8.self)
        #expect(reject.contains(#""code":"payload_too_large""#) && reject.contains("even with its text truncated"), "\(reject)")
        #expect(encodes <= 2 + PayloadFittingBound.maxEncodes, "\(encodes)")
    }
}

/// The bound the truncate policy promises: the first write, the probe, three model-guided tries
/// and the last resort.
enum PayloadFittingBound {
    static let maxEncodes = 6
}
