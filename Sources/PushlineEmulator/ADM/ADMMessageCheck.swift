import PushlineCore

/// The body of an `ADMMessage@1.0`: `{"data": {string: string, …}, "consolidationKey"?: string,
/// "expiresAfter"?: seconds}` and nothing else, `data` at most 6144 bytes as sent (ADM's 6 KB,
/// PROVIDERS.md).
enum ADMMessageCheck {
    struct Problem {
        var status = 400
        var reason: String
    }

    static let keys: Set<String> = ["data", "consolidationKey", "expiresAfter"]
    /// ADM keeps a message at most 31 days.
    static let expiresAfterRange: ClosedRange<Int64> = 1...2_678_400

    /// The body's first problem, as ADM names it; nil for a valid message.
    static func problem(_ request: EmulatorRequest) -> Problem? {
        if request.bodyTruncated { return Problem(status: 413, reason: "MessageTooLarge") }
        guard let document = try? JSONDocument(bytes: request.body, maxDepth: 16), document.root.kind == .object else {
            return Problem(reason: "InvalidData")
        }
        let root = document.root
        var seen = Set<String>()
        for (key, _) in root.members {
            // A repeated member would leave which one counts to the parser: refused.
            guard let name = key.stringValue, keys.contains(name), seen.insert(name).inserted else { return Problem(reason: "InvalidData") }
        }
        guard let data = root["data"], data.kind == .object, data.members.allSatisfy({ $0.value.kind == .string }) else {
            return Problem(reason: "InvalidData")
        }
        if data.byteRange.count > ProviderLimits.admData { return Problem(status: 413, reason: "MessageTooLarge") }
        if let key = root["consolidationKey"] {
            // A string of at most 64 characters (Amazon's limit, counted as the sender counts it).
            guard let text = key.stringValue, ProviderLimits.admKeyLength(utf8: text.utf8) <= ProviderLimits.admConsolidationKey else {
                return Problem(reason: "InvalidConsolidationKey")
            }
        }
        if let expires = root["expiresAfter"] {
            guard let seconds = expires.int64Value, expiresAfterRange.contains(seconds) else { return Problem(reason: "InvalidExpiration") }
        }
        return nil
    }
}
