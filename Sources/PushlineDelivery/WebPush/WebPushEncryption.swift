import PushlineCore
public import Crypto

/// RFC 8291 message encryption (`Content-Encoding: aes128gcm`, RFC 8188): one record, a fresh
/// ephemeral P-256 key and salt per message. Runs on the encode workers (`WebPushSealing`),
/// never on a transfer thread: a message costs a key generation and an ECDH.
///
/// Body = salt (16) | rs (uint32, big endian) | idlen (1) = 65 | keyid = the sender's ephemeral
/// public key (65) | AES-128-GCM(plaintext | 0x02) with its 16-byte tag.
public enum WebPushEncryption {
    /// The record size announced in the header: one record of at most 4096 bytes.
    public static let recordSize = 4096
    /// 16 + 4 + 1 + 65.
    public static let headerBytes = 86
    /// What a message adds to its plaintext: the header, the padding delimiter and the tag.
    public static let overheadBytes = headerBytes + 1 + 16
    /// The most plaintext one record carries (PROVIDERS.md: 3993).
    public static let maxPlaintextBytes = recordSize - overheadBytes

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The results files' reason code.
        public let reason: String
        public let description: String

        static let badP256dh = Failure(reason: "invalid_subscription_key", description: "the subscription's p256dh is not a P-256 public key (65-byte uncompressed point)")
        static let badAuth = Failure(reason: "invalid_subscription_key", description: "the subscription's auth secret is not 16 bytes")
        static let tooLong = Failure(reason: "payload_too_large", description: "the plaintext is longer than \(maxPlaintextBytes) bytes (one aes128gcm record)")
        static let cipher = Failure(reason: "encryption_failed", description: "the message could not be encrypted")
    }

    /// Encrypts `plaintext` for the subscription (`p256dh`: 65-byte uncompressed point, `auth`:
    /// 16 bytes) with a fresh ephemeral key and salt, appending the body to `output`.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, p256dh: [UInt8], auth: [UInt8], into output: inout [UInt8]
    ) throws(Failure) {
        var generator = SystemRandomNumberGenerator()
        let salt = randomBytes(16, using: &generator)
        try seal(plaintext, p256dh: p256dh, auth: auth, senderKey: ephemeralKey(using: &generator), salt: salt, into: &output)
    }

    /// A fresh P-256 key from 32 random bytes. `P256.KeyAgreement.PrivateKey()` costs about
    /// four times as much: it runs BoringSSL's FIPS pairwise check (an ECDSA sign and verify)
    /// on each key and draws again until the public key is "compact representable", half of
    /// them (docs/benchmarks.md, "Web Push encryption"). A scalar of 0 or at least the group
    /// order (one draw in 2^32) is refused by swift-crypto and drawn again.
    static func ephemeralKey(using generator: inout some RandomNumberGenerator) throws(Failure) -> P256.KeyAgreement.PrivateKey {
        for _ in 0..<8 {
            let scalar = randomBytes(32, using: &generator)
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
        throw .cipher
    }

    /// `count` random bytes, eight per draw (the system generator makes a system call per draw).
    static func randomBytes(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var word = generator.next()
            for _ in 0..<min(8, count - i) {
                bytes[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
        return bytes
    }

    /// The same with the subscription's keys as the audience writes them (base64url, padding
    /// allowed): the header block's `webpush-p256dh` and `webpush-auth` items.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, p256dhText: UnsafeRawBufferPointer, authText: UnsafeRawBufferPointer,
        into output: inout [UInt8]
    ) throws(Failure) {
        guard let p256dh = Base64URL.decode(unpadded(p256dhText)) else { throw .badP256dh }
        guard let auth = Base64URL.decode(unpadded(authText)) else { throw .badAuth }
        try seal(plaintext, p256dh: p256dh, auth: auth, into: &output)
    }

    private static func unpadded(_ text: UnsafeRawBufferPointer) -> Slice<UnsafeRawBufferPointer> {
        var end = text.count
        while end > 0, text[end - 1] == UInt8(ascii: "=") { end -= 1 }
        return text[0..<end]
    }

    /// The same with the sender's key and salt given: RFC 8291's example, tests.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, p256dh: [UInt8], auth: [UInt8],
        senderKey: P256.KeyAgreement.PrivateKey, salt: [UInt8], into output: inout [UInt8]
    ) throws(Failure) {
        guard plaintext.count <= maxPlaintextBytes else { throw .tooLong }
        guard auth.count == 16 else { throw .badAuth }
        guard p256dh.count == 65, salt.count == 16 else { throw .badP256dh }
        let receiver: P256.KeyAgreement.PublicKey
        let secret: SharedSecret
        do {
            receiver = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
            secret = try senderKey.sharedSecretFromKeyAgreement(with: receiver)
        } catch {
            throw .badP256dh
        }
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let (key, nonce) = deriveKeyAndNonce(secret: secret, auth: auth, salt: salt, receiverPublic: p256dh, senderPublic: senderPublic)

        var record = [UInt8]()
        record.reserveCapacity(plaintext.count + 1)
        record.append(contentsOf: plaintext)
        record.append(0x02)  // the last (only) record's delimiter, no padding
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(record, using: key, nonce: AES.GCM.Nonce(data: nonce))
        } catch {
            throw .cipher
        }
        output.reserveCapacity(output.count + overheadBytes + plaintext.count)
        output.append(contentsOf: salt)
        output.append(contentsOf: [0, 0, UInt8(recordSize >> 8), UInt8(recordSize & 0xFF)])
        output.append(UInt8(senderPublic.count))
        output.append(contentsOf: senderPublic)
        output.append(contentsOf: box.ciphertext)
        output.append(contentsOf: box.tag)
    }

    /// RFC 8291 §3.3–3.4 and RFC 8188 §2.2–2.3, each HKDF with one block of output.
    static func deriveKeyAndNonce(
        secret: SharedSecret, auth: [UInt8], salt: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8]
    ) -> (SymmetricKey, [UInt8]) {
        // PRK_key = HMAC(auth_secret, ecdh_secret); IKM = HKDF-Expand(PRK_key, key_info, 32).
        let prkKey = secret.withUnsafeBytes { ecdh in
            HMAC<SHA256>.authenticationCode(for: ecdh, using: SymmetricKey(data: auth))
        }
        var keyInfo = Array("WebPush: info".utf8)
        keyInfo.append(0)
        keyInfo.append(contentsOf: receiverPublic)
        keyInfo.append(contentsOf: senderPublic)
        keyInfo.append(1)
        let ikm = HMAC<SHA256>.authenticationCode(for: keyInfo, using: SymmetricKey(data: Array(prkKey)))
        // PRK = HKDF-Extract(salt, IKM); CEK and NONCE expand it.
        let prk = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(ikm), using: SymmetricKey(data: salt))))
        let cek = HMAC<SHA256>.authenticationCode(for: Array("Content-Encoding: aes128gcm\u{0}\u{1}".utf8), using: prk)
        let nonce = HMAC<SHA256>.authenticationCode(for: Array("Content-Encoding: nonce\u{0}\u{1}".utf8), using: prk)
        return (SymmetricKey(data: Array(cek).prefix(16)), Array(Array(nonce).prefix(12)))
    }
}
