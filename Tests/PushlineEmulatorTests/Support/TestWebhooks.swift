import Crypto
import Foundation

/// Standard Webhooks signatures made here from the specification with swift-crypto's HMAC, not
/// with the emulator's code, so the tests check the emulator against the format.
enum TestWebhooks {
    /// The HMAC key of `whsec_<base64>`: the decoded base64.
    static func key(secret: String) -> SymmetricKey {
        precondition(secret.hasPrefix("whsec_"))
        return SymmetricKey(data: Data(base64Encoded: String(secret.dropFirst(6)))!)
    }

    /// `v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.
    static func signature(secret: String, id: String, timestamp: String, body: [UInt8]) -> String {
        let signed = Data("\(id).\(timestamp).".utf8) + Data(body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key(secret: secret))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The three headers of a signed delivery.
    static func headers(secret: String, id: String, timestamp: Int64 = TestJWT.nowSeconds, body: [UInt8], signature: String? = nil) -> [(String, String)] {
        let time = String(timestamp)
        return [
            ("content-type", "application/json"), ("webhook-id", id), ("webhook-timestamp", time),
            ("webhook-signature", signature ?? Self.signature(secret: secret, id: id, timestamp: time, body: body)),
        ]
    }

    static func body(channel: String = "sms", to: String = "+15555550100", text: String = "Hi") -> [UInt8] {
        Array(#"{"channel":"\#(channel)","to":"\#(to)","text":"\#(text)"}"#.utf8)
    }
}
