import PushlineCore

/// The framing of result files: one JSON object per line.
///
/// Request lines (dry run): `recipient`, `line`, `device`, `platform`, `provider`, then `method`,
/// `url`, `headers` and `body` exactly as the provider would receive them (minus credentials).
/// Reject lines: `line`, `recipient`, `device`, `platform`, `provider`, `code`, `reason`.
enum RequestLine {
    /// Opens a request line: `{"recipient":…,"line":N,"device":I` (the route's framing follows).
    static func writeIdentity(line: Int, id: JSONValue, device: Int, into w: inout JSONWriter) {
        w.beginObject()
        w.writeKey("recipient")
        writeRaw(id, into: &w)
        w.writeKey("line")
        w.writeInt(line)
        w.writeKey("device")
        w.writeInt(device)
    }

    /// Opens a request line with its platform, provider and method, for routes without
    /// pre-serialized framing (the URL and headers follow).
    static func writeIdentity(line: Int, id: JSONValue, device: RoutedDevice, into w: inout JSONWriter) {
        writeIdentity(line: line, id: id, device: device.index, into: &w)
        w.writeKey("platform")
        if device.platform == .open, let name = device.object.member("platform") {
            writeRaw(name, into: &w)   // open::<name>, validated by the router
        } else {
            w.writeString(device.platform.staticName)
        }
        w.writeKey("provider")
        w.writeString(device.provider.staticName)
        w.writeKey("method")
        w.writeString("POST")
    }

    /// Closes a request object, noting when its text was shortened to fit (`truncated: true`).
    static func finish(into w: inout JSONWriter, truncated: Bool) {
        if truncated {
            w.writeKey("truncated")
            w.writeBool(true)
        }
        finish(into: &w)
    }

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
        line: Int, id: JSONValue?, device: Int?, platform: Platform?, provider: Provider?,
        _ reason: RejectReason, into w: inout JSONWriter
    ) {
        w.beginObject()
        w.writeKey("line")
        w.writeInt(line)
        w.writeKey("recipient")
        if let id, id.kind == .string || id.kind == .number { writeRaw(id, into: &w) } else { w.writeNull() }
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

extension Platform {
    var staticName: StaticString {
        switch self {
        case .ios: "ios"
        case .android: "android"
        case .web: "web"
        case .amazon: "amazon"
        case .sms: "sms"
        case .email: "email"
        case .open: "open"
        }
    }
}

extension Provider {
    var staticName: StaticString {
        switch self {
        case .apns: "apns"
        case .fcm: "fcm"
        case .webpush: "webpush"
        case .adm: "adm"
        case .webhook: "webhook"
        }
    }
}
