import Crypto
import _CryptoExtras

/// Signature checks for the two JWT kinds the emulator verifies.
enum SignatureCheck {
    /// ES256: the signature is raw r‖s (64 bytes), not DER (RFC 7518 §3.4).
    static func es256(_ jwt: CompactJWT, key: P256.Signing.PublicKey) -> Bool {
        guard jwt.signature.count == 64,
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        else { return false }
        return key.isValidSignature(signature, for: SHA256.hash(data: Array(jwt.signingInput)))
    }

    /// RS256: RSASSA-PKCS1-v1_5 with SHA-256.
    static func rs256(_ jwt: CompactJWT, key: _RSA.Signing.PublicKey) -> Bool {
        guard jwt.signature.count * 8 == key.keySizeInBits else { return false }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        return key.isValidSignature(signature, for: SHA256.hash(data: Array(jwt.signingInput)), padding: .insecurePKCS1v1_5)
    }
}
