public import Crypto

/// One browser-side Web Push subscription the emulator plays: the user agent's P-256 key pair
/// (its public half is the subscription's `p256dh`) and its 16-byte `auth` secret. A request to
/// `/push/<id>` is decrypted with them (RFC 8291).
///
/// `description` never shows key material.
public struct WebPushSubscription: Sendable, CustomStringConvertible {
    /// URL-safe, short: the last path segment of the subscription's endpoint.
    public let id: String
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The authentication secret (16 bytes).
    public let auth: [UInt8]
    /// The public key as the subscription publishes it: the 65-byte uncompressed point.
    public let p256dh: [UInt8]

    public init(id: String, privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]) {
        self.id = id
        self.privateKey = privateKey
        self.auth = auth
        self.p256dh = Array(privateKey.publicKey.x963Representation)
    }

    /// A fresh key pair and auth secret.
    public static func generate(id: String) -> WebPushSubscription {
        var generator = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return WebPushSubscription(id: id, privateKey: P256.KeyAgreement.PrivateKey(), auth: auth)
    }

    /// `<origin>/push/<id>`: where a sender POSTs messages for this subscription.
    public func endpoint(origin: String) -> String { origin + "/push/" + id }

    /// The subscription as a browser's `PushSubscription.toJSON()` gives it, on one line:
    /// `{"endpoint":…,"keys":{"p256dh":…,"auth":…}}` (keys base64url without padding).
    public func json(origin: String) -> String {
        "{\"endpoint\":\(JSONText.quoted(endpoint(origin: origin))),\"keys\":{\"p256dh\":\"\(Base64URL.encode(p256dh))\",\"auth\":\"\(Base64URL.encode(auth))\"}}"
    }

    public var description: String { "WebPushSubscription(\(id), keys redacted)" }

    static let maxIDLength = 64

    /// Ids are path segments: 1 to 64 characters of the base64url alphabet.
    static func isValidID(_ id: String) -> Bool {
        (1...maxIDLength).contains(id.utf8.count) && id.utf8.allSatisfy(isURLSafe)
    }

    static func isURLSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
