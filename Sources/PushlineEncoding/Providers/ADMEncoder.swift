import PushlineCore

/// Encodes one ADM request: `POST https://api.amazon.com/messaging/registrations/<id>/messages`
/// with `{"data": {...}, "consolidationKey": …, "expiresAfter": …}`.
enum ADMEncoder {
    /// `route`, not its plan and body: reading them through the reference copies nothing (passing
    /// the plan struct copied it, a retain per field, for every device).
    static func encode(
        _ route: CampaignEncoder.Compiled<ADMPlan>, device: RoutedDevice,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        var parts = RequestParts()
        let targetStart = w.count
        // The registration id was validated (letters, digits, '-', '_', '.'): safe in a path and in JSON.
        _ = device.address.withUnescapedString { w.appendRaw($0) }
        parts.target = try .checked(targetStart, w.count)
        parts.headers = try .checked(w.count, w.count)

        w.resetSeparator()
        let bodyStart = w.count
        w.beginObject()
        w.writeKey("data" as StaticString)
        // ADM's 6 KB limit applies to the data map.
        parts.truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: route.plan.dataLimit, policy: policy, provider: .adm, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try route.body.write(into: &w, context: &context)
        }
        if let key = route.plan.consolidationKey {
            try key.renderRaw(record: context.record, into: &context.scratch)
            // A personalized key is checked once rendered: this device is rejected, not every
            // send refused by ADM (a constant one was checked by validate).
            if key.constantText == nil, let problem = AmazonMapping.consolidationKeyProblem(utf8: context.scratch.bytes) {
                throw EncodeFailure(field: key.field, invalid: "rendered \(TypedText.quote(context.scratch.bytes[...])), which \(problem)")
            }
            if !context.scratch.bytes.isEmpty {
                w.writeKey("consolidationKey" as StaticString)
                w.writeString(utf8: context.scratch.bytes)
            }
        }
        if let expires = route.plan.expiresAfter {
            w.writeKey("expiresAfter" as StaticString)
            w.writeInt(expires)
        }
        w.endObject()
        parts.body = try .checked(bodyStart, w.count)
        return parts
    }
}
