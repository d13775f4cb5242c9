import Crypto
import Foundation

/// Standard Webhooks' symmetric signature: `webhook-signature` holds space-separated
/// `v1,<base64 of HMAC-SHA256>` entries (several while a sender rotates its secret; other
/// versions, such as the asymmetric `v1a`, are skipped) over `<webhook-id>.<webhook-timestamp>.<body>`.
enum WebhookSignature {
    /// The MAC a `v1` entry must hold.
    static func expected(key: [UInt8], id: String, timestamp: String, body: [UInt8]) -> [UInt8] {
        var mac = HMAC<SHA256>(key: SymmetricKey(data: key))
        mac.update(data: Array(id.utf8))
        mac.update(data: [UInt8(ascii: ".")])
        mac.update(data: Array(timestamp.utf8))
        mac.update(data: [UInt8(ascii: ".")])
        mac.update(data: body)
        return Array(mac.finalize())
    }

    /// Whether a `v1` entry of `header` holds `expected`. Each is compared in constant time, and
    /// all of them, so the answer's timing tells nothing of which came close.
    static func matches(_ header: String, expected: [UInt8]) -> Bool {
        var matched = false
        for entry in header.split(separator: " ") where entry.hasPrefix("v1,") {
            guard let signature = Data(base64Encoded: String(entry.dropFirst(3))) else { continue }
            if ConstantTime.equal(Array(signature), expected) { matched = true }
        }
        return matched
    }

    /// `webhook-timestamp`'s seconds: 1 to 32 decimal digits, nil for anything else. Beyond 18
    /// digits the value is `Int64.max` (stale by any clock) rather than an overflow.
    static func timestamp(_ text: String) -> Int64? {
        guard (1...32).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return text.utf8.count > 18 ? .max : Int64(text)
    }
}
