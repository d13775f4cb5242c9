import PushlineCore

/// Encodes one APNs request: `POST /3/device/<token>` with the apns-* headers and the payload.
enum APNsEncoder {
    static func encode(
        _ plan: APNsPlan, route: CompiledRoute, device: RoutedDevice, record: AudienceRecord, line: Int,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> Bool {
        RequestLine.writeIdentity(line: line, id: record.id, device: device.index, into: &w)
        route.head.withUnsafeBytes { w.appendRaw($0) }
        // The token was validated as hex, so its bytes are safe in a path and in JSON.
        device.address.withStringContent { w.appendRaw($0) }
        route.afterToken.withUnsafeBytes { w.appendRaw($0) }
        w.endRawValue()
        if let collapse = plan.collapseID {
            try collapse.render(context: &context)
            if !context.scratch.bytes.isEmpty {
                w.writeKey("apns-collapse-id")
                w.writeString(utf8: context.scratch.bytes)
            }
        }
        w.endObject()

        w.writeKey("body")
        let truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: plan.payloadLimit, policy: policy, provider: .apns, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try route.body.write(into: &w, context: &context)
        }
        RequestLine.finish(into: &w, truncated: truncated)
        return truncated
    }
}
