/// What a device address must look like before it reaches a URL path, a header or a body.
///
/// A token that fails these rules becomes a reject for that device: it is never sent, and the
/// rest of the record still is.
public enum DeviceTokenRules {
    /// APNs tokens are hex of variable length (32 bytes today, longer in future): only hex digits,
    /// an even count, within sane bounds. The token goes into the request path, so nothing else passes.
    public static let apnsLength = 16...200

    /// FCM registration tokens: base64url-like characters plus `:`, well over 100 characters in
    /// practice; a generous lower bound still catches cut-off tokens from broken exports.
    public static let fcmLength = 32...4096

    /// ADM registration ids (`amzn1.adm-registration.v3.…`).
    public static let admLength = 16...2048

    public static func validateAPNs(_ token: UnsafeRawBufferPointer) -> String? {
        guard apnsLength.contains(token.count) else {
            return "APNs token must be \(apnsLength.lowerBound) to \(apnsLength.upperBound) hex digits, got \(token.count) characters"
        }
        guard token.count % 2 == 0 else { return "APNs token must have an even number of hex digits" }
        for b in token where !isHex(b) {
            return "APNs token must be hex digits only (found \(describe(b)))"
        }
        return nil
    }

    public static func validateFCM(_ token: UnsafeRawBufferPointer) -> String? {
        guard fcmLength.contains(token.count) else {
            return "FCM token must be \(fcmLength.lowerBound) to \(fcmLength.upperBound) characters, got \(token.count)"
        }
        for b in token where !(isAlphanumeric(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ":")) {
            return "FCM token may hold only letters, digits, '-', '_' and ':' (found \(describe(b)))"
        }
        return nil
    }

    public static func validateADM(_ token: UnsafeRawBufferPointer) -> String? {
        guard admLength.contains(token.count) else {
            return "ADM registration id must be \(admLength.lowerBound) to \(admLength.upperBound) characters, got \(token.count)"
        }
        for b in token where !(isAlphanumeric(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".")) {
            return "ADM registration id may hold only letters, digits, '-', '_' and '.' (found \(describe(b)))"
        }
        return nil
    }

    /// Web Push subscription: an https endpoint and the two keys RFC 8291 needs, base64url.
    public static func validateWebPushEndpoint(_ endpoint: UnsafeRawBufferPointer) -> String? {
        guard endpoint.count <= 2048 else { return "Web Push endpoint is longer than 2048 characters" }
        guard endpoint.starts(with: "https://".utf8), endpoint.count > 8 else {
            return "Web Push endpoint must be an https:// URL"
        }
        for b in endpoint where b <= 0x20 || b >= 0x7F || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
            return "Web Push endpoint holds a character not allowed in a URL (\(describe(b)))"
        }
        return nil
    }

    /// `p256dh` is an uncompressed P-256 point (65 bytes → 87 base64url characters), `auth` 16 bytes (22).
    public static func validateWebPushKey(_ key: UnsafeRawBufferPointer, name: String, decodedBytes: Int) -> String? {
        var body = key.count
        while body > 0 && key[body - 1] == UInt8(ascii: "=") { body -= 1 }
        for b in key[0..<body] where !(isAlphanumeric(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")) {
            return "Web Push key '\(name)' must be base64url (found \(describe(b)))"
        }
        let expected = (decodedBytes * 8 + 5) / 6
        guard body == expected else {
            return "Web Push key '\(name)' must encode \(decodedBytes) bytes (\(expected) base64url characters), got \(body)"
        }
        return nil
    }

    @inline(__always) static func isHex(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
    }

    @inline(__always) static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    static func describe(_ b: UInt8) -> String {
        b >= 0x21 && b < 0x7F ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16, uppercase: true))"
    }
}
