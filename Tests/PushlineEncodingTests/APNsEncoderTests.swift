import Foundation
import PushlineCore
import PushlineEncoding
import Testing

@Suite("APNs requests")
struct APNsEncoderTests {
    static let base = """
    name: t
    device_types: [ios]
    providers:
      apns: { topic: com.example.app }
    """

    @Test func alertWithTitleBodySoundBadge() throws {
        let campaign = try compileCampaign(Self.base + """

        notification:
          alert: "Your trip is waiting"
          title: "Welcome back"
          ios: { sound: default, badge: 3, thread_id: winback, category: TRIP }
        """)
        let out = try encode(campaign, #"{"id":"c-1","devices":[{"platform":"ios","token":"\#(apnsToken)"}]}"#, number: 7)
        let request = try #require(out.requests.first)
        #expect(out.requests.count == 1 && out.rejects.isEmpty)
        #expect(request["recipient"] as? String == "c-1")
        #expect(request["line"] as? Int == 7)
        #expect(request["device"] as? Int == 0)
        #expect(request["method"] as? String == "POST")
        #expect(request["url"] as? String == "https://api.push.apple.com/3/device/\(apnsToken)")
        // Per Apple's payload key reference: alert object, badge number, sound name, thread-id, category.
        let expectedBody = json(#"{"aps":{"alert":{"title":"Welcome back","body":"Your trip is waiting"},"badge":3,"sound":"default","thread-id":"winback","category":"TRIP"}}"#)
        #expect(jsonEqual(request["body"], expectedBody), "\(request["body"] ?? "nil")")
        let headers = try #require(request["headers"] as? [String: String])
        #expect(headers == ["apns-push-type": "alert", "apns-priority": "10", "apns-topic": "com.example.app"])
    }

    @Test func alertOnlyIsAString() throws {
        let campaign = try compileCampaign(Self.base + "\nnotification: { alert: Hello }")
        let out = try encode(campaign, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect(jsonEqual(out.requests.first?["body"], json(#"{"aps":{"alert":"Hello"}}"#)))
    }

    @Test func backgroundPushUsesPriority5AndPushTypeBackground() throws {
        let campaign = try compileCampaign(Self.base + """

        notification:
          ios: { content_available: true, extra: { sync: "inbox" } }
        """)
        let out = try encode(campaign, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        let request = try #require(out.requests.first)
        #expect(jsonEqual(request["body"], json(#"{"aps":{"content-available":1},"sync":"inbox"}"#)))
        let headers = try #require(request["headers"] as? [String: String])
        #expect(headers["apns-push-type"] == "background")
        #expect(headers["apns-priority"] == "5")
    }

    @Test func priority10OnABackgroundPushIsRefused() {
        let found = diagnostics(Self.base + """

        notification:
          ios: { content_available: true, priority: 10 }
        """)
        #expect(found.contains { $0.path == "notification.ios.priority" && $0.message.contains("user-visible") }, "\(found)")
    }

    @Test func expiryIsAbsoluteUnixSecondsFromTheRunClock() throws {
        let relative = try compileCampaign(Self.base + "\nnotification: { alert: x, ios: { expiry: 3600 } }", now: 1_800_000_000)
        let a = try encode(relative, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect((a.requests.first?["headers"] as? [String: String])?["apns-expiration"] == "1800003600")
        // 2027-01-15T10:00:00Z = 1800007200 (date -u -d 2027-01-15T10:00:00Z +%s)
        let absolute = try compileCampaign(Self.base + "\nnotification: { alert: x, ios: { expiry: \"2027-01-15T10:00:00Z\" } }")
        let b = try encode(absolute, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect((b.requests.first?["headers"] as? [String: String])?["apns-expiration"] == "1800007200")
    }

    /// docs/overrides.md: devices of other types are skipped, never rejected, whatever their
    /// token; each skip counts under the provider it would have used.
    @Test func untargetedDevicesAreSkippedWhateverTheirToken() throws {
        let campaign = try compileCampaign(Self.base + "\nnotification: { alert: x }")
        let devices = [
            #"{"platform":"ios","token":"\#(apnsToken)"}"#, #"{"platform":"android","token":"not a token"}"#,
            #"{"platform":"web","subscription":{"endpoint":"http://x"}}"#, #"{"platform":"amazon"}"#,
        ]
        let out = try encode(campaign, #"{"id":"c","devices":["# + devices.joined(separator: ",") + "]}")
        #expect(out.requests.count == 1 && out.rejects.isEmpty, "\(out.rejects)")
        #expect(out.counts.skipped["device_type_not_targeted"] == 3)
        #expect(out.counts.byProvider[.fcm]?.skipped == 1 && out.counts.byProvider[.webpush]?.skipped == 1 && out.counts.byProvider[.adm]?.skipped == 1)
        #expect(out.counts.reconciles)
    }

    /// Liquid's `now` is the run's start, the same instant relative expiries count from.
    @Test func liquidNowIsTheRunClock() throws {
        // 1800000000 = 2027-01-15T08:00:00Z (date -u -d @1800000000)
        let campaign = try compileCampaign(Self.base + "\nnotification: { alert: \"{{ 'now' | date: '%Y-%m-%dT%H:%M' }}\" }", now: 1_800_000_000)
        let out = try encode(campaign, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect(jsonEqual(out.requests.first?["body"], json(#"{"aps":{"alert":"2027-01-15T08:00"}}"#)))
    }

    @Test func criticalSoundObject() throws {
        let campaign = try compileCampaign(Self.base + """

        notification:
          alert: Fire drill
          ios: { sound: { critical: true, name: alarm.caf, volume: 0.8 }, interruption_level: critical }
        """)
        let out = try encode(campaign, #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect(jsonEqual(out.requests.first?["body"], json(#"{"aps":{"alert":"Fire drill","sound":{"critical":1,"name":"alarm.caf","volume":0.8},"interruption-level":"critical"}}"#)))
    }

    @Test func relativeBadgeResolvesAgainstTheDeviceBadge() throws {
        let campaign = try compileCampaign(Self.base + "\nnotification: { alert: x, ios: { badge: \"+2\" } }")
        let out = try encode(campaign, #"{"id":"c","devices":[{"platform":"ios","token":"\#(apnsToken)","badge":5},{"platform":"ios","token":"\#(apnsToken)"}]}"#)
        let badges = out.requests.compactMap { (($0["body"] as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int }
        #expect(badges == [7, 2])
        let minus = try compileCampaign(Self.base + "\nnotification: { alert: x, ios: { badge: \"-9\" } }")
        let clamped = try encode(minus, #"{"id":"c","platform":"ios","token":"\#(apnsToken)","badge":3}"#)
        #expect(((clamped.requests.first?["body"] as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int == 0)
    }

    @Test func oversizePayloadIsARejectNamingSizeAndLimit() throws {
        let long = String(repeating: "a", count: 5000)
        let campaign = try compileCampaign(Self.base + "\nnotification: { alert: \"\(long)\" }")
        let out = try encode(campaign, #"{"id":"c-9","platform":"ios","token":"\#(apnsToken)"}"#, number: 3)
        #expect(out.requests.isEmpty)
        let reject = try #require(out.rejects.first)
        #expect(reject["code"] as? String == "payload_too_large")
        #expect(reject["line"] as? Int == 3 && reject["recipient"] as? String == "c-9")
        let reason = try #require(reject["reason"] as? String)
        #expect(reason.contains("4096") && reason.contains("5020"), "\(reason)")   // {"aps":{"alert":"…"}} = 5000 + 20
        #expect(out.counts.rejected["payload_too_large"] == 1 && out.counts.reconciles)
    }

    @Test func invalidConfigurationIsReportedWithPaths() {
        let found = diagnostics(Self.base + """

        notification:
          alert: x
          ios: { sound: default, badje: 1, collapse_id: "\(String(repeating: "k", count: 65))", interruption_level: loud, relevance_score: 2, extra: { aps: {} } }
        """)
        let byPath = Dictionary(found.map { ($0.path, $0.message) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["notification.ios.badje"]?.contains("did you mean 'badge'") == true, "\(found)")
        #expect(byPath["notification.ios.collapse_id"]?.contains("at most 64") == true)
        #expect(byPath["notification.ios.interruption_level"]?.contains("passive, active, time-sensitive, critical") == true)
        #expect(byPath["notification.ios.relevance_score"]?.contains("out of range") == true)
        #expect(byPath["notification.ios.extra.aps"]?.contains("not allowed") == true)
        #expect(found.allSatisfy { $0.line > 0 }, "every diagnostic points at a line")
    }

    @Test func missingTopicIsAConfigurationError() {
        let found = diagnostics("name: t\ndevice_types: [ios]\nnotification: { alert: x }\n")
        #expect(found.contains { $0.path == "providers.apns.topic" })
    }
}

@Suite("Validation reports everything at once")
struct ValidationCompletenessTests {
    @Test func templateErrorsAreListedWithSchemaErrorsInFileOrder() {
        let found = diagnostics("""
        name: t
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification:
          alert: "Hi {{ customer.first_name | upcse }}"
          ios: { sound: default, badje: 1 }
        """)
        let errors = found.filter { $0.severity == .error }
        #expect(errors.map(\.path) == ["notification.alert", "notification.ios.badje"], "\(errors)")
        #expect(errors.first?.message.contains("unknown filter 'upcse'") == true)
        #expect(errors.first?.message.contains("column 29") == true, "column inside the template")
        #expect(errors.first?.line == 5)
    }
}
