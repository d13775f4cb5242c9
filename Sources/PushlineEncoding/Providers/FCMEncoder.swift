import PushlineCore

/// Encodes one FCM HTTP v1 request: `POST …/messages:send` with `{"message":{"token":…,…}}`
/// (with `validate_only`: `{"validate_only":true,"message":{…}}`). The target range is the token
/// inside the body.
enum FCMEncoder {
    static let messagePrefix = Array(#"{"message":"#.utf8)
    static let validateOnlyPrefix = Array(#"{"validate_only":true,"message":"#.utf8)

    /// `route`, not its plan and body: reading them through the reference copies nothing (passing
    /// the plan struct copied it, a retain per field, for every device).
    static func encode(
        _ route: CampaignEncoder.Compiled<FCMPlan>, device: RoutedDevice,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        var parts = RequestParts()
        let bodyStart = w.count
        route.bodyPrefix.withUnsafeBytes { w.appendRaw($0) }
        w.resetSeparator()
        // FCM counts the message payload, not its target: the token member is subtracted.
        var tokenBytes = 0
        var token = 0..<0
        parts.truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: route.plan.payloadLimit, policy: policy, provider: .fcm,
            size: { $0 - tokenBytes }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            w.beginObject()
            let tokenStart = w.count
            w.writeKey("token" as StaticString)
            // Validated as letters, digits, '-', '_' and ':': nothing to escape.
            w.beginRawValue()
            w.appendRaw("\"")
            let contentStart = w.count
            device.address.withStringContent { w.appendRaw($0) }
            token = contentStart..<w.count
            w.appendRaw("\"")
            w.endRawValue()
            tokenBytes = w.count - tokenStart + 1   // and its comma
            try route.body.write(into: &w, context: &context)
            w.endObject()
        }
        w.endObject()
        parts.body = try .checked(bodyStart, w.count)
        parts.target = try .checked(token.lowerBound, token.upperBound)
        parts.headers = try .checked(w.count, w.count)
        return parts
    }
}
