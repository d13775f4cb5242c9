import PushlineCore

/// Encodes one FCM HTTP v1 request: `POST …/messages:send` with `{"message":{"token":…,…}}`.
enum FCMEncoder {
    static func encode(
        _ plan: FCMPlan, route: CompiledRoute, device: RoutedDevice, record: AudienceRecord, line: Int,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> Bool {
        RequestLine.writeIdentity(line: line, id: record.id, device: device.index, into: &w)
        route.head.withUnsafeBytes { w.appendRaw($0) }
        w.resetSeparator()
        // FCM counts the message payload, not its target: the token member is subtracted.
        var tokenBytes = 0
        let truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: plan.payloadLimit, policy: policy, provider: .fcm,
            size: { $0 - tokenBytes }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            w.beginObject()
            let tokenStart = w.count
            w.writeKey("token")
            // Validated as letters, digits, '-', '_' and ':': nothing to escape.
            w.beginRawValue()
            w.appendRaw("\"")
            device.address.withStringContent { w.appendRaw($0) }
            w.appendRaw("\"")
            w.endRawValue()
            tokenBytes = w.count - tokenStart + 1   // and its comma
            try route.body.write(into: &w, context: &context)
            w.endObject()
        }
        w.endObject()
        RequestLine.finish(into: &w, truncated: truncated)
        return truncated
    }
}
