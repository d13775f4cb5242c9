import PushlineCore

/// The framing of result files: one JSON object per line.
///
/// Request lines (dry run) are rendered from the request index (`DryRunLine`).
/// Reject lines: `line`, `recipient`, `variant` (experiments), `device`, `platform`, `provider`,
/// `code`, `reason`.
enum RequestLine {
    /// Closes the request object and ends the NDJSON line.
    static func finish(into w: inout JSONWriter) {
        w.endObject()
        w.appendRaw(byte: 0x0A)
        w.resetSeparator()
    }

    /// Copies a value of the audience line (lone surrogate escapes become U+FFFD).
    static func writeRaw(_ value: JSONValue, into w: inout JSONWriter) {
        w.writeValue(value)
    }

    static func writeReject(
        line: Int, id: JSONValue?, variant: String? = nil, device: Int?, platform: Platform?, provider: Provider?,
        _ reason: RejectReason, into w: inout JSONWriter
    ) {
        w.beginObject()
        w.writeKey("line")
        w.writeInt(line)
        w.writeKey("recipient")
        if let id, id.kind == .string || id.kind == .number { writeRaw(id, into: &w) } else { w.writeNull() }
        if let variant {
            w.writeKey("variant")
            w.writeString(variant)
        }
        w.writeKey("device")
        if let device { w.writeInt(device) } else { w.writeNull() }
        w.writeKey("platform")
        if let platform { w.writeString(platform.rawValue) } else { w.writeNull() }
        w.writeKey("provider")
        if let provider { w.writeString(provider.rawValue) } else { w.writeNull() }
        w.writeKey("code")
        w.writeString(reason.code)
        w.writeKey("reason")
        w.writeString(reason.message)
        finish(into: &w)
    }
}

