import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Every `sms` webhook body says how the gateway will send its text: `"encoding"` (GSM-7 or
/// UCS-2) and `"segments"` (parts), right after `"text"`, counted on the text actually sent.
/// MMS, email and open-channel bodies carry neither.
@Suite("SMS bodies: encoding and segments")
struct SMSSegmentsEncodingTests {
    private static func campaign(_ extra: String = "") throws -> Campaign {
        try compileCampaign(Reference.pipeline("[sms]", #"{"alert": "{{ b }}"}"#, extra: extra))
    }

    private static func line(_ text: String) throws -> String {
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "sms", "address": "+15551234567", "b": text])
        return String(decoding: record, as: UTF8.self)
    }

    /// The body exactly as written (the dry-run line embeds it as is), to check member order.
    private static func rawLine(_ campaign: Campaign, _ line: String) -> String {
        let buffer = Array(line.utf8)
        var batch = EncodedBatch(sequence: 0)
        CampaignEncoder(campaign: campaign).encodeLine(buffer: buffer, line: AudienceLine(number: 1, range: 0..<buffer.count), into: &batch)
        batch.renderDryRunLines(routes: campaign.routeTable)
        return batch.dryRunLines.map { String(decoding: $0.bytes, as: UTF8.self) }.joined()
    }

    @Test(arguments: [
        ("Hi Ana", "GSM-7", 1),
        (String(repeating: "a", count: 160), "GSM-7", 1),
        (String(repeating: "a", count: 161), "GSM-7", 2),                        // 153 + 8
        (String(repeating: "a", count: 152) + "€" + String(repeating: "a", count: 152), "GSM-7", 3),  // the pair starts part 2
        ("Olá", "UCS-2", 1),                                                     // á is not GSM-7
        ("ú" + String(repeating: "a", count: 70), "UCS-2", 2),                   // 71 units: 67 + 4
        ("Lisbon trip 😀", "UCS-2", 1),                                          // 12 + 2 units
        ("`", "UCS-2", 1),
        ("", "GSM-7", 1),
    ])
    func bodyCarriesEncodingAndSegments(_ text: String, _ encoding: String, _ segments: Int) throws {
        let out = try encode(try Self.campaign(), try Self.line(text))
        let body = try #require(out.requests.first?["body"] as? [String: Any])
        #expect(body["text"] as? String == text)
        #expect(body["encoding"] as? String == encoding)
        #expect(body["segments"] as? Int == segments)
    }

    @Test func theMembersFollowTheText() throws {
        let raw = Self.rawLine(try Self.campaign(), try Self.line("Hi {Ana}"))
        // { and } are in the extension table: 6 + 2 × 2 = 8 septets, one part.
        #expect(raw.contains(#"{"channel":"sms","to":"+15551234567","text":"Hi {Ana}","encoding":"GSM-7","segments":1,"expiry":"#), "\(raw)")
    }

    /// Counted after truncation: 2000 ü (GSM-7, 14 parts) are cut to 1599 ü and "…", which is not
    /// GSM-7: 1600 UCS-2 units, 24 parts (23 × 67 = 1541 < 1600 ≤ 1608).
    @Test func countedOnTheTruncatedText() throws {
        let out = try encode(try Self.campaign("limits: { on_oversize: truncate }\n"), try Self.line(String(repeating: "ü", count: 2000)))
        let request = try #require(out.requests.first)
        let body = try #require(request["body"] as? [String: Any])
        #expect(request["truncated"] as? Bool == true)
        #expect((body["text"] as? String)?.hasSuffix("…") == true)
        #expect(body["encoding"] as? String == "UCS-2")
        #expect(body["segments"] as? Int == 24)
    }

    /// The MMS fallback text is also an SMS-sized text, but the mms body stays as documented.
    @Test func notInMMSEmailOrOpenBodies() throws {
        let mms = try compileCampaign(Reference.pipeline("[sms]", #"""
        {"mms": {"fallback_text": "See the rainbow", "slides": [{"media": {"url": "https://e.com/a.jpg", "content_type": "image/jpeg", "content_length": 10}}]}}
        """#))
        let open = try compileCampaign(Reference.pipeline(#"["open::sms", "email"]"#, #"""
        {"alert": "Hello", "email": {"subject": "s", "plaintext_body": "p", "message_type": "transactional",
          "sender_name": "n", "sender_address": "a@example.com", "reply_to": "r@example.com"}}
        """#))
        let mmsOut = try encode(mms, Reference.line(Reference.sms))
        let openOut = try encode(open, Reference.line(#"{"platform":"open::sms","address":"U-1"},\#(Reference.email)"#))
        for body in [mmsOut.body("sms"), openOut.body("open::sms"), openOut.body("email")] {
            let object = try #require(body as? [String: Any])
            #expect(object["encoding"] == nil && object["segments"] == nil, "\(object)")
        }
        #expect((mmsOut.body("sms") as? [String: Any])?["channel"] as? String == "mms")
    }
}
