import Crypto
import PushlineCore

/// `authorization: vapid t=<JWT>, k=<key>` (RFC 8292 §3): the key must be the application
/// server's the subscriptions were made with, the JWT an ES256 token signed with it whose `aud`
/// is the push service's origin, `exp` within the next 24 hours and `sub` a contact.
///
/// A token that verified once is remembered by its text (only `exp` is checked again), as
/// for APNs provider tokens: senders reuse one VAPID token per origin for many messages, and
/// this keeps ECDSA off the per-request path (ECDH for the decryption stays on it).
struct VAPIDCheck {
    let core: EmulatorCore
    let account: WebPushAccount

    enum Verdict {
        case accepted
        /// 401 or 403 with a reason word for the stats label and a message for the body.
        case rejected(status: Int, reason: String, message: String)
    }

    /// RFC 8292 §2: no more than 24 hours ahead.
    static let maxLifetimeSeconds: Int64 = 86_400
    static let maxHeaderLength = CompactJWT.maxLength + 256

    func check(_ header: String?) -> Verdict {
        guard let header else {
            return .rejected(status: 401, reason: "MissingAuthorization", message: "authorization: vapid t=<JWT>, k=<public key> is required")
        }
        guard let (token, keyText) = Self.parse(header) else {
            return .rejected(status: 401, reason: "BadAuthorization", message: "authorization must be: vapid t=<JWT>, k=<base64url public key>")
        }
        guard let key = Base64URL.decode(keyText), key.count == 65, key.first == 0x04,
              (try? P256.Signing.PublicKey(x963Representation: key)) != nil
        else {
            return .rejected(status: 401, reason: "BadAuthorization", message: "k is not a base64url P-256 public key (65-byte uncompressed point)")
        }
        guard key == account.vapidPublicKeyBytes else {
            return .rejected(status: 403, reason: "KeyMismatch", message: "k is not the application server key this subscription was made with")
        }

        let now = core.configuration.clock.seconds
        let text = String(token)
        let cached = core.state.update { $0.verifiedVAPIDTokens[text] }
        let expiry: Int64
        if let cached {
            expiry = cached
        } else {
            switch verify(token) {
            case .success(let exp): expiry = exp
            case .failure(let rejection): return rejection.verdict
            }
        }
        if expiry <= now {
            return .rejected(status: 401, reason: "ExpiredJWT", message: "the VAPID token's exp is past")
        }
        if ClaimTime.minus(expiry, now) > Self.maxLifetimeSeconds {
            return .rejected(status: 401, reason: "BadExpiration", message: "the VAPID token's exp is more than 24 hours ahead")
        }
        if cached == nil { core.state.update { $0.rememberVAPIDToken(text, expiresAt: expiry) } }
        return .accepted
    }

    struct Rejection: Error {
        let verdict: Verdict

        init(_ reason: String, _ message: String) {
            verdict = .rejected(status: 401, reason: reason, message: message)
        }
    }

    /// Signature and claims other than time; returns `exp`.
    private func verify(_ token: Substring) -> Result<Int64, Rejection> {
        guard let jwt = CompactJWT(token) else { return .failure(Rejection("BadJWT", "t is not a compact JWT with JSON header and claims")) }
        guard jwt.header["alg"]?.stringEquals("ES256") == true else { return .failure(Rejection("BadJWT", "the VAPID token's alg must be ES256")) }
        if let type = jwt.header["typ"], type.stringValue?.uppercased() != "JWT" {
            return .failure(Rejection("BadJWT", "the VAPID token's typ must be JWT"))
        }
        guard SignatureCheck.es256(jwt, key: account.vapidPublicKey) else {
            return .failure(Rejection("BadSignature", "the VAPID token's signature does not verify with k"))
        }
        guard jwt.claims["aud"]?.stringEquals(core.origin) == true else {
            return .failure(Rejection("BadAudience", "the VAPID token's aud must be the push service's origin, \(core.origin)"))
        }
        guard let exp = Self.numericDate(jwt.claims["exp"]) else {
            return .failure(Rejection("BadExpiration", "the VAPID token's exp must be a number (seconds since 1970)"))
        }
        guard let subject = jwt.claims["sub"]?.stringValue, subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else {
            return .failure(Rejection("BadSubject", "the VAPID token's sub must be a mailto: or https: contact"))
        }
        return .success(exp)
    }

    /// A JWT NumericDate: an integer, or a finite number rounded down (RFC 7519 allows fractions).
    static func numericDate(_ value: JSONValue?) -> Int64? {
        guard let value else { return nil }
        if let integer = value.int64Value { return integer }
        guard let double = value.doubleValue, double.isFinite else { return nil }
        if double >= 9.2e18 { return .max }
        if double <= -9.2e18 { return .min }
        return Int64(double.rounded(.down))
    }

    /// `vapid t=<JWT>, k=<key>`: scheme case-insensitive, parameters in either order, any spaces
    /// around the comma, each once; nil when anything else is there.
    static func parse(_ header: String) -> (token: Substring, key: Substring)? {
        guard header.utf8.count <= maxHeaderLength else { return nil }
        let text = Substring(header)
        guard let space = text.firstIndex(where: { $0 == " " }), text[..<space].lowercased() == "vapid" else { return nil }
        var token: Substring?
        var key: Substring?
        for part in text[space...].split(separator: ",", omittingEmptySubsequences: false) {
            let item = part.trimmingSpaces
            guard let equals = item.firstIndex(of: "=") else { return nil }
            let value = item[item.index(after: equals)...]
            guard !value.isEmpty else { return nil }
            switch item[..<equals].lowercased() {
            case "t" where token == nil: token = value
            case "k" where key == nil: key = value
            default: return nil
            }
        }
        guard let token, let key else { return nil }
        return (token, key)
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingSpaces: Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
