/// How many SMS parts a text becomes and in which encoding (3GPP TS 23.038 / GSM 03.38).
///
/// - GSM-7 when every character is in the default alphabet (1 septet) or its extension table
///   (`^ { } \ [ ~ ] |`, `€` and form feed: an escape and a septet, 2 septets). One part holds
///   160 septets; a concatenated message holds 153 per part (the user data header takes the
///   rest), and an escape pair is never split: a part with one septet of room left ends there.
/// - UCS-2 (UTF-16 on every gateway today) as soon as one character is outside GSM-7. One part
///   holds 70 code units, 67 per part when concatenated; a character outside the BMP is a
///   surrogate pair (2 units), never split across parts.
/// - An empty text is 1 GSM-7 part: what an SMS gateway sends (and bills) for it. The encoders do
///   not refuse an empty SMS text, so the count says what it costs rather than hiding it.
///
/// The count reads UTF-8 bytes once, left to right: O(n), nothing allocated, no `String` built.
/// Input is expected to be valid UTF-8 (every text the encoders write is); an ill-formed
/// sequence counts as U+FFFD (not GSM-7, 1 unit) per maximal subpart, as Swift's decoding does.
public struct SMSSegments: Sendable, Equatable, CustomStringConvertible {
    public enum Encoding: Sendable, Equatable {
        case gsm7
        case ucs2

        /// The name written in webhook bodies: `GSM-7` or `UCS-2`.
        public var name: StaticString {
            switch self {
            case .gsm7: "GSM-7"
            case .ucs2: "UCS-2"
            }
        }
    }

    public var encoding: Encoding
    /// Parts the text is sent as (at least 1).
    public var parts: Int
    /// Septets (GSM-7) or UTF-16 code units (UCS-2) in the whole text.
    public var units: Int

    public init(encoding: Encoding, parts: Int, units: Int) {
        self.encoding = encoding
        self.parts = parts
        self.units = units
    }

    public var description: String { "\(encoding.name) \(parts) part(s), \(units) units" }

    public static let gsm7SinglePart = 160
    public static let gsm7PartOfMany = 153
    public static let ucs2SinglePart = 70
    public static let ucs2PartOfMany = 67

    public init(utf8 text: [UInt8]) {
        self = text.withUnsafeBytes { SMSSegments(utf8: $0) }
    }

    public init(utf8 text: UnsafeRawBufferPointer) {
        // Both encodings are followed in the same pass; GSM-7 stops at the first character outside it.
        var gsm = true
        var septets = 0
        var gsmParts = 1, gsmUsed = 0
        var codeUnits = 0
        var ucsParts = 1, ucsUsed = 0
        var i = 0
        let n = text.count
        while i < n {
            let (scalar, length) = Self.decode(text, at: i)
            i += length
            if gsm {
                let septetCost = Self.septets(scalar)
                if septetCost == 0 {
                    gsm = false
                } else {
                    septets += septetCost
                    if gsmUsed + septetCost > Self.gsm7PartOfMany {
                        gsmParts += 1
                        gsmUsed = septetCost
                    } else {
                        gsmUsed += septetCost
                    }
                }
            }
            let unitCost = scalar > 0xFFFF ? 2 : 1
            codeUnits += unitCost
            if ucsUsed + unitCost > Self.ucs2PartOfMany {
                ucsParts += 1
                ucsUsed = unitCost
            } else {
                ucsUsed += unitCost
            }
        }
        if gsm {
            self.init(encoding: .gsm7, parts: septets <= Self.gsm7SinglePart ? 1 : gsmParts, units: septets)
        } else {
            self.init(encoding: .ucs2, parts: codeUnits <= Self.ucs2SinglePart ? 1 : ucsParts, units: codeUnits)
        }
    }

    /// Septets for one character in GSM-7: 1 in the default alphabet, 2 in the extension table,
    /// 0 when GSM-7 cannot carry it.
    @inlinable
    public static func septets(_ scalar: UInt32) -> Int {
        switch scalar {
        // ASCII. Not GSM-7: the other C0 controls, DEL and the backtick.
        case 0x0A, 0x0D: 1                                            // LF, CR
        case 0x0C: 2                                                  // form feed (escape 0x0A)
        case 0x5B, 0x5C, 0x5D, 0x5E, 0x7B, 0x7C, 0x7D, 0x7E: 2        // [ \ ] ^ { | } ~
        case 0x60: 0                                                  // `
        case 0x20...0x7E: 1                                           // the rest of printable ASCII, $ @ _ included
        // Latin-1: ¡ £ ¤ ¥ § ¿ Ä Å Æ Ç É Ñ Ö Ø Ü ß à ä å æ è é ì ñ ò ö ø ù ü
        case 0xA1, 0xA3, 0xA4, 0xA5, 0xA7, 0xBF,
             0xC4, 0xC5, 0xC6, 0xC7, 0xC9, 0xD1, 0xD6, 0xD8, 0xDC, 0xDF,
             0xE0, 0xE4, 0xE5, 0xE6, 0xE8, 0xE9, 0xEC, 0xF1, 0xF2, 0xF6, 0xF8, 0xF9, 0xFC: 1
        // Greek capitals: Γ Δ Θ Λ Ξ Π Σ Φ Ψ Ω
        case 0x393, 0x394, 0x398, 0x39B, 0x39E, 0x3A0, 0x3A3, 0x3A6, 0x3A8, 0x3A9: 1
        case 0x20AC: 2                                                // € (escape 0x65)
        default: 0
        }
    }

    /// The scalar at `i` and its length in bytes; U+FFFD and the maximal subpart's length when the
    /// bytes there are not well-formed UTF-8 (Unicode table 3-7).
    @inline(__always)
    static func decode(_ text: UnsafeRawBufferPointer, at i: Int) -> (UInt32, Int) {
        let replacement: UInt32 = 0xFFFD
        let b0 = text[i]
        if b0 < 0x80 { return (UInt32(b0), 1) }
        let count: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF   // the second byte's range
        var scalar: UInt32
        switch b0 {
        case 0xC2...0xDF: count = 2; scalar = UInt32(b0 & 0x1F)
        case 0xE0: count = 3; scalar = 0; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 3; scalar = UInt32(b0 & 0x0F)
        case 0xED: count = 3; scalar = 0xD; high = 0x9F
        case 0xF0: count = 4; scalar = 0; low = 0x90
        case 0xF1...0xF3: count = 4; scalar = UInt32(b0 & 0x07)
        case 0xF4: count = 4; scalar = 4; high = 0x8F
        default: return (replacement, 1)
        }
        for k in 1..<count {
            guard i + k < text.count else { return (replacement, k) }
            let b = text[i + k]
            let inRange = k == 1 ? (low...high).contains(b) : (0x80...0xBF).contains(b)
            guard inRange else { return (replacement, k) }
            scalar = scalar << 6 | UInt32(b & 0x3F)
        }
        return (scalar, count)
    }
}
