import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// The rules the reference states, each checked for its message and path.
@Suite("Reference: validation rules")
struct ReferenceRuleTests {
    @Test func interactiveOnAnUnsupportedPlatform() {
        let found = diagnostics(Reference.pipeline("[web, sms, email]", #"""
        {"alert": "x", "web": {"interactive": {"type": "ua_yes_no_foreground"}}, "sms": {"interactive": {"type": "t"}},
         "email": {"subject": "s", "plaintext_body": "p", "message_type": "transactional", "sender_name": "n",
           "sender_address": "a@example.com", "reply_to": "r@example.com", "interactive": {"type": "t"}}}
        """#))
        for platform in ["web", "sms", "email"] {
            #expect(message(at: "notification.\(platform).interactive", in: found)?.hasPrefix("interactive notifications are not supported on \(platform)") == true, "\(found)")
        }
    }

    @Test func smsAndMMSCannotBeCombined() {
        let found = diagnostics(Reference.pipeline("[sms]", #"{"sms": {"alert": "a"}, "mms": {"fallback_text": "f", "slides": [{"media": {"url": "https://e.com/a.jpg", "content_type": "image/jpeg", "content_length": 10}}]}}"#))
        #expect(message(at: "notification.mms", in: found)?.contains("either an SMS or an MMS payload") == true, "\(found)")
    }

    @Test func mmsNeedsFallbackTextAndSlides() {
        let found = diagnostics(Reference.pipeline("[sms]", #"{"mms": {"subject": "s"}}"#))
        #expect(message(at: "notification.mms.fallback_text", in: found) == "is required in mms")
        #expect(message(at: "notification.mms.slides", in: found) == "is required in mms")
    }

    @Test func commercialEmailNeedsUnsubscribeLinks() {
        let found = diagnostics(Reference.pipeline("[email]", #"""
        {"email": {"subject": "s", "html_body": "<p>Sale</p>", "plaintext_body": "Sale", "message_type": "commercial",
          "sender_name": "n", "sender_address": "a@example.com", "reply_to": "r@example.com", "bypass_opt_in_level": true}}
        """#))
        #expect(message(at: "notification.email.html_body", in: found)?.contains("data-ua-unsubscribe") == true, "\(found)")
        #expect(message(at: "notification.email.plaintext_body", in: found)?.contains("[[ua-unsubscribe]]") == true)
        #expect(message(at: "notification.email.bypass_opt_in_level", in: found) == "is allowed only when message_type is transactional")
    }

    @Test func emailRequiredFields() {
        let found = diagnostics(Reference.pipeline("[email]", #"{"email": {"subject": "s"}}"#))
        for key in ["plaintext_body", "message_type", "sender_name", "sender_address", "reply_to"] {
            #expect(message(at: "notification.email.\(key)", in: found) == "is required in email", "\(key): \(found)")
        }
    }

    @Test func smsAlertLimitAndExpiry() {
        let long = String(repeating: "é", count: 1601)   // 1601 characters (3202 bytes)
        let found = diagnostics(Reference.pipeline("[sms]", #"{"sms": {"alert": "\#(long)", "expiry": 172801}}"#))
        #expect(message(at: "notification.sms.alert", in: found) == "is 1601 characters, at most 1600 allowed", "\(found)")
        #expect(message(at: "notification.sms.expiry", in: found)?.contains("48 hours") == true)
        // An absolute expiry is measured from the run's clock: 2027-01-17T08:00:01Z is 48 h + 1 s after 1800000000.
        let absolute = diagnostics(Reference.pipeline("[sms]", #"{"sms": {"alert": "a", "expiry": "2027-01-17T08:00:01Z"}}"#))
        #expect(message(at: "notification.sms.expiry", in: absolute)?.contains("48 hours") == true, "\(absolute)")
    }

    @Test func androidStyleNeedsItsField() {
        let found = diagnostics(Reference.pipeline("[android]", #"""
        {"alert": "x", "android": {"style": {"type": "big_picture", "big_text": "t"}, "category": "promos", "visibility": 2}}
        """#))
        #expect(message(at: "notification.android.style.big_picture", in: found) == "is required when type is big_picture", "\(found)")
        #expect(message(at: "notification.android.style.big_text", in: found) == "is ignored: type is big_picture")
        #expect(message(at: "notification.android.category", in: found)?.contains("did you mean 'promo'") == true)
        #expect(message(at: "notification.android.visibility", in: found) == "expected one of -1, 0, 1, found 2")
    }

    @Test func deprecatedAndIneffectiveAndroidKeysWarn() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", #"{"alert": "x", "android": {"delay_while_idle": true, "deliver_to": "opted_in"}}"#))
        #expect(campaign.warnings.contains { $0.path == "notification.android.delay_while_idle" && $0.message.contains("deprecated") })
        #expect(campaign.warnings.contains { $0.path == "notification.android.deliver_to" })
    }

    @Test func httpsOnlyImagesWhenConfigured() {
        let pipeline = Reference.pipeline("[web]", #"{"alert": "x", "web": {"icon": {"url": "http://e.com/i.png"}}}"#, extra: "limits: { require_https_urls: true }\n")
        let found = diagnostics(pipeline)
        #expect(found.first { $0.path == "notification.web.icon.url" }?.severity == .error, "\(found)")
    }

    @Test func webTopicAndDeviceTypes() {
        let found = diagnostics(Reference.pipeline("[web, mms, andriod, \"open::\"]", #"{"alert": "x", "web": {"topic": "has spaces and is far too long for a topic"}}"#))
        #expect(message(at: "notification.web.topic", in: found)?.contains("base64url") == true, "\(found)")
        #expect(message(at: "device_types[1]", in: found)?.contains("MMS goes to sms devices") == true)
        #expect(message(at: "device_types[2]", in: found)?.contains("did you mean 'android'") == true)
        #expect(message(at: "device_types[3]", in: found) != nil)
    }

    @Test func webhookChannelsNeedAURL() {
        let found = diagnostics("name: t\ndevice_types: [sms]\nnotification: { alert: x }\n")
        #expect(message(at: "providers.sms.url", in: found)?.contains("is required") == true, "\(found)")
    }

    @Test func liveActivity() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"""
        {"ios": {"live_activity": {"event": "update", "name": "game", "content_state": {"home": 2, "away": "{{ score.away }}"},
          "stale_date": 1800003600, "alert": {"title": "Goal", "body": "2-1"}, "relevance_score": 50}, "sound": "x"}}
        """#), now: 1_800_000_000)
        #expect(campaign.warnings.contains { $0.path == "notification.ios" && $0.message.contains("sound") })
        let out = try encode(campaign, Reference.line(Reference.ios, extra: #""score":{"away":"1"},"#))
        let request = try #require(out.request("ios"))
        #expect(jsonEqual(request["headers"], json(#"{"apns-push-type":"liveactivity","apns-priority":"10","apns-topic":"com.example.app.push-type.liveactivity"}"#)))
        #expect(jsonEqual(request["body"], json(#"""
        {"aps":{"timestamp":1800000000,"event":"update","content-state":{"home":2,"away":"1"},"stale-date":1800003600,
          "relevance-score":50,"alert":{"title":"Goal","body":"2-1"}}}
        """#)), "\(request["body"] ?? "nil")")
        let start = diagnostics(Reference.pipeline("[ios]", #"{"ios": {"live_activity": {"event": "start"}}}"#))
        #expect(message(at: "notification.ios.live_activity.attributes_type", in: start)?.contains("event is start") == true, "\(start)")
    }

    @Test func channelAddressesAreValidatedPerDevice() throws {
        let campaign = try compileCampaign(Reference.pipeline("[sms, email]", #"""
        {"alert": "x", "email": {"subject": "s", "plaintext_body": "p", "message_type": "transactional", "sender_name": "n",
          "sender_address": "a@example.com", "reply_to": "r@example.com"}}
        """#))
        let out = try encode(campaign, Reference.line(#"""
        {"platform":"sms","address":"5551234567"},{"platform":"sms","address":"+0551234567"},{"platform":"email","address":"no-at.example.com"},
        {"platform":"email","address":"a@b"},{"platform":"sms","address":"+15551234567"},{"platform":"email"}
        """#))
        #expect(out.requests.count == 1)
        #expect(out.rejects.map { $0["code"] as? String } == Array(repeating: "invalid_token", count: 5))
        #expect(out.counts.reconciles)
    }
}
