import PushlineCore
import Testing

/// The SMS part count against hand-computed cases (3GPP TS 23.038): GSM-7 160 septets in one
/// part, 153 per part of many, escape pairs never split; UCS-2 70 code units, 67 per part of
/// many, surrogate pairs never split. Every expected value below is worked out in its comment.
@Suite("SMS segments")
struct SMSSegmentsTests {
    private func count(_ text: String) -> SMSSegments { SMSSegments(utf8: Array(text.utf8)) }
    private func gsm(_ parts: Int, _ units: Int) -> SMSSegments { SMSSegments(encoding: .gsm7, parts: parts, units: units) }
    private func ucs(_ parts: Int, _ units: Int) -> SMSSegments { SMSSegments(encoding: .ucs2, parts: parts, units: units) }
    private func a(_ n: Int) -> String { String(repeating: "a", count: n) }

    /// GSM 03.38's default alphabet in table order, 0x00…0x7F without the escape at 0x1B.
    static let basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ"
        + " !\"#¤%&'()*+,-./0123456789:;<=>?"
        + "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§"
        + "¿abcdefghijklmnopqrstuvwxyzäöñüà"
    /// Its extension table: form feed, ^ { } \ [ ~ ] | €.
    static let extensionTable = "\u{0C}^{}\\[~]|€"

    @Test func plainGSM7() {
        #expect(count(a(1)) == gsm(1, 1))
        #expect(count(a(160)) == gsm(1, 160))     // fits one part
        #expect(count(a(161)) == gsm(2, 161))     // 153 + 8
        #expect(count(a(306)) == gsm(2, 306))     // 153 + 153
        #expect(count(a(307)) == gsm(3, 307))     // 153 + 153 + 1
        #expect(count(a(1600)) == gsm(11, 1600))  // 10 × 153 = 1530 < 1600 ≤ 1683 = 11 × 153
    }

    /// An empty text is one (empty) part: what a gateway sends for it.
    @Test func emptyTextIsOneGSM7Part() {
        #expect(count("") == gsm(1, 0))
        #expect(SMSSegments(utf8: []) == gsm(1, 0))
    }

    @Test func theDefaultAlphabetIsOneSeptetEach() {
        #expect(Self.basic.unicodeScalars.count == 127)
        #expect(Set(Self.basic.unicodeScalars).count == 127)
        for scalar in Self.basic.unicodeScalars {
            #expect(SMSSegments.septets(scalar.value) == 1, "\(scalar.escaped(asASCII: true))")
            #expect(count(String(scalar)) == gsm(1, 1), "\(scalar.escaped(asASCII: true))")
        }
        #expect(count(Self.basic) == gsm(1, 127))
        // Non-ASCII letters take 2 UTF-8 bytes (Δ, Ω…) but one septet: 160 ü is one part.
        #expect(count(String(repeating: "ü", count: 160)) == gsm(1, 160))
        #expect(count(String(repeating: "Ω", count: 161)) == gsm(2, 161))
    }

    @Test func theExtensionTableIsTwoSeptetsEach() {
        #expect(Self.extensionTable.unicodeScalars.count == 10)
        for scalar in Self.extensionTable.unicodeScalars {
            #expect(SMSSegments.septets(scalar.value) == 2, "\(scalar.escaped(asASCII: true))")
            #expect(count(String(scalar)) == gsm(1, 2), "\(scalar.escaped(asASCII: true))")
        }
        #expect(count(Self.extensionTable) == gsm(1, 20))
        #expect(count("Price: 5€") == gsm(1, 10))                         // 8 + 2
        #expect(count(String(repeating: "€", count: 80)) == gsm(1, 160))  // exactly one part
        // 81 € = 162 septets: 76 pairs fill 152 of a part's 153, the 77th starts the next part.
        #expect(count(String(repeating: "€", count: 81)) == gsm(2, 162))
        // 153 € = 306 septets: ceil(306 / 153) would say 2, but 76 + 76 + 1 pairs is 3 parts.
        #expect(count(String(repeating: "€", count: 153)) == gsm(3, 306))
    }

    /// The escape pair never straddles a part boundary.
    @Test func anEscapePairIsNotSplitAcrossParts() {
        // 152 a, €, 152 a = 306 septets: part 1 is 152 a (one septet left, too small for the
        // pair), part 2 is € + 151 a = 153, part 3 is the last a. ceil(306 / 153) = 2 is wrong.
        #expect(count(a(152) + "€" + a(152)) == gsm(3, 306))
        #expect(count(a(152) + "{" + a(152)) == gsm(3, 306))
        // 151 a, €, 153 a = 306: the pair ends part 1 exactly (151 + 2 = 153); part 2 is 153 a.
        #expect(count(a(151) + "€" + a(153)) == gsm(2, 306))
        // 152 a, €, 7 a = 161: part 1 is 152 a, part 2 is € + 7 a.
        #expect(count(a(152) + "€" + a(7)) == gsm(2, 161))
        // One part holds 160 septets with no header, so a pair at 159–160 is fine.
        #expect(count(a(158) + "€") == gsm(1, 160))
        #expect(count(a(159) + "€") == gsm(2, 161))
    }

    @Test func oneCharacterOutsideGSM7SwitchesToUCS2() {
        // ü is GSM-7, ú is not; every character then costs one UTF-16 unit (€ too, no escape).
        #expect(count("ü").encoding == .gsm7)
        #expect(count("ú") == ucs(1, 1))
        #expect(count("ú" + a(69)) == ucs(1, 70))    // fits one part
        #expect(count("ú" + a(70)) == ucs(2, 71))    // 67 + 4
        #expect(count("ú" + a(133)) == ucs(2, 134))  // 67 + 67
        #expect(count("ú" + a(134)) == ucs(3, 135))  // 67 + 67 + 1
        #expect(count(a(159) + "ú") == ucs(3, 160))  // 67 + 67 + 26
        #expect(count("ú" + String(repeating: "€", count: 69)) == ucs(1, 70))
        // The truncated 1600-character SMS: 1599 ü and "…" (not GSM-7) = 1600 units;
        // 23 × 67 = 1541 < 1600 ≤ 1608 = 24 × 67.
        #expect(count(String(repeating: "ü", count: 1599) + "…") == ucs(24, 1600))
    }

    @Test(arguments: ["`", "\t", "\u{7F}", "\u{00}", "\u{A0}", "ç", "Ä\u{308}", "α", "Ё", "中", "\u{2019}", "😀"])
    func charactersOutsideGSM7(_ text: String) {
        #expect(count(text).encoding == .ucs2, "\(text.unicodeScalars.map { $0.escaped(asASCII: true) })")
        #expect(count("Hello " + text).encoding == .ucs2)
    }

    @Test func backtickIsUCS2() {
        #expect(count("`") == ucs(1, 1))
        #expect(count("run `ls`" + a(63)) == ucs(2, 71))  // 8 + 63 = 71 units
    }

    /// Characters outside the BMP are surrogate pairs: 2 units, never split across parts.
    @Test func surrogatePairsCountTwoAndAreNotSplit() {
        #expect(count("😀") == ucs(1, 2))
        #expect(count(String(repeating: "😀", count: 35)) == ucs(1, 70))
        // 36 emoji = 72 units: 33 pairs fill 66 of 67, the 34th starts part 2 (3 pairs).
        #expect(count(String(repeating: "😀", count: 36)) == ucs(2, 72))
        // 67 emoji = 134 units: ceil(134 / 67) would say 2, but 33 + 33 + 1 pairs is 3 parts.
        #expect(count(String(repeating: "😀", count: 67)) == ucs(3, 134))
        // 66 a, 😀, 66 a = 134: part 1 is 66 a, part 2 is 😀 + 65 a = 67, part 3 is one a.
        #expect(count(a(66) + "😀" + a(66)) == ucs(3, 134))
        // 65 a, 😀, 67 a = 134: the pair ends part 1 exactly; part 2 is 67 a.
        #expect(count(a(65) + "😀" + a(67)) == ucs(2, 134))
        // A flag is two regional indicators, each outside the BMP: 4 units.
        #expect(count("🇵🇹") == ucs(1, 4))
    }

    /// Exactly 127 scalars are one septet and 10 are two, over all of Unicode: with the two tests
    /// above, the table is GSM 03.38's and nothing else. Every scalar also goes through the UTF-8
    /// path, which must agree with the table and with UTF-16's length.
    @Test func theTableOverAllOfUnicode() {
        var ones = 0, twos = 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4)
        var mismatches = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let septets = SMSSegments.septets(value)
            if septets == 1 { ones += 1 } else if septets == 2 { twos += 1 }
            bytes.removeAll(keepingCapacity: true)
            UTF8.encode(scalar) { bytes.append($0) }
            let expected = septets > 0 ? gsm(1, septets) : ucs(1, UTF16.width(scalar))
            if SMSSegments(utf8: bytes) != expected { mismatches += 1 }
        }
        #expect(ones == 127)
        #expect(twos == 10)
        #expect(mismatches == 0)
    }

    /// Ill-formed UTF-8 (never written by the encoders) counts one U+FFFD per maximal subpart,
    /// as Swift decodes it.
    @Test(arguments: [
        [0x61, 0xFF], [0xE2, 0x82], [0xE2, 0x82, 0x61], [0xF0, 0x80, 0x80], [0xED, 0xA0, 0x80],
        [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98], [0x80, 0x80], [0xC3],
    ] as [[UInt8]])
    func illFormedUTF8(_ bytes: [UInt8]) {
        let units = String(decoding: bytes, as: UTF8.self).utf16.count
        #expect(SMSSegments(utf8: bytes) == ucs(1, units))
    }

    @Test func encodingNames() {
        #expect(SMSSegments.Encoding.gsm7.name.description == "GSM-7")
        #expect(SMSSegments.Encoding.ucs2.name.description == "UCS-2")
    }
}
