import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Every example of Airship's platform overrides (reference/003_…) as a pipeline, encoded to the
/// provider request it implies. Wire names come from the providers' documents (PROVIDERS.md) and
/// the Airship SDKs' payload keys.
@Suite("Reference: Airship platform overrides")
struct AirshipReferenceTests {
    @Test func androidOverrideInANotification() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", #"""
        {"android": {"title": "Shoe sale", "alert": "All the shoes are on sale!", "summary": "Don't miss out!",
          "extra": {"url": "http://example.com", "story_id": "1234", "moar": "{\"key\": \"value\"}"},
          "icon": "shoes", "icon_color": "#8B4513", "notification_channel": "promos"}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.android))
        let expected = json(#"""
        {"message":{"token":"\#(fcmToken)",
          "android":{"notification":{"title":"Shoe sale","body":"All the shoes are on sale!","icon":"shoes","color":"#8B4513","channel_id":"promos"}},
          "data":{"url":"http://example.com","story_id":"1234","moar":"{\"key\": \"value\"}","com.urbanairship.summary":"Don't miss out!"}}}
        """#)
        #expect(jsonEqual(out.body("android"), expected), "\(out.body("android") ?? "nil")")
    }

    @Test func wearableNotification() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", #"""
        {"alert": "x", "android": {"local_only": true, "wearable": {"background_image": "http://example.com/background.png",
          "extra_pages": [{"title": "Page 1 title - optional title", "alert": "Page 1 title - optional alert"},
                          {"title": "Page 2 title - optional title", "alert": "Page 2 title - optional alert"}],
          "interactive": {"type": "ua_yes_no_foreground", "button_actions": {
            "yes": {"add_tag": "butter", "remove_tag": "cake", "open": {"type": "url", "content": "http://www.urbanairship.com"}},
            "no": {"add_tag": "nope"}}}}}}
        """#))
        // The http background image is a warning by default (https is expected).
        #expect(campaign.warnings.contains { $0.path == "notification.android.wearable.background_image" })
        let out = try encode(campaign, Reference.line(Reference.android))
        let message = try #require((out.body("android") as? [String: Any])?["message"] as? [String: Any])
        let notification = (message["android"] as? [String: Any])?["notification"] as? [String: Any]
        #expect(notification?["local_only"] as? Bool == true)
        let data = try #require(message["data"] as? [String: String])
        // The Airship SDK parses com.urbanairship.wearable back into the override's object.
        let wearable = json(#"""
        {"background_image": "http://example.com/background.png",
          "extra_pages": [{"title": "Page 1 title - optional title", "alert": "Page 1 title - optional alert"},
                          {"title": "Page 2 title - optional title", "alert": "Page 2 title - optional alert"}],
          "interactive": {"type": "ua_yes_no_foreground", "button_actions": {
            "yes": {"add_tag": "butter", "remove_tag": "cake", "open": {"type": "url", "content": "http://www.urbanairship.com"}},
            "no": {"add_tag": "nope"}}}}
        """#)
        #expect(jsonEqual(parsedJSONString(data["com.urbanairship.wearable"]), wearable))
    }

    @Test func androidNotificationTag() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", #"{"alert": "x", "android": {"notification_tag": "push-xyz"}}"#))
        let out = try encode(campaign, Reference.line(Reference.android))
        let android = ((out.body("android") as? [String: Any])?["message"] as? [String: Any])?["android"]
        #expect(jsonEqual(android, json(#"{"notification":{"body":"x","tag":"push-xyz"}}"#)))
    }

    @Test func emailNotification() throws {
        let campaign = try compileCampaign(Reference.pipeline("[email, android]", #"""
        {"android": {"alert": "Hello Android user!"},
         "email": {"subject": "Did you get that thing I sent you?",
          "html_body": "<h2>Richtext body goes here</h2><p>Wow!</p><p><a data-ua-unsubscribe=\"1\" title=\"unsubscribe\" href=\"http://unsubscribe.urbanairship.com/email/success.html\">Unsubscribe</a></p>",
          "plaintext_body": "Plaintext version goes here [[ua-unsubscribe href=\"http://unsubscribe.urbanairship.com/email/success.html\"]]",
          "message_type": "transactional", "sender_name": "Airship", "sender_address": "team@urbanairship.com",
          "reply_to": "no-reply@urbanairship.com", "click_tracking": false, "open_tracking": false,
          "attachments": [{"id": "0e10a6b9-725c-4f6b-9af2-9ef5b31328c0"}, {"id": "5503b5fe-ed69-4609-bef6-6fef0e6e428f"}],
          "url_parameters": {"utm_source": "airship", "utm_channel": "email"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.email + "," + Reference.android))
        #expect(out.requests.count == 2, "\(out.rejects)")
        let request = try #require(out.request("email"))
        #expect(request["url"] as? String == "https://hooks.example.com/email")
        #expect(request["provider"] as? String == "webhook")
        let expected = json(#"""
        {"channel":"email","to":"jane@example.com","subject": "Did you get that thing I sent you?",
          "html_body": "<h2>Richtext body goes here</h2><p>Wow!</p><p><a data-ua-unsubscribe=\"1\" title=\"unsubscribe\" href=\"http://unsubscribe.urbanairship.com/email/success.html\">Unsubscribe</a></p>",
          "plaintext_body": "Plaintext version goes here [[ua-unsubscribe href=\"http://unsubscribe.urbanairship.com/email/success.html\"]]",
          "message_type": "transactional", "sender_name": "Airship", "sender_address": "team@urbanairship.com",
          "reply_to": "no-reply@urbanairship.com", "click_tracking": false, "open_tracking": false,
          "attachments": [{"id": "0e10a6b9-725c-4f6b-9af2-9ef5b31328c0"}, {"id": "5503b5fe-ed69-4609-bef6-6fef0e6e428f"}],
          "url_parameters": {"utm_source": "airship", "utm_channel": "email"}}
        """#)
        #expect(jsonEqual(request["body"], expected), "\(request["body"] ?? "nil")")
    }

    @Test func emailWithDynamicSender() throws {
        let campaign = try compileCampaign(Reference.pipeline("[email]", #"""
        {"email": {"subject": "Did you get that thing I sent you?",
          "html_body": "<p><a data-ua-unsubscribe=\"1\" title=\"unsubscribe\">Unsubscribe</a></p>",
          "plaintext_body": "Plaintext version goes here [[ua-unsubscribe]]",
          "message_type": "transactional", "sender_name": "{{email_sender_name}}",
          "sender_address": "{{email_sender_username}}@airship.com", "reply_to": "{{email_reply_to_username}}@airship.com"}}
        """#, extra: "personalization: handlebars\n"))
        let out = try encode(campaign, Reference.line(Reference.email, extra: #""email_sender_name":"Ana","email_sender_username":"ana","email_reply_to_username":"help","#))
        let body = try #require(out.body("email") as? [String: Any])
        #expect(body["sender_name"] as? String == "Ana")
        #expect(body["sender_address"] as? String == "ana@airship.com")
        #expect(body["reply_to"] as? String == "help@airship.com")
        #expect(body["click_tracking"] as? Bool == true && body["open_tracking"] as? Bool == true)
    }

    static let mediaAttachmentExample = #"""
    {"ios": {"thread_id": "sfGiants_news",
      "alert": {"title": "Kevin Gausman Throws a Perfect Game",
        "body": "Kevin Gausman stymies the Houston Astros for San Francisco's second perfect game in franchise history.",
        "summary-arg": "San Francisco Giants", "summary-arg-count": 1},
      "RELEVANCE": 1.0, "interruption_level": "passive", "sound": "strike-call",
      "media_attachment": {"content": {"title": "Kevin Gausman", "body": "Gausman strikes out Justin Turner"},
        "options": {"crop": {"height": 0.5, "width": 0.5, "x": 0.25, "y": 0.25}, "time": 15},
        "url": "https://media.example.com/media/6nJmrhlu4aL1m/giphy.gif"},
      "mutable_content": 1}}
    """#

    /// The example writes APNs' own `relevance-score` where the override property is
    /// `relevance_score`: validation names it and suggests the override's name.
    @Test func mediaAttachmentExampleKeyIsCaught() {
        let found = diagnostics(Reference.pipeline("[ios]", Self.mediaAttachmentExample.replacingOccurrences(of: "RELEVANCE", with: "relevance-score")))
        #expect(message(at: "notification.ios.relevance-score", in: found) == "unknown key 'relevance-score' in ios (did you mean 'relevance_score'?)", "\(found)")
    }

    @Test func mediaAttachment() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", Self.mediaAttachmentExample.replacingOccurrences(of: "RELEVANCE", with: "relevance_score")))
        let out = try encode(campaign, Reference.line(Reference.ios))
        let expected = json(#"""
        {"aps": {"alert": {"title": "Kevin Gausman Throws a Perfect Game",
            "body": "Kevin Gausman stymies the Houston Astros for San Francisco's second perfect game in franchise history.",
            "summary-arg": "San Francisco Giants", "summary-arg-count": 1},
          "thread-id": "sfGiants_news", "relevance-score": 1, "interruption-level": "passive", "sound": "strike-call",
          "mutable-content": 1},
         "com.urbanairship.media_attachment": {"url": ["https://media.example.com/media/6nJmrhlu4aL1m/giphy.gif"],
           "content": {"title": "Kevin Gausman", "body": "Gausman strikes out Justin Turner"},
           "options": {"crop": {"height": 0.5, "width": 0.5, "x": 0.25, "y": 0.25}, "time": 15}}}
        """#)
        #expect(jsonEqual(out.body("ios"), expected), "\(out.body("ios") ?? "nil")")
    }

    @Test func mediaAttachmentSetsMutableContentAndNeedsAURL() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"{"alert": "x", "ios": {"media_attachment": {"url": "https://e.com/a.png"}}}"#))
        let out = try encode(campaign, Reference.line(Reference.ios))
        #expect((((out.body("ios") as? [String: Any])?["aps"]) as? [String: Any])?["mutable-content"] as? Int == 1)
        let found = diagnostics(Reference.pipeline("[ios]", #"{"alert": "x", "ios": {"media_attachment": {"content": {"title": "t"}}}}"#))
        #expect(message(at: "notification.ios.media_attachment.url", in: found) == "is required in ios.media_attachment")
    }

    @Test func iosCollapseID() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", #"{"alert": "x", "ios": {"collapse_id": "push-xyz"}}"#))
        let out = try encode(campaign, Reference.line(Reference.ios))
        #expect((out.request("ios")?["headers"] as? [String: String])?["apns-collapse-id"] == "push-xyz")
    }

    @Test func mmsNotification() throws {
        let campaign = try compileCampaign(Reference.pipeline(#"["sms"]"#, #"""
        {"mms": {"subject" : "Double Rainbows",
          "fallback_text": "See https://urbanairship.com/double-rainbows?ua-tag-add=rainbows:used_fallback_text for double rainbows!",
          "shorten_links": true,
          "slides" : [{"text": "A double rainbow is a wonderful sight where you get two spectacular natural displays for the price of one.",
            "media": {"url": "https://www.metoffice.gov.uk/binaries/content/gallery/mohippo/images/learning/learn-about-the-weather/rainbows/full_featured_double_rainbow_at_savonlinna_1000px.jpg",
              "content_type": "image/jpeg", "content_length": 238686}}]}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.sms))
        let expected = json(#"""
        {"channel":"mms","to":"+15551234567","subject" : "Double Rainbows",
          "fallback_text": "See https://urbanairship.com/double-rainbows?ua-tag-add=rainbows:used_fallback_text for double rainbows!",
          "shorten_links": true,
          "slides" : [{"text": "A double rainbow is a wonderful sight where you get two spectacular natural displays for the price of one.",
            "media": {"url": "https://www.metoffice.gov.uk/binaries/content/gallery/mohippo/images/learning/learn-about-the-weather/rainbows/full_featured_double_rainbow_at_savonlinna_1000px.jpg",
              "content_type": "image/jpeg", "content_length": 238686}}]}
        """#)
        #expect(jsonEqual(out.body("sms"), expected), "\(out.body("sms") ?? "nil")")
    }

    @Test func pushWithOpenChannelOverrides() throws {
        let campaign = try compileCampaign(Reference.pipeline(#"[ "ios", "open::sms", "open::email" ]"#, #"""
        {"alert" : "Someone did sports!",
         "ios" : {"extra" : {"url" : "http://www.example.com" } },
         "open::sms" : {"alert" : "SMS override alert value! I will replace the top-level alert.",
           "extra" : {"sms_key" : "Some SMS specific payload data for all SMS devices." } },
         "open::email" : {"alert" : "Email override alert value! I will replace the top-level alert.",
           "title" : "A title for email payloads - neat!" }}
        """#))
        let out = try encode(campaign, Reference.line([
            Reference.ios, #"{"platform":"open::sms","address":"U-1"}"#, #"{"platform":"open::email","address":"U-2"}"#, #"{"platform":"open::slack","address":"U-3"}"#,
        ].joined(separator: ",")))
        #expect(jsonEqual(out.body("ios"), json(#"{"aps":{"alert":"Someone did sports!"},"url":"http://www.example.com"}"#)))
        #expect(jsonEqual(out.body("open::sms"), json(#"""
        {"channel":"open::sms","to":"U-1","alert":"SMS override alert value! I will replace the top-level alert.",
         "extra":{"sms_key":"Some SMS specific payload data for all SMS devices."}}
        """#)))
        #expect(out.request("open::sms")?["url"] as? String == "https://hooks.example.com/open-sms")
        #expect(jsonEqual(out.body("open::email"), json(#"""
        {"channel":"open::email","to":"U-2","alert":"Email override alert value! I will replace the top-level alert.",
         "title":"A title for email payloads - neat!"}
        """#)))
        // open::slack is not in device_types: skipped, not rejected.
        #expect(out.requests.count == 3 && out.rejects.isEmpty && out.counts.skipped["device_type_not_targeted"] == 1)
        #expect(out.counts.reconciles)
    }

    @Test func openPlatformWithInteractive() throws {
        let campaign = try compileCampaign(Reference.pipeline(#"["open::sms", "open::email"]"#, #"""
        {"alert": "A generic alert sent to all open platforms",
         "open::sms": {"title": "SMS Alert!", "alert": "A shorter alert for SMS users",
           "summary": "A longer summary of some content or whatever",
           "media_attachment": "https://example.com/cat_standing_up.jpeg",
           "extra": {"some_info": "For SMS only", "some_id": "671ecd12-ad56-4b2f-98f1-107ce33d33e6" },
           "interactive": {"type": "ua_yes_no_foreground", "button_actions": {
             "yes": {"open": {"type": "url", "content": "http://www.example.com" } },
             "no": {"app_defined": {"foo": "bar" } } } } },
         "open::email": {"alert": "A longer alert for users of email, who have more space." }}
        """#))
        let out = try encode(campaign, Reference.line(#"{"platform":"open::sms","address":"U-1"},{"platform":"open::email","address":"U-2"}"#))
        #expect(jsonEqual(out.body("open::sms"), json(#"""
        {"channel":"open::sms","to":"U-1","title": "SMS Alert!", "alert": "A shorter alert for SMS users",
           "summary": "A longer summary of some content or whatever",
           "media_attachment": "https://example.com/cat_standing_up.jpeg",
           "extra": {"some_info": "For SMS only", "some_id": "671ecd12-ad56-4b2f-98f1-107ce33d33e6" },
           "interactive": {"type": "ua_yes_no_foreground", "button_actions": {
             "yes": {"open": {"type": "url", "content": "http://www.example.com" } },
             "no": {"app_defined": {"foo": "bar" } } } } }
        """#)), "\(out.body("open::sms") ?? "nil")")
        #expect(jsonEqual(out.body("open::email"), json(#"{"channel":"open::email","to":"U-2","alert":"A longer alert for users of email, who have more space."}"#)))
    }

    @Test func smsNotification() throws {
        let campaign = try compileCampaign(Reference.pipeline(#"[ "sms" ]"#, #"""
        {"alert": "A generic alert sent to all platforms without overrides in device_types",
         "sms": {"alert": "A shorter alert with a link for SMS users to click https://www.example.com/long/form/url?ua-tag-add=this_group:this_tag",
           "expiry": 172800, "shorten_links": true}}
        """#), now: 1_800_000_000)
        let out = try encode(campaign, Reference.line(Reference.sms))
        // The text is 119 characters, all in GSM-7's default alphabet (: ? = _ - / . included): one part.
        #expect(jsonEqual(out.body("sms"), json(#"""
        {"channel":"sms","to":"+15551234567",
         "text":"A shorter alert with a link for SMS users to click https://www.example.com/long/form/url?ua-tag-add=this_group:this_tag",
         "encoding":"GSM-7","segments":1,
         "expiry":1800172800,"shorten_links":true}
        """#)), "\(out.body("sms") ?? "nil")")
    }

    @Test func webOverride() throws {
        let campaign = try compileCampaign(Reference.pipeline(#"["web"]"#, #"""
        {"alert": "Hello, world!",
         "web": {"alert": "Hello Web World", "title": "A Custom Web Title", "require_interaction": true,
           "buttons": [{"id": "yes", "label": "Yes", "actions": {"open": {"type": "home"}, "add_tag": ["new_tag"]}},
                       {"id": "no", "label": "No"}],
           "extra": {"story_id": "1234", "moar": "{\"key\": \"value\"}"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.web))
        let request = try #require(out.request("web"))
        #expect(request["url"] as? String == "https://push.example.net/sub/1")
        #expect(jsonEqual(request["headers"], json(#"{"ttl":"2419200","urgency":"normal","content-encoding":"aes128gcm","content-type":"application/octet-stream"}"#)))
        // Notification API options (title, body, requireInteraction, actions{action,title}); data for the worker.
        #expect(jsonEqual(request["body"], json(#"""
        {"title":"A Custom Web Title","body":"Hello Web World","requireInteraction":true,
         "actions":[{"action":"yes","title":"Yes"},{"action":"no","title":"No"}],
         "data":{"story_id":"1234","moar":"{\"key\": \"value\"}","button_actions":{"yes":{"^+t":["new_tag"]}}}}
        """#)), "\(request["body"] ?? "nil")")
    }

    @Test func fireOSOverrideGoesToADMData() throws {
        let campaign = try compileCampaign(Reference.pipeline("[amazon]", #"""
        {"alert": "Top", "amazon": {"title": "Deals", "summary": "Today only", "icon": "deals", "icon_color": "#8B4513",
          "consolidation_key": "deals", "expires_after": 3600, "extra": {"story_id": "1234"},
          "style": {"type": "big_text", "big_text": "All the deals"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.amazon))
        let request = try #require(out.request("amazon"))
        #expect(request["url"] as? String == "https://api.amazon.com/messaging/registrations/\(Reference.admToken)/messages")
        let body = try #require(request["body"] as? [String: Any])
        #expect(body["consolidationKey"] as? String == "deals" && body["expiresAfter"] as? Int == 3600)
        let data = try #require(body["data"] as? [String: String])
        #expect(data["com.urbanairship.push.ALERT"] == "Top" && data["com.urbanairship.title"] == "Deals")
        #expect(data["com.urbanairship.summary"] == "Today only" && data["com.urbanairship.icon"] == "deals")
        #expect(data["com.urbanairship.icon_color"] == "#8B4513" && data["story_id"] == "1234")
        #expect(jsonEqual(parsedJSONString(data["com.urbanairship.style"]), json(#"{"type":"big_text","big_text":"All the deals"}"#)))
    }
}
