import PushlineCore

/// Reading a provider's response body, which is hostile: any bytes, any size. Larger bodies
/// than `limit`, and bodies the transport cut at its `maxResponseBodyBytes`, are not parsed (the
/// status alone classifies them); JSON depth is bounded.
enum ResponseBody {
    static let limit = 16 * 1024
    static let maxDepth = 16

    /// What every reader of a response says about a body the transport cut at `limit` bytes
    /// (`TransportResponse.bodyTruncated`): what it is, rather than "not JSON" about the prefix
    /// it kept. A prefix is never parsed: it may parse and say what the whole body does not.
    static func overLimit(_ limit: Int) -> String {
        "response body over \(limit) bytes"
    }

    static func jsonObject(_ body: some Collection<UInt8>) -> JSONValue? {
        guard !body.isEmpty, body.count <= limit,
              let root = try? JSONDocument(bytes: Array(body), maxDepth: maxDepth).root,
              root.kind == .object
        else { return nil }
        return root
    }

    /// A reason or code string: printable ASCII, bounded, redacted by `PrintableText`.
    static func wireString(_ value: JSONValue?, limit: Int = 64) -> String? {
        guard let value, value.kind == .string else { return nil }
        let text: String? = value.withUnescapedString { PrintableText.bounded($0, limit: limit) }
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// `apns-id` or similar header value, checked printable and bounded (a UUID is 36).
    static func headerString(_ value: some Collection<UInt8>, limit: Int = 128) -> String? {
        guard !value.isEmpty, value.count <= limit, value.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return String(decoding: Array(value), as: UTF8.self)
    }
}
