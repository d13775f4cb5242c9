import Foundation
import PushlineCore
import PushlineEncoding
import Testing

@Suite("FCM v1 requests")
struct FCMEncoderTests {
    static let base = """
    name: t
    providers:
      fcm: { project_id: my-project }
      apns: { topic: com.example.app }
    """

    @Test func androidOverrideMapsToTheV1AndroidBlock() throws {
        let campaign = try compileCampaign(Self.base + """

        device_types: [android]
        notification:
          alert: "Top-level alert"
          title: "Top-level title"
          android:
            title: "Shoe sale"
            icon: shoes
            icon_color: "#8B4513"
            notification_channel: promos
            notification_tag: push-xyz
            collapse_key: sale
            delivery_priority: high
            time_to_live: 3600
            visibility: -1
            priority: 2
            summary: "Don't miss out!"
            extra: { url: "http://example.com", story_id: "1234", count: "3" }
        """)
        let out = try encode(campaign, #"{"id":"c-1","devices":[{"platform":"android","token":"\#(fcmToken)"}]}"#)
        let request = try #require(out.requests.first)
        #expect(request["url"] as? String == "https://fcm.googleapis.com/v1/projects/my-project/messages:send")
        // FCM v1 AndroidConfig / AndroidNotification field names; data is a string map. FCM has no
        // summary field: it goes under the Airship Android SDK's PushMessage.EXTRA_SUMMARY key.
        let expected = json(#"""
        {"message":{"token":"\#(fcmToken)",
          "android":{"collapse_key":"sale","priority":"HIGH","ttl":"3600s",
            "notification":{"title":"Shoe sale","body":"Top-level alert","icon":"shoes","color":"#8B4513",
              "tag":"push-xyz","channel_id":"promos","notification_priority":"PRIORITY_MAX","visibility":"SECRET"}},
          "data":{"url":"http://example.com","story_id":"1234","count":"3","com.urbanairship.summary":"Don't miss out!"}}}
        """#)
        #expect(jsonEqual(request["body"], expected), "\(request["body"] ?? "nil")")
    }

    @Test func iosThroughFCMCarriesTheAPNsPayloadAndHeaders() throws {
        let campaign = try compileCampaign(Self.base + """

        device_types: [ios]
        notification:
          alert: Hello
          ios: { sound: default, collapse_id: trip, expiry: 60 }
        """, now: 1_000)
        let out = try encode(campaign, #"{"id":"c","devices":[{"platform":"ios","provider":"fcm","token":"\#(fcmToken)"}]}"#)
        let expected = json(#"""
        {"message":{"token":"\#(fcmToken)","apns":{
          "headers":{"apns-priority":"10","apns-push-type":"alert","apns-expiration":"1060","apns-collapse-id":"trip"},
          "payload":{"aps":{"alert":"Hello","sound":"default"}}}}}
        """#)
        #expect(jsonEqual(out.requests.first?["body"], expected), "\(out.requests.first?["body"] ?? "nil")")
    }

    @Test func ttlFromAnAbsoluteTimestampIsCappedAt28Days() throws {
        let campaign = try compileCampaign(Self.base + """

        device_types: [android]
        notification: { alert: x, android: { time_to_live: "2030-01-01T00:00:00Z" } }
        """, now: 1_800_000_000)
        let out = try encode(campaign, #"{"id":"c","platform":"android","token":"\#(fcmToken)"}"#)
        let android = ((out.requests.first?["body"] as? [String: Any])?["message"] as? [String: Any])?["android"] as? [String: Any]
        #expect(android?["ttl"] as? String == "2419200s")
    }

    @Test func reservedDataKeysAndBadColorsAreRefused() {
        let found = diagnostics(Self.base + """

        device_types: [android]
        notification:
          alert: x
          android: { icon_color: "brown", extra: { from: a, google.x: b, gcm_y: c, message_type: d, ok: e } }
        """)
        let paths = Set(found.map(\.path))
        #expect(paths.isSuperset(of: ["notification.android.icon_color", "notification.android.extra.from", "notification.android.extra.google.x", "notification.android.extra.gcm_y", "notification.android.extra.message_type"]), "\(found)")
        #expect(!paths.contains("notification.android.extra.ok"))
        #expect(found.first { $0.path == "notification.android.icon_color" }?.message == "expected #rrggbb, found 'brown'")
    }

    @Test func tokenIsNotCountedInTheSizeLimit() throws {
        // A body that is just under 4096 bytes of message payload must pass even though the
        // token pushes the whole JSON over 4096.
        let filler = String(repeating: "b", count: 4096 - 80)
        let campaign = try compileCampaign(Self.base + "\ndevice_types: [android]\nnotification: { alert: \"\(filler)\" }")
        let out = try encode(campaign, #"{"id":"c","platform":"android","token":"\#(fcmToken)"}"#)
        #expect(out.rejects.isEmpty, "\(out.rejects)")
        #expect(out.requests.count == 1)
    }
}

@Suite("Email addresses")
struct EmailAddressRuleTests {
    static func email(_ sender: String, replyTo: String = "no-reply@example.com") -> String {
        """
        name: t
        device_types: [email]
        providers: { email: { url: "https://hooks.example.com/email" } }
        notification:
          email:
            subject: Hi
            plaintext_body: Hello
            message_type: transactional
            sender_name: Team
            sender_address: "\(sender)"
            reply_to: "\(replyTo)"
        """
    }

    @Test func onlyTheUsernameMayBePersonalized() {
        // Airship's own example: "{{email_sender_username}}@airship.com".
        #expect(!diagnostics(Self.email("{{ customer.first_name }}@airship.com")).contains { $0.severity == .error })
        let templatedDomain = diagnostics(Self.email("team@{{ customer.domain }}"))
        #expect(templatedDomain.contains { $0.path == "notification.email.sender_address" && $0.message.contains("only the username part may be personalized") }, "\(templatedDomain)")
        let badDomain = diagnostics(Self.email("team@example", replyTo: "x@-bad-.com"))
        #expect(badDomain.contains { $0.path == "notification.email.sender_address" && $0.message.contains("not a valid domain") })
        #expect(badDomain.contains { $0.path == "notification.email.reply_to" && $0.message.contains("not a valid domain") })
        #expect(diagnostics(Self.email("no-at-sign")).contains { $0.message.contains("username@domain") })
    }
}
