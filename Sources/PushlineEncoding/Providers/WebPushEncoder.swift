import PushlineCore

/// Encodes one Web Push request as the dry run shows it: `POST <subscription endpoint>` with
/// `TTL`, `Urgency`, `Topic`, `Content-Encoding: aes128gcm`, and as body the plaintext JSON that
/// the sender encrypts for the subscription (RFC 8291) when it sends.
enum WebPushEncoder {
    static func encode(
        _ plan: WebPushPlan, body: PayloadProgram, device: RoutedDevice, record: AudienceRecord, line: Int,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> Bool {
        RequestLine.writeIdentity(line: line, id: record.id, device: device, into: &w)
        w.writeKey("url")
        // The router checked the endpoint: https, no quotes, backslashes or controls.
        if let endpoint = device.address.member("endpoint") { RequestLine.writeRaw(endpoint, into: &w) }

        w.writeKey("headers")
        w.beginObject()
        w.writeKey("ttl")
        w.writeString(plan.ttl)
        w.writeKey("urgency")
        w.writeString(plan.urgency)
        if let topic = plan.topic {
            w.writeKey("topic")
            w.writeString(topic)
        }
        w.writeKey("content-encoding")
        w.writeString("aes128gcm")
        w.writeKey("content-type")
        w.writeString("application/octet-stream")
        w.endObject()

        w.writeKey("body")
        let truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: plan.plaintextLimit, policy: policy, provider: .webpush, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try body.write(into: &w, context: &context)
        }
        RequestLine.finish(into: &w, truncated: truncated)
        return truncated
    }
}
