public import Crypto

/// RFC 8291 message decryption as a user agent does it: `Content-Encoding: aes128gcm`
/// (RFC 8188) with one record, the key derived from ECDH between the subscription's key and
/// the sender's ephemeral key (carried as the header's key id) and the subscription's auth
/// secret.
///
/// Body = salt (16) | rs (uint32, big endian) | idlen (1) = 65 | keyid = the sender's public
/// key (65) | ciphertext with its 16-byte tag. Every length is checked before it is used: a
/// hostile body is a `Failure`, never a trap.
public enum WebPushDecryption {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        init(_ description: String) { self.description = description }
    }

    static let saltBytes = 16
    static let keyIDBytes = 65
    /// salt + rs + idlen + keyid.
    static let headerBytes = 86
    static let tagBytes = 16
    /// RFC 8188 §2: a record size below 18 cannot hold a delimiter, a byte and the tag.
    static let minimumRecordSize: UInt32 = 18

    /// The plaintext (padding and delimiter removed) of `body` for the subscription holding
    /// `privateKey` and `auth`.
    public static func decrypt(_ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]) throws(Failure) -> [UInt8] {
        guard body.count >= 21 else { throw Failure("the body is shorter than the aes128gcm header") }
        let salt = Array(body[0..<saltBytes])
        let recordSize = body[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idLength = Int(body[20])
        guard recordSize >= minimumRecordSize else { throw Failure("the record size \(recordSize) is below 18") }
        guard idLength == keyIDBytes else { throw Failure("the key id is \(idLength) bytes, not a 65-byte P-256 public key") }
        guard body.count >= headerBytes else { throw Failure("the body ends inside the key id") }
        let senderKeyBytes = Array(body[21..<headerBytes])
        let record = body[headerBytes...]
        guard record.count > tagBytes else { throw Failure("the record is shorter than its tag and a delimiter") }
        // One record only: a longer body would be several records, which a push message never is.
        guard UInt64(record.count) <= UInt64(recordSize) else { throw Failure("the record is longer than the record size \(recordSize)") }

        let senderKey: P256.KeyAgreement.PublicKey
        do {
            senderKey = try P256.KeyAgreement.PublicKey(x963Representation: senderKeyBytes)
        } catch {
            throw Failure("the key id is not a P-256 public key")
        }
        let shared: SharedSecret
        do {
            shared = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        } catch {
            throw Failure("ECDH with the sender's key failed")
        }
        let ecdhSecret = shared.withUnsafeBytes { Array($0) }
        let (key, nonce) = deriveKeyAndNonce(
            ecdhSecret: ecdhSecret, auth: auth, salt: salt,
            userAgentPublic: Array(privateKey.publicKey.x963Representation), senderPublic: senderKeyBytes
        )

        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: record.dropLast(tagBytes), tag: record.suffix(tagBytes)
            )
            padded = Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
        } catch {
            throw Failure("the record does not decrypt (wrong key, or altered)")
        }
        // Padding: the delimiter 2 (last record) followed only by zeros.
        guard let last = padded.lastIndex(where: { $0 != 0 }) else { throw Failure("the record holds no padding delimiter") }
        guard padded[last] == 0x02 else { throw Failure("the padding delimiter is \(padded[last]), not 2 (last record)") }
        return Array(padded[..<last])
    }

    /// RFC 8291 §3.3–3.4 and RFC 8188 §2.2: the content-encryption key (16 bytes) and nonce
    /// (12 bytes). Each HKDF here has one output block, so HKDF-Expand is one HMAC with 0x01.
    static func deriveKeyAndNonce(
        ecdhSecret: [UInt8], auth: [UInt8], salt: [UInt8], userAgentPublic: [UInt8], senderPublic: [UInt8]
    ) -> (key: [UInt8], nonce: [UInt8]) {
        let keyPRK = hmac(key: auth, ecdhSecret)
        let keyInfo = Array("WebPush: info".utf8) + [0] + userAgentPublic + senderPublic + [1]
        let ikm = hmac(key: keyPRK, keyInfo)
        let prk = hmac(key: salt, ikm)
        let key = Array(hmac(key: prk, Array("Content-Encoding: aes128gcm".utf8) + [0, 1]).prefix(16))
        let nonce = Array(hmac(key: prk, Array("Content-Encoding: nonce".utf8) + [0, 1]).prefix(12))
        return (key, nonce)
    }

    static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
