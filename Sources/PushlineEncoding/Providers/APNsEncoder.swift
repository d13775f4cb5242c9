import PushlineCore

/// Encodes one APNs request: `POST /3/device/<token>` with the apns-* headers and the payload.
/// Writes the token, the per-request headers (`apns-collapse-id`) and the payload to the arena.
enum APNsEncoder {
    /// `route`, not its plan and body: reading them through the reference copies nothing (passing
    /// the plan struct copied it, a retain per field, for every device).
    static func encode(
        _ route: CampaignEncoder.Compiled<APNsPlan>, device: RoutedDevice,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        var parts = RequestParts()
        // The token was validated as hex, so its bytes are safe in a path and in JSON.
        let tokenStart = w.count
        device.address.withStringContent { w.appendRaw($0) }
        parts.target = try .checked(tokenStart, w.count)

        let headerStart = w.count
        if let collapse = route.plan.collapseID {
            try collapse.render(context: &context)
            if !context.scratch.bytes.isEmpty {
                // Rendered and checked: at most 64 bytes.
                context.scratch.bytes.withUnsafeBytes { _ = RequestHeaderBlock.append(.apnsCollapseID, value: $0, to: &w) }
            }
        }
        parts.headers = try .checked(headerStart, w.count)

        w.resetSeparator()
        let bodyStart = w.count
        parts.truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: route.plan.payloadLimit, policy: policy, provider: .apns, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try route.body.write(into: &w, context: &context)
        }
        parts.body = try .checked(bodyStart, w.count)
        return parts
    }
}
