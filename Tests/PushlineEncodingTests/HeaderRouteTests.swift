import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Class 4 of issue 7: a value that reaches a header or a URL takes the same rule on every
/// route, per recipient when personalized, and in `validate` when constant.
@Suite("Header and URL values on every route")
struct HeaderRouteTests {
    static let both = """
    name: t
    device_types: [ios]
    providers: { apns: { topic: com.example.app }, fcm: { project_id: p } }
    notification:
      alert: x
      ios: { collapse_id: "winback-{{ id }}" }
    """

    static func line(id: String) -> String {
        let record: [String: Any] = ["id": id, "devices": [
            ["platform": "ios", "token": apnsToken],
            ["platform": "ios", "provider": "fcm", "token": fcmToken],
        ]]
        return String(decoding: try! JSONSerialization.data(withJSONObject: record), as: UTF8.self)
    }

    /// (record id, reject code, message after the field name) — the same on APNs and on FCM.
    @Test(arguments: [
        ("a\r\nx-evil: 1", "invalid_header_value", "rendered text cannot go in a header: it holds a control character (0x0D)"),
        ("a\nb", "invalid_header_value", "rendered text cannot go in a header: it holds a control character (0x0A)"),
        ("nul\u{0}", "invalid_header_value", "rendered text cannot go in a header: it holds a control character (0x00)"),
        ("tab\t", "invalid_header_value", "rendered text cannot go in a header: it holds a control character (0x09)"),
        (String(repeating: "i", count: 57), "header_too_long", "rendered 65 bytes, at most 64 allowed"),
    ])
    func personalizedCollapseIDIsCheckedOnBothRoutes(_ id: String, _ code: String, _ message: String) throws {
        let out = try encode(try compileCampaign(Self.both), Self.line(id: id), number: 4)
        #expect(out.requests.isEmpty)
        #expect(out.rejects.count == 2)
        for reject in out.rejects {
            #expect(reject["code"] as? String == code)
            #expect(reject["reason"] as? String == "notification.ios.collapse_id: \(message)")
            #expect(reject["line"] as? Int == 4)
        }
        #expect(Set(out.rejects.compactMap { $0["provider"] as? String }) == ["apns", "fcm"])
    }

    @Test func aCleanCollapseIDGoesOutOnBothRoutes() throws {
        let out = try encode(try compileCampaign(Self.both), Self.line(id: "c-42"))
        #expect(out.rejects.isEmpty && out.requests.count == 2)
        let apns = try #require(out.requests.first { $0["provider"] as? String == "apns" })
        #expect((apns["headers"] as? [String: String])?["apns-collapse-id"] == "winback-c-42")
        let fcm = try #require(out.requests.first { $0["provider"] as? String == "fcm" })
        let headers = (((fcm["body"] as? [String: Any])?["message"] as? [String: Any])?["apns"] as? [String: Any])?["headers"] as? [String: String]
        #expect(headers?["apns-collapse-id"] == "winback-c-42")
        // An empty rendering drops the header on both routes.
        let empty = try compileCampaign(Self.both.replacingOccurrences(of: "winback-{{ id }}", with: "{{ customer.none }}"))
        let dropped = try encode(empty, Self.line(id: "c"))
        #expect(dropped.requests.count == 2)
        #expect(dropped.requests.allSatisfy { !String(describing: $0).contains("apns-collapse-id") })
    }

    @Test func customPayloadHeadersTakeTheSameRule() throws {
        let campaign = try compileCampaign("""
        name: t
        style: custom
        device_types: [android]
        providers: { fcm: { project_id: p } }
        notification:
          custom:
            android: { message: { data: { k: v }, apns: { headers: { apns-collapse-id: "{{ id }}" } }, webpush: { headers: { Topic: "{{ id }}" } } } }
        """)
        let out = try encode(campaign, #"{"id":"x\r\ny","platform":"android","token":"\#(fcmToken)"}"#)
        #expect(out.rejects.first?["code"] as? String == "invalid_header_value")
        #expect(out.rejects.first?["reason"] as? String == "notification.custom.android.message.apns.headers.apns-collapse-id: rendered text cannot go in a header: it holds a control character (0x0D)")
        let ok = try encode(campaign, #"{"id":"c-1","platform":"android","token":"\#(fcmToken)"}"#)
        #expect(ok.rejects.isEmpty && ok.requests.count == 1)
    }

    // MARK: validate

    static func errors(_ yaml: String) -> [ConfigDiagnostic] {
        diagnostics(yaml).filter { $0.severity == .error }
    }

    @Test(arguments: [
        (#"collapse_id: "a\r\nb""#, "cannot go in a header: it holds a control character (0x0D)"),
        (#"collapse_id: "tab\tb""#, "cannot go in a header: it holds a control character (0x09)"),
        (#"collapse_id: "x\n{{ id }}""#, "cannot go in a header: the template holds a control character (0x0A)"),
        (#"collapse_id: "\#(String(repeating: "k", count: 65))""#, "is 65 bytes, at most 64 allowed"),
    ])
    func constantCollapseIDIsCheckedByValidate(_ entry: String, _ message: String) throws {
        let found = Self.errors("""
        name: t
        providers: { apns: { topic: com.example.app } }
        device_types: [ios]
        notification:
          alert: x
          ios: { \(entry) }
        """)
        let diagnostic = try #require(found.first, "\(found)")
        #expect(found.count == 1)
        #expect(diagnostic.path == "notification.ios.collapse_id")
        #expect(diagnostic.message == message)
        #expect(diagnostic.line == 6 && diagnostic.column == 23)   // after "  ios: { collapse_id: "
    }

    @Test(arguments: [
        (#"topic: "com.example\r\nx: y""#, "cannot go in a header: it holds a control character (0x0D)"),
        (#"topic: "a\u0000b""#, "cannot go in a header: it holds a control character (0x00)"),
        (#"topic: "{{ id }}""#, "cannot be personalized (it is the same header on every request)"),
        (#"topic: """#, "cannot go in a header: it is empty"),
    ])
    func apnsTopicIsAHeaderValue(_ entry: String, _ message: String) throws {
        let found = Self.errors("""
        name: t
        device_types: [ios]
        providers:
          apns: { \(entry) }
        notification: { alert: x }
        """)
        let diagnostic = try #require(found.first { $0.path == "providers.apns.topic" }, "\(found)")
        #expect(diagnostic.message == message)
        #expect(diagnostic.line == 4 && diagnostic.column == 18)
    }

    @Test(arguments: [
        ("../../evil", "it holds '/', which would start another path segment"),
        ("..", "'.' and '..' name a folder, not a segment"),
        ("p%2F..", "it holds '%' (only letters, digits, '-', '.', '_' and '~' are allowed)"),
        ("\"p q\"", "it holds 0x20 (only ASCII letters, digits, '-', '.', '_' and '~' are allowed)"),
    ])
    func fcmProjectIDIsOnePathSegment(_ value: String, _ reason: String) throws {
        let found = Self.errors("""
        name: t
        device_types: [android]
        providers:
          fcm: { project_id: \(value) }
        notification: { alert: x }
        """)
        let diagnostic = try #require(found.first { $0.path == "providers.fcm.project_id" }, "\(found)")
        #expect(diagnostic.message == "must be one path segment: \(reason)")
        #expect(diagnostic.line == 4 && diagnostic.column == 22)
    }

    @Test(arguments: [
        ("../../x", "it holds '/', which would start another path segment"),
        ("x/../../y", "it holds '/', which would start another path segment"),
        (".", "'.' and '..' name a folder, not a segment"),
        ("\"..\"", "'.' and '..' name a folder, not a segment"),
        ("\"a\\tb\"", "it holds a control character (0x09)"),
    ])
    func campaignNameIsOnePathSegment(_ value: String, _ reason: String) throws {
        let found = Self.errors("""
        name: \(value)
        device_types: [android]
        providers: { fcm: { project_id: p } }
        notification: { alert: x }
        """)
        let diagnostic = try #require(found.first { $0.path == "name" }, "\(found)")
        #expect(diagnostic.message == "must be one path segment: \(reason)")
        #expect(diagnostic.line == 1 && diagnostic.column == 7)
    }

    @Test func customHeaderNamesAreChecked() throws {
        let found = Self.errors("""
        name: t
        style: custom
        device_types: [android]
        providers: { fcm: { project_id: p } }
        notification:
          custom:
            android: { message: { apns: { headers: { "bad name": "1", "ok": "a\\r\\nb" } } } }
        """)
        #expect(found.map(\.path).sorted() == ["notification.custom.android.message.apns.headers.bad name", "notification.custom.android.message.apns.headers.ok"])
        #expect(found.first { $0.path.hasSuffix("bad name") }?.message == "is not a header name: it holds 0x20, which a header name cannot hold")
        #expect(found.first { $0.path.hasSuffix(".ok") }?.message == "cannot go in a header: it holds a control character (0x0D)")
    }
}
