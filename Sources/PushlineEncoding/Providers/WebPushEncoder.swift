import PushlineCore

/// Encodes one Web Push request: `POST <subscription endpoint>` with `TTL`, `Urgency`, `Topic`,
/// `Content-Encoding: aes128gcm` (constant per route), and as body the plaintext JSON that the
/// sender encrypts for the subscription (RFC 8291). The subscription's keys go in the header
/// block (`webPushP256dh`, `webPushAuth`): the sender's encryption inputs, not headers.
enum WebPushEncoder {
    /// `route`, not its plan and body: reading them through the reference copies nothing (passing
    /// the plan struct copied it, a retain per field, for every device).
    static func encode(
        _ route: CampaignEncoder.Compiled<WebPushPlan>, device: RoutedDevice,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        var parts = RequestParts()
        // The router checked the endpoint: https, no quotes, backslashes or controls once unescaped.
        let endpoint = device.address.member("endpoint")
        let targetStart = w.count
        _ = endpoint?.withUnescapedString { w.appendRaw($0) }
        parts.target = try .checked(targetStart, w.count)

        let headerStart = w.count
        if let keys = device.address.member("keys") {
            for (name, id) in [("p256dh", RequestHeaderID.webPushP256dh), ("auth", .webPushAuth)] {
                // Validated base64url of a fixed decoded size: far below the item limit.
                _ = keys[name]?.withUnescapedString { RequestHeaderBlock.append(id, value: $0, to: &w) }
            }
        }
        if let endpoint, endpoint.stringHasEscapes {
            // The dry run shows the endpoint as the input wrote it (`https:\/\/…`).
            var text = JSONWriter(reservingCapacity: endpoint.byteRange.count)
            text.writeValue(endpoint)
            let quoted = text.bytes
            guard quoted.count >= 2 else { throw EncodeFailure(.invalidToken("device \(device.index): the subscription endpoint is not a string")) }
            let stored = quoted.withUnsafeBytes { RequestHeaderBlock.append(.dryRunTargetText, value: UnsafeRawBufferPointer(rebasing: $0[1..<($0.count - 1)]), to: &w) }
            if !stored { throw EncodeFailure(.headerBlockValueTooLong("device \(device.index): the subscription endpoint")) }
        }
        parts.headers = try .checked(headerStart, w.count)

        w.resetSeparator()
        let bodyStart = w.count
        parts.truncated = try PayloadFitting.write(
            into: &w, context: &context, limit: route.plan.plaintextLimit, policy: policy, provider: .webpush, size: { $0 }
        ) { (w: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) in
            try route.body.write(into: &w, context: &context)
        }
        parts.body = try .checked(bodyStart, w.count)
        return parts
    }
}
