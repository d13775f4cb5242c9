import Crypto
import _CryptoExtras
import Foundation

/// Provider tokens and OAuth assertions built here from the wire rules (PROVIDERS.md), not with
/// the emulator's code, so the tests check the emulator against the format.
enum TestJWT {
    static func base64URL(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func json(_ object: [String: Any]) -> String {
        // Sorted keys keep the text stable; JWT verification does not care about order.
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// `{"alg":"ES256","kid"}.{"iss","iat"}` signed with `key`, signature raw r‖s.
    static func apnsProviderToken(key: P256.Signing.PrivateKey, keyID: String, teamID: String, issuedAt: Int64) -> String {
        let header = base64URL(Array(json(["alg": "ES256", "kid": keyID]).utf8))
        let claims = base64URL(Array(json(["iss": teamID, "iat": issuedAt]).utf8))
        let input = header + "." + claims
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// A correctly signed ES256 token with claims given as raw JSON text (hostile numbers).
    static func apnsProviderToken(key: P256.Signing.PrivateKey, keyID: String, rawClaims: String) -> String {
        let header = base64URL(Array(json(["alg": "ES256", "kid": keyID]).utf8))
        let input = header + "." + base64URL(Array(rawClaims.utf8))
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// Google's service-account assertion: RS256, iss = client_email, scope, aud, iat, exp.
    static func oauthAssertion(
        key: _RSA.Signing.PrivateKey, keyID: String, clientEmail: String, audience: String,
        scope: String = "https://www.googleapis.com/auth/firebase.messaging", issuedAt: Int64, lifetime: Int64 = 3600
    ) -> String {
        let header = base64URL(Array(json(["alg": "RS256", "typ": "JWT", "kid": keyID]).utf8))
        let claims = base64URL(Array(json([
            "iss": clientEmail, "scope": scope, "aud": audience, "iat": issuedAt, "exp": issuedAt + lifetime,
        ]).utf8))
        let input = header + "." + claims
        let signature = try! key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static var nowSeconds: Int64 { Int64(Date().timeIntervalSince1970) }
}

/// Device tokens for tests: APNs hex, FCM in the FCM alphabet and at least 32 characters.
enum TestDevice {
    static func apns(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        // Zero padding keeps the tokens distinct (padding with a hex letter would not).
        return "ab" + String(repeating: "0", count: 62 - hex.count) + hex
    }

    static func fcm(_ n: Int) -> String {
        "fcm-token-\(n)-" + String(repeating: "x", count: 32)
    }
}
