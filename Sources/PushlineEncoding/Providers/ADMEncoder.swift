import PushlineCore

/// Encodes one ADM request: `POST https://api.amazon.com/messaging/registrations/<id>/messages`
/// with `{"data": {...}, "consolidationKey": …, "expiresAfter": …}`.
enum ADMEncoder {
    static func encode(
        _ plan: ADMPlan, body: PayloadProgram, device: RoutedDevice, record: AudienceRecord, line: Int,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> Bool {
        RequestLine.writeIdentity(line: line, id: record.id, device: device, into: &w)
        w.writeKey("url")
        w.beginRawValue()
        ADMPlan.urlPrefix.withUnsafeBytes { w.appendRaw($0) }
        // The registration id was validated (letters, digits, '-', '_', '.'): safe in a path and in JSON.
        _ = device.address.withUnescapedString { w.appendRaw($0) }
        w.appendRaw("/messages\"")
        w.endRawValue()

        w.writeKey("headers")
        w.beginObject()
        w.writeKey("content-type")
        w.writeString("application/json")
        w.writeKey("accept")
        w.writeString("application/json")
        w.writeKey("x-amzn-type-version")
        w.writeString("com.amazon.device.messaging.ADMMessage@1.0")
        w.writeKey("x-amzn-accept-type")
        w.writeString("com.amazon.device.messaging.ADMSendResult@1.0")
        w.endObject()

        w.writeKey("body")
        w.beginObject()
        w.writeKey("data")
        // ADM's 6 KB limit applies to the data map.
        let truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: plan.dataLimit, policy: policy, provider: .adm, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try body.write(into: &w, context: &context)
        }
        if let key = plan.consolidationKey {
            try key.renderRaw(record: context.record, into: &context.scratch)
            if !context.scratch.bytes.isEmpty {
                w.writeKey("consolidationKey")
                w.writeString(utf8: context.scratch.bytes)
            }
        }
        if let expires = plan.expiresAfter {
            w.writeKey("expiresAfter")
            w.writeInt(expires)
        }
        w.endObject()
        RequestLine.finish(into: &w, truncated: truncated)
        return truncated
    }
}
