import PushlineCore

/// Encodes one webhook request for an SMS, email or open-channel device:
/// `POST <providers.<channel>.url>` with `{"channel": …, "to": <address>, …}`. The target range
/// is the unescaped address (the body carries it as JSON). An `sms` body's `text` is followed by
/// `"encoding"` and `"segments"`, counted on the text sent (after truncation).
enum WebhookEncoder {
    /// `route`, not its plan and body: reading them through the reference copies nothing (passing
    /// the plan struct copied it, a retain per field, for every device).
    static func encode(
        _ route: CampaignEncoder.Compiled<WebhookPlan>, device: RoutedDevice,
        policy: OversizePolicy, context: inout EncodeContext, into w: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        var parts = RequestParts()
        let targetStart = w.count
        _ = device.address.withUnescapedString { w.appendRaw($0) }
        parts.target = try .checked(targetStart, w.count)

        let headerStart = w.count
        if device.platform == .open, let name = device.object.member("platform"), name.stringHasEscapes {
            // The dry run shows an open channel's platform as the input wrote it.
            var text = JSONWriter(reservingCapacity: name.byteRange.count)
            text.writeValue(name)
            let stored = text.bytes.withUnsafeBytes { RequestHeaderBlock.append(.dryRunPlatformText, value: $0, to: &w) }
            if !stored { throw EncodeFailure(.headerBlockValueTooLong("device \(device.index): the platform")) }
        }
        parts.headers = try .checked(headerStart, w.count)

        w.resetSeparator()
        let bodyStart = w.count
        w.beginObject()
        w.writeKey("channel" as StaticString)
        w.writeString(route.plan.channel)
        w.writeKey("to" as StaticString)
        RequestLine.writeRaw(device.address, into: &w)
        for field in route.plan.fields {
            switch field {
            case .member(let member):
                let keyMark = w.count
                let hadComma = w.separatorPending
                w.writeKey(serialized: member.serializedKey)
                if try !member.value.write(into: &w, context: &context, omitIfEmpty: member.omitIfEmpty) {
                    w.truncate(to: keyMark, needsComma: hadComma)
                }
            case .limitedText(let key, let value, let limit, _, let reportsSegments):
                try value.renderRaw(record: context.record, into: &context.scratch)
                var text = context.scratch.bytes
                let size = limit.measure(text)
                if size > limit.maximum {
                    guard policy == .truncate else {
                        throw EncodeFailure(RejectReason("text_too_long", "\(value.field): rendered \(size) \(limit.unit), at most \(limit.maximum) allowed for \(route.plan.channel)"))
                    }
                    text = limit.truncate(text)
                    parts.truncated = true
                }
                w.writeKey(key)
                w.writeString(utf8: text)
                if reportsSegments {
                    let segments = SMSSegments(utf8: text)
                    w.writeKey("encoding" as StaticString)
                    w.writeString(segments.encoding.name)
                    w.writeKey("segments" as StaticString)
                    w.writeInt(segments.parts)
                }
            }
        }
        w.endObject()
        parts.body = try .checked(bodyStart, w.count)
        return parts
    }
}

extension TextLimit {
    var maximum: Int {
        switch self {
        case .characters(let n), .bytes(let n): n
        }
    }

    var unit: String {
        switch self {
        case .characters: "characters"
        case .bytes: "bytes"
        }
    }

    /// Characters are Unicode scalars: every UTF-8 byte that is not a continuation byte.
    func measure(_ text: [UInt8]) -> Int {
        switch self {
        case .characters: text.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        case .bytes: text.count
        }
    }

    /// Shortens at a grapheme boundary with "…" so the result fits.
    func truncate(_ text: [UInt8]) -> [UInt8] {
        switch self {
        case .bytes(let n):
            return TextTruncation.truncate(text, toBytes: n)
        case .characters(let n):
            let string = String(decoding: text, as: UTF8.self)
            var kept = 0
            var end = string.startIndex
            for character in string {
                let size = character.unicodeScalars.count
                if kept + size + 1 > n { break }   // one scalar for "…"
                kept += size
                end = string.index(after: end)
            }
            var result = Array(string[..<end].utf8)
            while result.last == 0x20 { result.removeLast() }
            result.append(contentsOf: TextTruncation.ellipsis.utf8)
            return result
        }
    }
}
