import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Customer.io (reference/000_…, 001_…) and Adobe Campaign (002_…, 004_…) payloads: the pipeline
/// form of each example encodes to the payload the vendor documents show.
@Suite("Reference: Customer.io and Adobe payload styles")
struct VendorStyleReferenceTests {
    // MARK: Customer.io

    @Test func customerIOThroughAPNs() throws {
        // 001_: aps with mutable-content 1, sound, alert title/body; CIO.push link and image.
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "customerio", #"""
        {"title": "Trip", "alert": "Hi {{ customer.first_name }}", "link": "my-app://trips/42",
         "image": "https://cdn.example.com/trip.jpg", "ios": {"sound": "default"}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.ios, extra: #""customer":{"first_name":"Ana"},"#))
        #expect(jsonEqual(out.body("ios"), json(#"""
        {"aps":{"mutable-content":1,"sound":"default","alert":{"title":"Trip","body":"Hi Ana"}},
         "CIO":{"push":{"link":"my-app://trips/42","image":"https://cdn.example.com/trip.jpg"}}}
        """#)), "\(out.body("ios") ?? "nil")")
    }

    @Test func customerIOiOSThroughFCM() throws {
        // 001_ (FCM form): message.apns.payload carries the same aps and CIO keys.
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "customerio", #"""
        {"title": "Trip", "alert": "Booked", "link": "my-app://trips/42", "image": "https://cdn.example.com/trip.jpg", "ios": {"sound": "default"}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.iosFCM))
        let apns = (((out.body("ios") as? [String: Any])?["message"]) as? [String: Any])?["apns"] as? [String: Any]
        #expect(jsonEqual(apns?["payload"], json(#"""
        {"aps":{"mutable-content":1,"sound":"default","alert":{"title":"Trip","body":"Booked"}},
         "CIO":{"push":{"link":"my-app://trips/42","image":"https://cdn.example.com/trip.jpg"}}}
        """#)))
        #expect((apns?["headers"] as? [String: String])?["apns-priority"] == "10")
    }

    @Test func customerIOAndroidSDKForm() throws {
        // 000_: the SDK reads message.data title, body, image, link.
        let campaign = try compileCampaign(Reference.pipeline("[android]", style: "customerio", #"""
        {"title": "All set!", "alert": "Hi {{customer.first_name}}, your {{event.event_title}} has been booked!",
         "link": "remote-habits://deep?message=hello&message2=world", "image": "https://cdn.example.com/a.png",
         "android": {"extra": {"trip_id": "42"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.android, extra: #""customer":{"first_name":"Ana"},"event":{"event_title":"Lisbon trip"},"#))
        #expect(jsonEqual(out.body("android"), json(#"""
        {"message":{"token":"\#(fcmToken)","data":{"title":"All set!","body":"Hi Ana, your Lisbon trip has been booked!",
          "image":"https://cdn.example.com/a.png","link":"remote-habits://deep?message=hello&message2=world","trip_id":"42"}}}
        """#)), "\(out.body("android") ?? "nil")")
    }

    @Test func customerIOStyleWarnsAboutIgnoredDisplayOptions() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", style: "customerio", #"{"alert": "x", "android": {"icon": "shoes"}}"#))
        #expect(campaign.warnings.contains { $0.path == "notification.android.icon" && $0.message.contains("ignored by the customerio style") })
    }

    @Test func customPayloadBasicFCMExample() throws {
        // 000_: "the most basic example … via Firebase Cloud Messaging", personalized.
        let campaign = try compileCampaign(Reference.pipeline("[android]", style: "custom", #"""
        {"custom": {"android": {"message": {"notification": {
          "body": "Hi {{customer.first_name}}, your {{event.event_title}} has been booked!", "title": "All set!"}}}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.android, extra: #""customer":{"first_name":"Ana"},"event":{"event_title":"Lisbon trip"},"#))
        #expect(jsonEqual(out.body("android"), json(#"""
        {"message":{"token":"\#(fcmToken)","notification":{"body":"Hi Ana, your Lisbon trip has been booked!","title":"All set!"}}}
        """#)))
    }

    @Test func customPayloadBasicAPNsExample() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "custom", #"""
        {"custom": {"ios": {"aps": {"alert": {"body": "YOUR MESSAGE BODY HERE", "title": "YOUR MESSAGE TITLE HERE"}}}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.ios))
        #expect(jsonEqual(out.body("ios"), json(#"{"aps":{"alert":{"body":"YOUR MESSAGE BODY HERE","title":"YOUR MESSAGE TITLE HERE"}}}"#)))
        #expect((out.request("ios")?["headers"] as? [String: String])?["apns-push-type"] == "alert")
    }

    /// 000_'s iOS-through-FCM example writes `"apns-priority": 10` (a number) and
    /// `"mutable_content": true` in aps: FCM wants string headers and APNs reads `mutable-content`.
    @Test func customPayloadExampleMistakesAreCaught() {
        let found = diagnostics(Reference.pipeline("[android]", style: "custom", #"""
        {"custom": {"android": {"message": {"notification": {"title": "t", "body": "b"},
          "apns": {"headers": {"apns-priority": 10}, "payload": {"aps": {"mutable_content": true, "sound": "default"}}}}}}}
        """#))
        #expect(message(at: "notification.custom.android.message.apns.headers.apns-priority", in: found) == "FCM header values are strings: write \"10\" in quotes", "\(found)")
        #expect(message(at: "notification.custom.android.message.apns.payload.aps.mutable_content", in: found) == "unknown key 'mutable_content' in aps (did you mean 'mutable-content'?)")
    }

    @Test func customPayloadWithTheCorrectedHeadersEncodes() throws {
        let campaign = try compileCampaign(Reference.pipeline("[android]", style: "custom", #"""
        {"custom": {"android": {"message": {"notification": {"title": "t", "body": "b"},
          "apns": {"headers": {"apns-priority": "10"}, "payload": {"aps": {"mutable-content": 1, "sound": "default"}}}}}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.android))
        #expect(jsonEqual(out.body("android"), json(#"""
        {"message":{"token":"\#(fcmToken)","notification":{"title":"t","body":"b"},
          "apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"mutable-content":1,"sound":"default"}}}}}
        """#)))
    }

    @Test func customPayloadMayNotSetTheTarget() {
        let found = diagnostics(Reference.pipeline("[android]", style: "custom", #"{"custom": {"android": {"message": {"token": "abc", "data": {"gcm.x": "1"}}}}}"#))
        #expect(message(at: "notification.custom.android.message.token", in: found)?.contains("set per device from the audience") == true, "\(found)")
        #expect(message(at: "notification.custom.android.message.data.gcm.x", in: found)?.contains("FCM reserves it") == true)
    }

    @Test func customPayloadIsSizeCheckedPerRecipient() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "custom", #"{"custom": {"ios": {"aps": {"alert": "{{ customer.note }}"}}}}"#))
        let out = try encode(campaign, Reference.line(Reference.ios, extra: #""customer":{"note":"\#(String(repeating: "n", count: 4100))"},"#))
        #expect(out.requests.isEmpty && out.rejects.first?["code"] as? String == "payload_too_large")
    }

    // MARK: Adobe Campaign

    @Test func adobeIOSSample() throws {
        // 002_/004_ "Sample Payload sent from Adobe Campaign to iOS app".
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "adobe", #"""
        {"title": "Push Notification Title", "alert": "This is the content of my push notification",
         "link": "https://mydeeplinkurl.com",
         "image": "https://2.img-dpreview.com/files/p/articles/9440145363/Creative_Cloud.jpeg",
         "ios": {"content_available": true, "category": "NEW_MESSAGE_CATEGORY", "badge": 2, "sound": "default",
           "extra": {"custom_field1": "custom_value1", "custom_field2": "custom_value2"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.ios, extra: #""tracking":{"broadlog_id":"h138a","delivery_id":"56c4"},"#))
        #expect(jsonEqual(out.body("ios"), json(#"""
        {"aps":{"alert":{"body":"This is the content of my push notification","title":"Push Notification Title"},
            "content-available":1,"category":"NEW_MESSAGE_CATEGORY","badge":2,"mutable-content":1,"sound":"default"},
         "custom_field1":"custom_value1","custom_field2":"custom_value2",
         "media-attachment-url":"https://2.img-dpreview.com/files/p/articles/9440145363/Creative_Cloud.jpeg",
         "uri":"https://mydeeplinkurl.com","_dId":"56c4","_mId":"h138a"}
        """#)), "\(out.body("ios") ?? "nil")")
    }

    @Test func adobeTrackingIDsAreOmittedWhenTheRecordHasNone() throws {
        // 004_'s APNs tester sample: no image, so no mutable-content; no tracking ids.
        let campaign = try compileCampaign(Reference.pipeline("[ios]", style: "adobe", #"""
        {"title": "Push Notification Title", "alert": "body of push", "link": "https://mydeeplinkurl.com",
         "ios": {"badge": 33, "sound": "default", "extra": {"custom_field1": "custom_value1"}}}
        """#))
        let out = try encode(campaign, Reference.line(Reference.ios))
        #expect(jsonEqual(out.body("ios"), json(#"""
        {"aps":{"alert":{"title":"Push Notification Title","body":"body of push"},"badge":33,"sound":"default"},
         "custom_field1":"custom_value1","uri":"https://mydeeplinkurl.com"}
        """#)), "\(out.body("ios") ?? "nil")")
    }

    @Test func adobeAndroidSample() throws {
        // 002_/004_ Android sample: a data message; legacy collapseKey/priority become FCM v1's
        // android.collapse_key and android.priority; badge is written "1817" because v1 data maps
        // strings to strings (an unquoted number is refused with that reason).
        let campaign = try compileCampaign(Reference.pipeline("[android]", style: "adobe", #"""
        {"title": "adobe title 123", "alert": "adobe body 123",
         "link": "http://testcampaign.instance.com/r/?id=d1685a5,d57fd6,d57ff6",
         "image": "http://adobegiphy.com?test=123",
         "android": {"collapse_key": "1476005", "delivery_priority": "high", "category": "promo",
           "sound": "http://testcampaign.instance.com/r/?id=s1685a5,d57fd6,d57ff5",
           "extra": {"custom key 1": "value 1", "custom key 2": "test value 2", "custom key 3": "foo bar android", "badge": "1817"}}}
        """#))
        // The reference's http image is kept, with the https warning.
        #expect(campaign.warnings.contains { $0.path == "notification.image" })
        let out = try encode(campaign, Reference.line(Reference.android, extra: #""tracking":{"broadlog_id":"h1685a5","delivery_id":"d57fd6"},"#))
        #expect(jsonEqual(out.body("android"), json(#"""
        {"message":{"token":"\#(fcmToken)","android":{"collapse_key":"1476005","priority":"HIGH"},
          "data":{"_dId":"d57fd6","_mId":"h1685a5","body":"adobe body 123","category":"promo",
            "custom key 1":"value 1","custom key 2":"test value 2","custom key 3":"foo bar android",
            "media-attachment-url":"http://adobegiphy.com?test=123",
            "sound":"http://testcampaign.instance.com/r/?id=s1685a5,d57fd6,d57ff5",
            "title":"adobe title 123","uri":"http://testcampaign.instance.com/r/?id=d1685a5,d57fd6,d57ff6","badge":"1817"}}}
        """#)), "\(out.body("android") ?? "nil")")
    }

    @Test func airshipStyleRefusesLink() {
        let found = diagnostics(Reference.pipeline("[ios]", #"{"alert": "x", "link": "app://x"}"#))
        #expect(message(at: "notification.link", in: found)?.contains("customerio and adobe styles") == true, "\(found)")
    }
}
