import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import Testing

/// Reading requests back from the request index: what a sender sees equals what the dry run
/// shows, on every route.
@Suite("Request index")
struct RequestIndexTests {
    static let everyRoute = """
    name: t
    device_types: [ios, android, web, amazon, sms, email, "open::chat"]
    providers:
      apns: { topic: com.example.app }
      fcm: { project_id: my-project }
      sms: { url: "https://hooks.example.com/sms" }
      email: { url: "https://hooks.example.com/email?k=1" }
      "open::chat": { url: "https://chat.example.com:8443/in" }
    notification:
      title: "Hi {{ customer.name }}"
      alert: "Your {{ customer.item }} is waiting"
      ios: { collapse_id: "c-{{ id }}" }
      email: { subject: Hi, plaintext_body: "Hello {{ customer.name }}", message_type: transactional, sender_name: Team, sender_address: team@example.com, reply_to: no-reply@example.com }
    """

    static let endpoint = "https://push.example.net/sub/1"
    static var devices: [String] {
        [
            Reference.ios,
            Reference.iosFCM,
            #"{"platform":"pager","token":"x"}"#,   // rejected between requests: unknown platform
            Reference.android,
            Reference.web,
            #"{"platform":"web","provider":"fcm","token":"\#(fcmToken)"}"#,
            Reference.amazon,
            Reference.sms,
            Reference.email,
            #"{"platform":"open::chat","address":"user-7"}"#,
        ]
    }

    static func audience() -> [String] {
        [
            #"{"id":"c-1","customer":{"name":"Ana","item":"trip \"Lisbon\""},"devices":[\#(devices.joined(separator: ","))]}"#,
            #"{"id":"c-2", oops}"#,   // a rejected line between requests
            #"{"id":42,"customer":{"name":"Łukasz","item":"cart"},"platform":"ios","token":"\#(apnsToken)"}"#,
        ]
    }

    @Test func everyRouteReadsBackAsTheDryRunShowsIt() throws {
        let campaign = try compileCampaign(Self.everyRoute)
        let out = try IndexedBatch(campaign, lines: Self.audience())
        let index = out.index
        // 9 requests on line 1 (the pager device is rejected), none on line 2, one on line 3.
        #expect(index.count == 10)
        #expect(out.batch.counts.rejected == ["unknown_platform": 1])
        #expect(out.batch.counts.linesRejected == 1)
        #expect(out.batch.counts.reconciles && out.batch.counts.reconcilesByProvider)

        let expected: [(platform: String, provider: Provider, device: Int)] = [
            ("ios", .apns, 0), ("ios", .fcm, 1), ("android", .fcm, 3), ("web", .webpush, 4), ("web", .fcm, 5),
            ("amazon", .adm, 6), ("sms", .webhook, 7), ("email", .webhook, 8), ("open::chat", .webhook, 9), ("ios", .apns, 0),
        ]
        for (i, want) in expected.enumerated() {
            let entry = index[i]
            let route = out.routes[entry.route]
            let line = out.lines[i].object
            #expect(route.platformName == want.platform && route.provider == want.provider, "entry \(i)")
            #expect(line["platform"] as? String == want.platform && line["provider"] as? String == want.provider.rawValue)
            #expect(Int(entry.device) == want.device && line["device"] as? Int == want.device)
            #expect(entry.line == (i < 9 ? 1 : 3) && line["line"] as? Int == entry.line)
            #expect(out.text(entry.recipient) == (i < 9 ? #""c-1""# : "42"))
            #expect(jsonEqual(json(out.text(entry.recipient)), line["recipient"]))
            #expect(route.method == "POST" && line["method"] as? String == "POST")
            #expect(out.url(i) == line["url"] as? String, "entry \(i)")
            #expect(jsonEqual(out.headers(i), line["headers"]), "entry \(i): \(out.headers(i))")
            #expect(!entry.isTruncated && line["truncated"] == nil)
        }

        // APNs: the token in the path, the personalized collapse id as a per-request header.
        #expect(out.text(index[0].target) == apnsToken)
        #expect(out.url(0) == "https://api.push.apple.com/3/device/" + apnsToken)
        #expect(out.headers(0) == ["apns-push-type": "alert", "apns-priority": "10", "apns-topic": "com.example.app", "apns-collapse-id": "c-c-1"])
        let apns = try out.checkBody(0)
        #expect(((apns["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String == "Hi Ana")
        #expect(out.headers(9)["apns-collapse-id"] == "c-42")
        let apns2 = try out.checkBody(9)
        #expect(((apns2["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String == "Hi Łukasz")

        // FCM (iOS, Android, web): the token inside the body, the URL fixed per project.
        for i in [1, 2, 4] {
            #expect(out.text(index[i].target) == fcmToken)
            #expect(out.url(i) == "https://fcm.googleapis.com/v1/projects/my-project/messages:send")
            #expect(out.headers(i) == ["content-type": "application/json"])
            let body = try out.checkBody(i)
            #expect(body.keys.sorted() == ["message"])
            #expect((body["message"] as? [String: Any])?["token"] as? String == fcmToken)
            let bodyRange = index[i].body, target = index[i].target
            #expect(target.start > bodyRange.start && target.end < bodyRange.end, "the token lies inside the body")
        }

        // Web Push: the endpoint is the URL; the keys are encryption inputs, not headers.
        #expect(out.text(index[3].target) == Self.endpoint && out.url(3) == Self.endpoint)
        #expect(out.headerItem(3, .webPushP256dh) == Reference.p256dh)
        #expect(out.headerItem(3, .webPushAuth) == Reference.auth)
        #expect(out.headers(3)["content-encoding"] == "aes128gcm" && out.headers(3)["ttl"] != nil)
        let web = try out.checkBody(3)
        #expect(web["title"] as? String == "Hi Ana")

        // ADM: the registration id in the path.
        #expect(out.text(index[5].target) == Reference.admToken)
        #expect(out.url(5) == "https://api.amazon.com/messaging/registrations/\(Reference.admToken)/messages")
        #expect(try out.checkBody(5)["data"] != nil)

        // Webhooks: the address is the target and the body's `to`; the URL is the channel's.
        let webhooks: [(Int, String, String, String)] = [
            (6, "+15551234567", "https://hooks.example.com/sms", "sms"),
            (7, "jane@example.com", "https://hooks.example.com/email?k=1", "email"),
            (8, "user-7", "https://chat.example.com:8443/in", "open::chat"),
        ]
        for (i, address, url, channel) in webhooks {
            #expect(out.text(index[i].target) == address)
            #expect(out.url(i) == url)
            let body = try out.checkBody(i)
            #expect(body["to"] as? String == address && body["channel"] as? String == channel)
        }
        #expect(out.routes[index[8].route].url.origin == "https://chat.example.com:8443")
        #expect(out.routes[index[8].route].url.pathBeforeTarget == "/in")
    }

    @Test func truncatedRequestsAreFlaggedAndFit() throws {
        let campaign = try compileCampaign(Reference.pipeline("[ios, android, amazon, web]", #"{"title": "{{ t }}", "alert": "{{ b }}"}"#, extra: "limits: { on_oversize: truncate }\n"))
        let body = String(repeating: "é\"", count: 2000)
        let record = try JSONSerialization.data(withJSONObject: ["id": "c", "t": "T", "b": body, "devices": [
            ["platform": "ios", "token": apnsToken], ["platform": "android", "token": fcmToken],
            ["platform": "amazon", "token": Reference.admToken],
            ["platform": "web", "subscription": ["endpoint": Self.endpoint, "keys": ["p256dh": Reference.p256dh, "auth": Reference.auth]]],
        ]])
        let out = try IndexedBatch(campaign, lines: [String(decoding: record, as: UTF8.self)])
        #expect(out.index.count == 4)
        for i in 0..<4 {
            #expect(out.index[i].isTruncated, "entry \(i)")
            #expect(out.lines[i].object["truncated"] as? Bool == true)
            _ = try out.checkBody(i)
        }
        // Each body within its provider's limit, as measured on the body bytes themselves
        // (FCM counts the message without its token member).
        #expect(out.index.body(0).count <= ProviderLimits.apnsPayload)
        // `{"message":` + message + `}`, less the `"token":"…",` member.
        #expect(out.index.body(1).count - 12 - (out.index.target(1).count + 11) <= ProviderLimits.fcmPayload)
        #expect(out.index.body(3).count <= ProviderLimits.webPushPlaintext)
        #expect(out.batch.counts.truncated == 4)
    }

    @Test func rejectedDevicesLeaveNothingInTheArena() throws {
        let campaign = try compileCampaign("""
        name: t
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification: { alert: "{{ customer.text }}" }
        """)
        func line(_ id: String, _ text: String) -> String {
            #"{"id":"\#(id)","customer":{"text":"\#(text)"},"devices":[{"platform":"ios","token":"\#(apnsToken)"}]}"#
        }
        // The middle line renders, then fails the size check: its partial body is rolled back.
        let out = try IndexedBatch(campaign, lines: [line("a", "one"), line("b", String(repeating: "x", count: 5000)), line("c", "three")])
        #expect(out.index.count == 2)
        #expect(out.batch.counts.rejected == ["payload_too_large": 1])
        #expect(out.index.entries.map(\.line) == [1, 3])
        // The arena holds exactly the parts of the two requests: recipient, token, (no headers),
        // body; nothing of line 2, not even its recipient id.
        let parts = out.index.entries.reduce(0) { $0 + Int($1.recipient.length + $1.target.length + $1.headers.length + $1.body.length) }
        #expect(out.index.arena.count == parts)
        #expect(out.text(out.index[1].recipient) == #""c""#)
        #expect(try out.checkBody(1)["aps"] != nil)
    }

    @Test func validateOnlyWrapsTheFCMMessage() throws {
        var campaign = try compileCampaign(Reference.pipeline("[android]", #"{"alert": "Hi"}"#))
        campaign.fcmValidateOnly = true
        let out = try IndexedBatch(campaign, lines: [Reference.line(Reference.android)])
        let body = String(decoding: out.index.body(0), as: UTF8.self)
        #expect(body.hasPrefix(#"{"validate_only":true,"message":{"token":""#))
        let parsed = try out.checkBody(0)
        #expect(parsed["validate_only"] as? Bool == true)
        #expect((parsed["message"] as? [String: Any])?["token"] as? String == fcmToken)
        #expect(out.text(out.index[0].target) == fcmToken)
    }

    /// What a retry keeps (`OutgoingRequest.detached`): its entry with ranges rebased into bytes of
    /// its own, holding only its parts, so the batch's bytes can be freed.
    @Test func aRequestDetachedForARetryKeepsItsBytes() throws {
        let campaign = try compileCampaign(Self.everyRoute)
        let out = try IndexedBatch(campaign, lines: Self.audience())
        let batchBytes = RequestBytes.arena(of: out.index)
        for i in 0..<out.index.count {
            let copy = OutgoingRequest(tag: UInt64(i), index: out.index, at: i, bytes: batchBytes).detached()
            let (a, b) = (out.index[i], copy.entry)
            #expect(copy.tag == UInt64(i))
            #expect(a.line == b.line && a.device == b.device && a.route == b.route && a.flags == b.flags)
            #expect(Array(copy.bytes[b.recipient]) == Array(out.index.recipient(i)))
            #expect(Array(copy.bytes[b.target]) == Array(out.index.target(i)))
            #expect(Array(copy.bytes[b.body]) == Array(out.index.body(i)))
            #expect(Array(copy.bytes[b.headers]) == Array(out.index.bytes(a.headers)))
            #expect(copy.bytes.count == Int(a.recipient.length + a.target.length + a.body.length + a.headers.length), "only its own bytes")
        }
    }

    @Test func escapedEndpointAndOpenPlatformKeepTheirDryRunText() throws {
        let campaign = try compileCampaign(Self.everyRoute)
        let line = #"{"id":"e","customer":{"name":"N","item":"i"},"devices":[{"platform":"web","subscription":{"endpoint":"https:\/\/push.example.net\/sub\/1","keys":{"p256dh":"\#(Reference.p256dh)","auth":"\#(Reference.auth)"}}},{"platform":"open::ch\u0061t","address":"u"}]}"#
        let out = try IndexedBatch(campaign, lines: [line])
        #expect(out.index.count == 2)
        // The sender gets the unescaped endpoint; the dry run shows the text as the input wrote it.
        #expect(out.text(out.index[0].target) == Self.endpoint)
        #expect(String(decoding: out.lines[0].bytes, as: UTF8.self).contains(#""url":"https:\/\/push.example.net\/sub\/1","headers""#))
        #expect(String(decoding: out.lines[1].bytes, as: UTF8.self).contains(#""platform":"open::ch\u0061t","provider":"webhook""#))
        #expect(out.lines[1].object["platform"] as? String == "open::chat")
    }

    @Test func theRouteTableListsEachRouteOnce() throws {
        let campaign = try compileCampaign(Self.everyRoute.replacingOccurrences(of: "topic: com.example.app }", with: "topic: com.example.app, environment: sandbox }"))
        let table = campaign.routeTable
        let names = table.routes.map { "\($0.platformName)→\($0.provider.rawValue)" }
        #expect(names == ["ios→apns", "ios→fcm", "android→fcm", "web→fcm", "web→webpush", "amazon→adm", "sms→webhook", "email→webhook", "open::chat→webhook"])
        #expect(table.routes.enumerated().allSatisfy { $0.element.id.index == $0.offset })
        let apns = table.routes[0]
        #expect(apns.url.origin == "https://api.sandbox.push.apple.com" && apns.url.pathBeforeTarget == "/3/device/" && apns.url.shape == .targetInPath)
        #expect(apns.constantHeaderLines == ["apns-push-type: alert", "apns-priority: 10", "apns-topic: com.example.app"])
        #expect(table.providers == [.apns, .fcm, .webpush, .adm, .webhook])
        #expect(campaign.routes.route(platform: .android, provider: .fcm) == table.routes[2].id)
        #expect(campaign.routes.route(platform: .amazon, provider: .fcm) == nil)
    }
}
