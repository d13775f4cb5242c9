import Crypto
import PushlineCore

/// A compact ES256 JWT (RFC 7515, 7518): `base64url(header) . base64url(claims) . base64url(r||s)`,
/// as APNs provider tokens and VAPID tokens are made. The header and claims are JSON the caller
/// built from checked values (nothing in them needs escaping).
enum ES256JWT {
    /// Nil when swift-crypto cannot sign with `key` (its scalar does not make a key).
    static func sign(header: String, claims: String, scalar: [UInt8]) -> String? {
        var token = Base64URL.encode(Array(header.utf8))
        token.append(UInt8(ascii: "."))
        Base64URL.encode(Array(claims.utf8), into: &token)
        guard let key = try? P256.Signing.PrivateKey(rawRepresentation: scalar),
              let signature = try? key.signature(for: token)
        else { return nil }
        token.append(UInt8(ascii: "."))
        Base64URL.encode(signature.rawRepresentation, into: &token)
        return String(decoding: token, as: UTF8.self)
    }
}
