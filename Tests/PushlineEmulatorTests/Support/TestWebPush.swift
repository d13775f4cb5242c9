import Crypto
import Foundation

/// Web Push messages and VAPID tokens built here from the RFCs with swift-crypto's HKDF, not
/// with the emulator's code, so the tests check the emulator against the format.
enum TestWebPush {
    static func decodeBase64URL(_ text: String) -> [UInt8] {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Array(Data(base64Encoded: standard) ?? Data())
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// RFC 8291 §3–4 and RFC 8188: `salt | rs | idlen | keyid | AES-128-GCM(plaintext | 2 | zeros)`.
    static func encrypt(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8],
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(), salt: [UInt8] = randomBytes(16),
        recordSize: UInt32 = 4096, padding: Int = 0, delimiter: UInt8 = 2
    ) throws -> [UInt8] {
        let userAgentKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let shared = try senderKey.sharedSecretFromKeyAgreement(with: userAgentKey)
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: Array("WebPush: info".utf8) + [0] + p256dh + senderPublic, outputByteCount: 32
        )
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonceKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        let nonce = try AES.GCM.Nonce(data: nonceKey.withUnsafeBytes { Array($0) })
        let sealed = try AES.GCM.seal(plaintext + [delimiter] + [UInt8](repeating: 0, count: padding), using: key, nonce: nonce)
        let size = [UInt8(recordSize >> 24), UInt8((recordSize >> 16) & 0xff), UInt8((recordSize >> 8) & 0xff), UInt8(recordSize & 0xff)]
        return salt + size + [65] + senderPublic + Array(sealed.ciphertext) + Array(sealed.tag)
    }

    /// An ES256 VAPID token (RFC 8292 §2) with the claims given.
    static func jwt(key: P256.Signing.PrivateKey, claims: [String: Any], header: [String: Any] = ["typ": "JWT", "alg": "ES256"]) -> String {
        let input = TestJWT.base64URL(Array(TestJWT.json(header).utf8)) + "." + TestJWT.base64URL(Array(TestJWT.json(claims).utf8))
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + TestJWT.base64URL(signature.rawRepresentation)
    }

    static func claims(audience: String, expiry: Int64 = TestJWT.nowSeconds + 12 * 3600, subject: String = "mailto:ops@example.com") -> [String: Any] {
        ["aud": audience, "exp": expiry, "sub": subject]
    }

    /// `vapid t=<JWT>, k=<key>` (RFC 8292 §3).
    static func authorization(_ jwt: String, key: P256.Signing.PublicKey) -> String {
        "vapid t=\(jwt), k=\(TestJWT.base64URL(key.x963Representation))"
    }
}
