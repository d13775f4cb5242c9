import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// `limits.on_oversize: truncate`: the body (then the title) is shortened at a grapheme boundary
/// with "…" until the final bytes fit, and the request says so.
@Suite("Oversize policy")
struct TruncationTests {
    static func campaign(_ limits: String = "limits: { on_oversize: truncate }\n") throws -> Campaign {
        try compileCampaign(Reference.pipeline("[ios]", #"{"title": "{{ t }}", "alert": "{{ b }}"}"#, extra: limits))
    }

    func apnsBody(_ out: EncodedLine) throws -> (Data, [String: Any]) {
        let request = try #require(out.requests.first)
        let body = try #require(request["body"] as? [String: Any])
        return (try JSONSerialization.data(withJSONObject: body), body)
    }

    /// Counts bytes as APNs does: the compact body the encoder wrote.
    static func bodyBytes(_ line: [String: Any]) -> Int {
        (try? JSONSerialization.data(withJSONObject: line["body"]!).count) ?? 0
    }

    @Test(arguments: [
        ("é", "two-byte letters"),
        ("👩‍👩‍👧‍👦", "a 25-byte family emoji that must not be split"),
        ("\"\\\n", "characters JSON escapes (each grows when written)"),
        ("🇵🇹a", "flags beside ASCII"),
    ])
    func bodyIsCutAtAGraphemeBoundary(unit: String, _ what: String) throws {
        let body = String(repeating: unit, count: 4200 / unit.utf8.count + 1)
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "ios", "token": apnsToken, "t": "Title", "b": body])
        let out = try encode(try Self.campaign(), String(decoding: record, as: UTF8.self))
        #expect(out.rejects.isEmpty, "\(what): \(out.rejects)")
        let request = try #require(out.requests.first)
        #expect(request["truncated"] as? Bool == true)
        #expect(out.counts.truncated == 1)
        let alert = try #require(((request["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any])
        let text = try #require(alert["body"] as? String)
        #expect(alert["title"] as? String == "Title")
        #expect(text.hasSuffix("…"))
        // Whole graphemes of the original only: the kept text equals the body's first
        // kept.count characters (a split cluster would end in a different character).
        let kept = String(text.dropLast())
        #expect(String(body.prefix(kept.count)) == kept, "\(what)")
        // The body fits APNs' 4096 bytes as written (escaped) and keeps all it can: at most one
        // grapheme (25 bytes here) is left unused. (None of these texts holds '/', which
        // Foundation would escape differently.)
        let (bytes, _) = try apnsBody(out)
        #expect(bytes.count <= 4096 && bytes.count > 4096 - 32, "\(what): \(bytes.count) bytes")
    }

    @Test func titleIsShortenedWhenTheBodyIsGone() throws {
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "ios", "token": apnsToken, "t": String(repeating: "T", count: 5000), "b": "short"])
        let out = try encode(try Self.campaign(), String(decoding: record, as: UTF8.self))
        let request = try #require(out.requests.first)
        #expect(request["truncated"] as? Bool == true)
        let alert = ((request["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any]
        #expect((alert?["title"] as? String)?.hasSuffix("…") == true)
    }

    @Test func rejectIsTheDefault() throws {
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "ios", "token": apnsToken, "t": "x", "b": String(repeating: "é", count: 3000)])
        let out = try encode(try Self.campaign(""), String(decoding: record, as: UTF8.self))
        #expect(out.requests.isEmpty && out.rejects.first?["code"] as? String == "payload_too_large")
        #expect(out.counts.truncated == 0)
    }

    @Test func smsIsShortenedByCharactersUnderTruncate() throws {
        let campaign = try compileCampaign(Reference.pipeline("[sms]", #"{"alert": "{{ b }}"}"#, extra: "limits: { on_oversize: truncate }\n"))
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "sms", "address": "+15551234567", "b": String(repeating: "ü", count: 2000)])
        let out = try encode(campaign, String(decoding: record, as: UTF8.self))
        let text = try #require((out.requests.first?["body"] as? [String: Any])?["text"] as? String)
        #expect(text.unicodeScalars.count == 1600 && text.hasSuffix("…"))
        #expect(out.requests.first?["truncated"] as? Bool == true)
        let rejecting = try compileCampaign(Reference.pipeline("[sms]", #"{"alert": "{{ b }}"}"#))
        let rejected = try encode(rejecting, String(decoding: record, as: UTF8.self))
        #expect(rejected.rejects.first?["code"] as? String == "text_too_long")
        #expect((rejected.rejects.first?["reason"] as? String)?.contains("2000 characters, at most 1600") == true)
    }

    @Test func webPushPlaintextLimit() throws {
        let campaign = try compileCampaign(Reference.pipeline("[web]", #"{"alert": "{{ b }}"}"#))
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "platform": "web", "b": String(repeating: "w", count: 3993),
            "subscription": ["endpoint": "https://push.example.net/1", "keys": ["p256dh": Reference.p256dh, "auth": Reference.auth]]])
        let out = try encode(campaign, String(decoding: record, as: UTF8.self))
        // {"body":"…"} adds 11 bytes: 4004 > 3993.
        #expect((out.rejects.first?["reason"] as? String)?.contains("webpush payload is 4004 bytes, over the limit of 3993") == true, "\(out.rejects)")
    }
}
