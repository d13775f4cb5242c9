import Foundation

/// The Standard Webhooks secret as a sender's configuration holds it: `whsec_` and the key in
/// standard, padded base64. The HMAC key is the decoded bytes, not the text.
public enum WebhookSecret {
    public static let prefix = "whsec_"
    /// Standard Webhooks asks for 24 to 64 random bytes; the emulator makes 32.
    public static let keyLengths = 24...64
    public static let generatedKeyLength = 32

    /// `whsec_<base64 of key>`.
    public static func text(_ key: [UInt8]) -> String {
        prefix + Data(key).base64EncodedString()
    }

    /// The key of `whsec_<base64>`; nil for another prefix, base64 that does not decode, or a key
    /// outside `keyLengths`.
    public static func key(_ secret: String) -> [UInt8]? {
        guard secret.hasPrefix(prefix), secret.utf8.count <= 256,
              let data = Data(base64Encoded: String(secret.dropFirst(prefix.count))), keyLengths.contains(data.count)
        else { return nil }
        return Array(data)
    }

    /// A new random key.
    public static func generateKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<generatedKeyLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
