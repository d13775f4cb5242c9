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

    // APNs tokens and ADM ids become a URL path segment. Their alphabets (hex; letters, digits,
    // '-', '_', '.') and lengths (16 or more) are inside `WireValue.pathSegmentProblem`'s rule, so
    // a token that passes here passes it too (WireValueTests checks it) without a second scan per
    // device.

    public static func validateAPNs(_ token: UnsafeRawBufferPointer) -> String? {
        guard apnsLength.contains(token.count) else {
            return "APNs token must be \(apnsLength.lowerBound) to \(apnsLength.upperBound) hex digits, got \(token.count) characters"
        }
        guard token.count % 2 == 0 else { return "APNs token must have an even number of hex digits" }
        if let bad = firstByte(of: token, outside: hexAlphabet) {
            return "APNs token must be hex digits only (found \(describe(bad)))"
        }
        return nil
    }

    public static func validateFCM(_ token: UnsafeRawBufferPointer) -> String? {
        guard fcmLength.contains(token.count) else {
            return "FCM token must be \(fcmLength.lowerBound) to \(fcmLength.upperBound) characters, got \(token.count)"
        }
        if let bad = firstByte(of: token, outside: fcmAlphabet) {
            return "FCM token may hold only letters, digits, '-', '_' and ':' (found \(describe(bad)))"
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

    /// SMS and MMS numbers in E.164: `+`, a country code that does not start with 0, at most
    /// 15 digits in all (ITU-T E.164), nothing else (no spaces or dashes: gateways differ on them).
    public static func validatePhoneNumber(_ address: UnsafeRawBufferPointer) -> String? {
        guard address.first == UInt8(ascii: "+") else {
            return "SMS address must be an E.164 number starting with '+' (+15551234567)"
        }
        let digits = address.dropFirst()
        guard (8...15).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return "SMS address must be '+' and 8 to 15 digits (E.164), got \(address.count) characters"
        }
        guard digits.first != UInt8(ascii: "0") else { return "SMS address: E.164 country codes do not start with 0" }
        return nil
    }

    /// A deliberately plain email check: one `@`, a local part of 1 to 64 bytes, a domain with a dot
    /// and no empty label, at most 254 bytes, no spaces, controls, quotes or angle brackets (the
    /// address lands in a JSON body and, at the gateway, in a header).
    public static func validateEmail(_ address: UnsafeRawBufferPointer) -> String? {
        guard address.count <= 254 else { return "email address is longer than 254 characters" }
        for b in address where b <= 0x20 || b == 0x7F || b == UInt8(ascii: "\"") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">") || b == UInt8(ascii: ",") || b == UInt8(ascii: ";") {
            return "email address holds a character not allowed here (\(describe(b)))"
        }
        guard let at = address.firstIndex(of: UInt8(ascii: "@")), address.lastIndex(of: UInt8(ascii: "@")) == at else {
            return "email address must contain exactly one '@'"
        }
        let local = address[..<at], domain = address[(at + 1)...]
        guard (1...64).contains(local.count) else { return "email address needs a local part of 1 to 64 characters before '@'" }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.first != UInt8(ascii: "-") && $0.last != UInt8(ascii: "-") }) else {
            return "email address needs a domain such as example.com after '@'"
        }
        return nil
    }

    /// Open-channel addresses are the channel's own user ids: 1 to 1024 bytes of valid UTF-8
    /// without control characters.
    public static func validateOpenAddress(_ address: UnsafeRawBufferPointer) -> String? {
        guard (1...1024).contains(address.count) else { return "open-channel address must be 1 to 1024 bytes, got \(address.count)" }
        for b in address where b < 0x20 || b == 0x7F {
            return "open-channel address holds a control character (\(describe(b)))"
        }
        return nil
    }

    /// A set of bytes as a 256-entry table: the scan is one load and one OR per byte with no
    /// branch, and only a token that fails is scanned again to name the offending byte.
    struct ByteSet: Sendable {
        private var allowed: [UInt8] = Array(repeating: 0, count: 256)

        init(_ ranges: [ClosedRange<UInt8>]) {
            for range in ranges { for b in range { allowed[Int(b)] = 1 } }
        }

        func contains(_ b: UInt8) -> Bool { allowed[Int(b)] == 1 }

        /// The first byte of `bytes` not in the set, if any.
        func firstOutside(_ bytes: UnsafeRawBufferPointer) -> UInt8? {
            let clean: Bool = allowed.withUnsafeBufferPointer { table in
                var all: UInt8 = 1
                for b in bytes { all &= table[Int(b)] }
                return all == 1
            }
            if clean { return nil }
            return bytes.first { !contains($0) }
        }
    }

    static let hexAlphabet = ByteSet([0x30...0x39, 0x41...0x46, 0x61...0x66])
    static let fcmAlphabet = ByteSet([0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D...0x2D, 0x5F...0x5F, 0x3A...0x3A])

    @inline(__always) static func firstByte(of bytes: UnsafeRawBufferPointer, outside set: ByteSet) -> UInt8? {
        set.firstOutside(bytes)
    }

    /// An ASCII hex digit (tokens here, `#rrggbb` colors in pipeline validation).
    @inline(__always) public static func isHex(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
    }

    @inline(__always) static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    static func describe(_ b: UInt8) -> String {
        b >= 0x21 && b < 0x7F ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16, uppercase: true))"
    }
}
