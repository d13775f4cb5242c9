import Crypto
import Foundation

/// A webhook channel's signing secret, Standard Webhooks style: `whsec_` followed by the key's
/// base64 (the prefix may be left out). The key is 24 to 64 bytes, as the specification asks.
/// Redacts itself.
public struct WebhookSigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let key: SymmetricKey
    /// The first bytes of SHA-256 of the key, hex: tells keys apart in messages without
    /// showing them.
    public let fingerprint: String

    static let prefix = "whsec_"
    static let keyBytes = 24...64
    static let fileLimit = 4096

    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public init(secret text: String) throws(Invalid) {
        var encoded = Substring(text.trimmingWhitespace())
        if encoded.hasPrefix(Self.prefix) { encoded = encoded.dropFirst(Self.prefix.utf8.count) }
        guard let bytes = Data(base64Encoded: String(encoded)) else {
            throw Invalid(description: "is not a Standard Webhooks secret (whsec_ followed by base64)")
        }
        guard Self.keyBytes.contains(bytes.count) else {
            throw Invalid(description: "holds a key of \(bytes.count) bytes; Standard Webhooks keys are \(Self.keyBytes.lowerBound) to \(Self.keyBytes.upperBound) bytes")
        }
        key = SymmetricKey(data: bytes)
        fingerprint = SHA256.hash(data: bytes).prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// Reads the secret from a file holding it alone (a final newline is ignored).
    public static func load(path: String) throws(Invalid) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try CredentialFile.read(path, limit: fileLimit)
        } catch {
            throw Invalid(description: "file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(CredentialFile.describe(error))")
        }
        do {
            return try Self(secret: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw Invalid(description: "file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(error.description)")
        }
    }

    public var description: String { "WebhookSigningKey(\(fingerprint)…, redacted)" }
    public var debugDescription: String { description }
}
