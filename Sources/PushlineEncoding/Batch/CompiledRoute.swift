import PushlineCore

/// A route's request lines compiled once per campaign: the constant framing bytes and the body
/// as a `PayloadProgram`.
///
/// Between the per-device values (recipient, line, device index, token, personalized headers and
/// body) a request line is the same for every device of a route; writing those runs as single
/// appends keeps per-device work to the parts that differ.
struct CompiledRoute: Sendable {
    /// After `"device":N`: platform, provider, method and the URL up to where the token goes.
    var head: [UInt8]
    /// After the token: the rest of the URL and the constant headers (the header object stays open).
    var afterToken: [UInt8]
    /// The payload (APNs) or the message members after the token (FCM).
    var body: PayloadProgram

    /// APNs: `…"url":"https://host/3/device/` TOKEN `","headers":{"apns-push-type":…`.
    static func apns(_ plan: APNsPlan) -> CompiledRoute {
        var w = JSONWriter(reservingCapacity: 256)
        w.beginObject()   // only to set the separator state; the brace is dropped below
        let start = w.count
        w.writeKey("platform")
        w.writeString("ios")
        w.writeKey("provider")
        w.writeString("apns")
        w.writeKey("method")
        w.writeString("POST")
        w.writeKey("url")
        var head = Array(w.bytes[start...])
        head.insert(UInt8(ascii: ","), at: 0)
        head.append(contentsOf: "\"https://\(plan.environment.host)/3/device/".utf8)

        var rest = JSONWriter(reservingCapacity: 256)
        rest.beginObject()
        rest.writeKey("apns-push-type")
        rest.writeString(plan.pushType)
        rest.writeKey("apns-priority")
        rest.writeString(String(plan.priority))
        rest.writeKey("apns-topic")
        rest.writeString(plan.topic)
        if let expiration = plan.expiration {
            rest.writeKey("apns-expiration")
            rest.writeString(String(expiration))
        }
        var afterToken = Array("\",\"headers\":".utf8)
        afterToken.append(contentsOf: rest.bytes)
        return CompiledRoute(head: head, afterToken: afterToken, body: PayloadProgram(plan.payload))
    }

    /// FCM: `…"body":{"message":{"token":` TOKEN (then the message members).
    static func fcm(_ plan: FCMPlan, platform: Platform) -> CompiledRoute {
        var w = JSONWriter(reservingCapacity: 256)
        w.beginObject()
        let start = w.count
        w.writeKey("platform")
        w.writeString(platform.rawValue)
        w.writeKey("provider")
        w.writeString("fcm")
        w.writeKey("method")
        w.writeString("POST")
        w.writeKey("url")
        w.writeString(plan.url)
        w.writeKey("headers")
        w.beginObject()
        w.writeKey("content-type")
        w.writeString("application/json")
        w.endObject()
        w.writeKey("body")
        w.beginObject()
        w.writeKey("message")
        var head = Array(w.bytes[start...])
        head.insert(UInt8(ascii: ","), at: 0)
        return CompiledRoute(head: head, afterToken: [], body: PayloadProgram(members: plan.message))
    }
}
