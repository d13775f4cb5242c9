/// JSON string escaping (RFC 8259) that always yields valid UTF-8.
///
/// Besides the mandatory escapes (`"`, `\`, U+0000–U+001F) it escapes U+2028 and U+2029, which are
/// valid JSON but break JavaScript consumers, and it replaces every invalid UTF-8 sequence with
/// U+FFFD (one replacement per maximal invalid subpart, as the Unicode standard recommends), so no
/// input can make the writer emit invalid UTF-8 or invalid JSON.
public enum JSONEscaper {
    /// Appends `text` escaped as JSON string content (no surrounding quotes).
    @inlinable
    public static func appendEscaped(_ text: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        guard let base = text.baseAddress, text.count > 0 else { return }
        // Fast path: copy runs of bytes that need nothing, printable ASCII other than `"` and `\`
        // and valid UTF-8 sequences other than U+2028 and U+2029, with one append per run: a
        // name like "François" is one append, not three.
        var runStart = 0
        var i = 0
        let n = text.count
        while i < n {
            // Eight bytes at a time while none needs a look (a quote, a backslash, a control
            // character or a non-ASCII byte); the lowest flagged byte is always a real one.
            while i &+ 8 <= n {
                let special = JSONParser.specialBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                if special != 0 {
                    i &+= special.trailingZeroBitCount >> 3
                    break
                }
                i &+= 8
            }
            guard i < n else { break }
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            if b >= 0x20 && b != 0x22 && b != 0x5C && b < 0x80 {
                i &+= 1
                continue
            }
            if b >= 0x80 {
                let length = UTF8Validation.sequenceLength(base, i, n)
                if length > 0 && !isLineOrParagraphSeparator(base, i, length) {
                    i &+= length
                    continue
                }
            }
            if i > runStart {
                out.append(contentsOf: UnsafeRawBufferPointer(start: base + runStart, count: i - runStart))
            }
            i = appendSlow(base, i, n, &out)
            runStart = i
        }
        if n > runStart {
            out.append(contentsOf: UnsafeRawBufferPointer(start: base + runStart, count: n - runStart))
        }
    }

    /// Whether the valid `length`-byte sequence at `i` is U+2028 or U+2029 (E2 80 A8 / A9):
    /// valid JSON, but JavaScript consumers break on them, so they are escaped.
    @inlinable @inline(__always)
    static func isLineOrParagraphSeparator(_ base: UnsafeRawPointer, _ i: Int, _ length: Int) -> Bool {
        guard length == 3, base.load(fromByteOffset: i, as: UInt8.self) == 0xE2,
              base.load(fromByteOffset: i &+ 1, as: UInt8.self) == 0x80 else { return false }
        let c = base.load(fromByteOffset: i &+ 2, as: UInt8.self)
        return c == 0xA8 || c == 0xA9
    }

    /// Handles one byte that needs attention at `i`; returns the index after what it consumed.
    @usableFromInline
    internal static func appendSlow(_ base: UnsafeRawPointer, _ i: Int, _ n: Int, _ out: inout [UInt8]) -> Int {
        let b = base.load(fromByteOffset: i, as: UInt8.self)
        switch b {
        case 0x22: out.append(0x5C); out.append(0x22); return i + 1
        case 0x5C: out.append(0x5C); out.append(0x5C); return i + 1
        case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n")); return i + 1
        case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r")); return i + 1
        case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t")); return i + 1
        case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b")); return i + 1
        case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f")); return i + 1
        case 0x00..<0x20:
            appendUnicodeEscape(UInt16(b), &out)
            return i + 1
        default:
            break
        }
        // Non-ASCII: validate one UTF-8 sequence.
        let length = UTF8Validation.sequenceLength(base, i, n)
        if length == 0 {
            out.append(contentsOf: replacementCharacter)
            return i + UTF8Validation.invalidSubpartLength(base, i, n)
        }
        if length == 3 && b == 0xE2 && base.load(fromByteOffset: i + 1, as: UInt8.self) == 0x80 {
            let c = base.load(fromByteOffset: i + 2, as: UInt8.self)
            if c == 0xA8 || c == 0xA9 {
                appendUnicodeEscape(c == 0xA8 ? 0x2028 : 0x2029, &out)
                return i + 3
            }
        }
        out.append(contentsOf: UnsafeRawBufferPointer(start: base + i, count: length))
        return i + length
    }

    /// Whether `appendEscaped` copies `text` as it is: valid UTF-8 holding no quote, backslash,
    /// control character, U+2028 or U+2029. Text known to pass (template text checked once at
    /// compile time) can be appended without an escaping pass (`RenderOutput.write(_:verbatim:)`).
    public static func leavesUnchanged(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let base = text.baseAddress else { return true }
        let n = text.count
        var i = 0
        while i < n {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            if b >= 0x20 && b != 0x22 && b != 0x5C && b < 0x80 {
                i &+= 1
                continue
            }
            guard b >= 0x80 else { return false }
            let length = UTF8Validation.sequenceLength(base, i, n)
            guard length > 0, !isLineOrParagraphSeparator(base, i, length) else { return false }
            i &+= length
        }
        return true
    }

    /// How many bytes `appendEscaped` writes for `text`, without writing them (the same rules:
    /// 2 for `"` `\\` and the short control escapes, 6 for other controls and U+2028/U+2029, 3 per
    /// invalid UTF-8 subpart, the byte count otherwise).
    public static func escapedLength(_ text: UnsafeRawBufferPointer) -> Int {
        guard let base = text.baseAddress else { return 0 }
        let n = text.count
        var length = 0
        var i = 0
        while i < n {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            switch b {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C:
                length &+= 2
                i &+= 1
            case 0x00..<0x20:
                length &+= 6
                i &+= 1
            case 0x20..<0x80:
                length &+= 1
                i &+= 1
            default:
                let sequence = UTF8Validation.sequenceLength(base, i, n)
                if sequence == 0 {
                    length &+= 3
                    i &+= UTF8Validation.invalidSubpartLength(base, i, n)
                } else if sequence == 3 && b == 0xE2 && base.load(fromByteOffset: i &+ 1, as: UInt8.self) == 0x80
                            && (base.load(fromByteOffset: i &+ 2, as: UInt8.self) | 1) == 0xA9 {
                    length &+= 6   // U+2028, U+2029
                    i &+= 3
                } else {
                    length &+= sequence
                    i &+= sequence
                }
            }
        }
        return length
    }

    @usableFromInline
    internal static let replacementCharacter: [UInt8] = [0xEF, 0xBF, 0xBD]

    @usableFromInline
    internal static func appendUnicodeEscape(_ unit: UInt16, _ out: inout [UInt8]) {
        let hex: StaticString = "0123456789abcdef"
        let digits = hex.utf8Start
        out.append(0x5C)
        out.append(UInt8(ascii: "u"))
        out.append(digits[Int(unit >> 12) & 0xF])
        out.append(digits[Int(unit >> 8) & 0xF])
        out.append(digits[Int(unit >> 4) & 0xF])
        out.append(digits[Int(unit) & 0xF])
    }
}

/// UTF-8 well-formedness per the Unicode standard, table 3-7 (no overlongs, no surrogates, ≤ U+10FFFF).
public enum UTF8Validation {
    /// Length of the valid sequence starting at `i`, or 0 when the bytes there are not valid UTF-8.
    @inlinable
    public static func sequenceLength(_ base: UnsafeRawPointer, _ i: Int, _ n: Int) -> Int {
        let b0 = base.load(fromByteOffset: i, as: UInt8.self)
        if b0 < 0x80 { return 1 }
        @inline(__always) func cont(_ k: Int) -> UInt8? {
            guard i + k < n else { return nil }
            let c = base.load(fromByteOffset: i + k, as: UInt8.self)
            return c & 0xC0 == 0x80 ? c : nil
        }
        switch b0 {
        case 0xC2...0xDF:
            return cont(1) != nil ? 2 : 0
        case 0xE0...0xEF:
            guard let b1 = cont(1) else { return 0 }
            if b0 == 0xE0 && b1 < 0xA0 { return 0 }   // overlong
            if b0 == 0xED && b1 > 0x9F { return 0 }   // UTF-16 surrogate
            return cont(2) != nil ? 3 : 0
        case 0xF0...0xF4:
            guard let b1 = cont(1) else { return 0 }
            if b0 == 0xF0 && b1 < 0x90 { return 0 }   // overlong
            if b0 == 0xF4 && b1 > 0x8F { return 0 }   // above U+10FFFF
            return cont(2) != nil && cont(3) != nil ? 4 : 0
        default:
            return 0
        }
    }

    /// Length of the maximal invalid subpart at `i` (at least 1): the bytes one U+FFFD replaces.
    public static func invalidSubpartLength(_ base: UnsafeRawPointer, _ i: Int, _ n: Int) -> Int {
        let b0 = base.load(fromByteOffset: i, as: UInt8.self)
        let expected: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: expected = 2
        case 0xE0: expected = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: expected = 3
        case 0xED: expected = 3; high = 0x9F
        case 0xF0: expected = 4; low = 0x90
        case 0xF1...0xF3: expected = 4
        case 0xF4: expected = 4; high = 0x8F
        default: return 1
        }
        var k = 1
        while k < expected && i + k < n {
            let c = base.load(fromByteOffset: i + k, as: UInt8.self)
            if c < low || c > high { break }
            low = 0x80; high = 0xBF
            k += 1
        }
        return k
    }

    /// Whether all of `bytes` is well-formed UTF-8.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var i = 0
        let n = bytes.count
        while i < n {
            if base.load(fromByteOffset: i, as: UInt8.self) < 0x80 { i += 1; continue }
            let length = sequenceLength(base, i, n)
            if length == 0 { return false }
            i += length
        }
        return true
    }
}
