/// The validating pass that builds a document's tape (RFC 8259 grammar, UTF-8 strings).
///
/// It is a loop, not a recursive descent: the open containers are chained through the tape, so
/// nesting costs neither call stack nor extra memory, and `maxDepth` is a policy, not a safeguard.
@usableFromInline
internal enum JSONParser {
    /// Why a fill stopped: the text is invalid, or the tape estimate was too small.
    private enum Stop: Error {
        case invalid(JSONParseError)
        /// The tape filled at this byte offset (where the next value starts).
        case tapeFull(at: Int)
    }

    /// The largest text indexed: its offsets fit 32 bits and a container's count (at most half
    /// the text's bytes) fits the 29 bits `JSONTapeEntry` keeps beside the kind. Audience lines
    /// are at most 64 MiB (`limits.max_line_bytes`).
    static let maxTextBytes = 1 << 30 - 1

    /// Validates `text` into the tape memory `tape(capacity)` gives (room for at least
    /// `capacity` entries); returns whether a string holds a lone surrogate escape.
    ///
    /// A value takes at least one byte and every value but the root follows its own `[`, `,` or
    /// `:`, so a text of n bytes holds at most n/2 + 1 values. That bound is used directly for
    /// small texts; larger ones start from an estimate that fits realistic records (a value every
    /// 6 bytes or more) and are indexed again with the bound in the rare dense case, rather than
    /// keeping 8 bytes of tape per input byte for every document.
    static func index(
        _ text: UnsafeRawBufferPointer, maxDepth: Int, tape: (Int) -> UnsafeMutablePointer<JSONTapeEntry>
    ) throws(JSONParseError) -> Bool {
        guard let base = text.baseAddress, !text.isEmpty else {
            throw JSONParseError(offset: 0, message: "empty text, expected a JSON value")
        }
        guard text.count <= maxTextBytes else {
            throw JSONParseError(offset: 0, message: "text larger than 1 GiB")
        }
        let bound = text.count / 2 + 1
        let estimate = text.count <= 64 * 1024 ? bound : text.count / 6 + 16
        let depthLimit = max(0, maxDepth)
        var lone = false
        do throws(Stop) {
            do throws(Stop) {
                _ = try fill(base, text.count, tape: tape(estimate), capacity: estimate, maxDepth: depthLimit, loneSurrogates: &lone)
            } catch .tapeFull(_) {
                lone = false
                _ = try fill(base, text.count, tape: tape(bound), capacity: bound, maxDepth: depthLimit, loneSurrogates: &lone)
            }
            return lone
        } catch {
            switch error {
            case .invalid(let error): throw error
            case .tapeFull(let offset):
                // No valid text of n bytes holds more than n/2 + 1 values, so this one is invalid
                // (`[[x`: the opening brackets fill the tape before the bad value is reached).
                throw JSONParseError(offset: offset, message: "more values open than a valid text of \(text.count) bytes can hold")
            }
        }
    }

    /// Parses the whole text into `tape`; returns the number of entries written.
    private static func fill(
        _ p: UnsafeRawPointer, _ n: Int,
        tape: UnsafeMutablePointer<JSONTapeEntry>, capacity: Int, maxDepth: Int, loneSurrogates: inout Bool
    ) throws(Stop) -> Int {
        @inline(__always) func byte(_ k: Int) -> UInt8 { p.load(fromByteOffset: k, as: UInt8.self) }
        @inline(__always) func fail(_ offset: Int, _ message: String) -> Stop {
            .invalid(JSONParseError(offset: offset, message: message))
        }
        @inline(__always) func skipWhitespace(_ k: Int) -> Int { JSONParser.skipWhitespace(p, n, k) }

        // The open containers form a stack threaded through the tape itself: until a container
        // closes, its `next` holds the tape index of the container around it. No other memory.
        var t = 0          // tape entries written
        var depth = 0      // open containers
        var top = 0        // tape index of the innermost open container (when depth > 0)
        var inObject = false
        var i = skipWhitespace(0)

        while true {
            // `i` is on the first byte of a value.
            guard i < n else { throw fail(i, "unexpected end of text, expected a value") }
            guard t < capacity else { throw .tapeFull(at: i) }
            if depth > 0 { tape[top].kindAndAux &+= 1 }
            let c = byte(i)
            switch c {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { throw fail(i, "containers nested deeper than \(maxDepth) levels") }
                tape[t] = JSONTapeEntry(start: UInt32(truncatingIfNeeded: i), end: 0, next: UInt32(truncatingIfNeeded: top), kind: c == UInt8(ascii: "{") ? .object : .array, aux: 0)
                top = t
                depth &+= 1
                t &+= 1
                inObject = c == UInt8(ascii: "{")
                i = skipWhitespace(i &+ 1)
                let closer = inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if i < n && byte(i) == closer {
                    break   // empty: the loop below closes it
                }
                if inObject { i = try readKey(p, n, i, tape: tape, count: &t, capacity: capacity, loneSurrogates: &loneSurrogates) }
                continue
            case UInt8(ascii: "\""):
                let (end, flags) = try scanString(p, n, i)
                tape[t] = JSONTapeEntry(start: UInt32(truncatingIfNeeded: i), end: UInt32(truncatingIfNeeded: end), next: UInt32(truncatingIfNeeded: t &+ 1), kind: .string, aux: flags)
                if flags & JSONTapeEntry.loneSurrogate != 0 { loneSurrogates = true }
                t &+= 1
                i = end
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (end, integer) = try scanNumber(p, n, i)
                tape[t] = JSONTapeEntry(start: UInt32(truncatingIfNeeded: i), end: UInt32(truncatingIfNeeded: end), next: UInt32(truncatingIfNeeded: t &+ 1), kind: .number, aux: integer ? 1 : 0)
                t &+= 1
                i = end
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                let end = try scanLiteral(p, n, i)
                tape[t] = JSONTapeEntry(start: UInt32(truncatingIfNeeded: i), end: UInt32(truncatingIfNeeded: end), next: UInt32(truncatingIfNeeded: t &+ 1), kind: c == UInt8(ascii: "t") ? .true : c == UInt8(ascii: "f") ? .false : .null, aux: 0)
                t &+= 1
                i = end
            default:
                throw fail(i, "unexpected \(describe(c)), expected a value")
            }

            // A value just ended at `i` (or `i` is on the closer of an empty container).
            while true {
                if depth == 0 {
                    i = skipWhitespace(i)
                    guard i == n else { throw fail(i, "unexpected \(describe(byte(i))) after the JSON value") }
                    return t
                }
                i = skipWhitespace(i)
                guard i < n else {
                    throw fail(i, inObject ? "unexpected end of text inside an object" : "unexpected end of text inside an array")
                }
                let c = byte(i)
                if c == UInt8(ascii: ",") {
                    i = skipWhitespace(i &+ 1)
                    if inObject { i = try readKey(p, n, i, tape: tape, count: &t, capacity: capacity, loneSurrogates: &loneSurrogates) }
                    break
                }
                guard c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw fail(i, inObject ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element")
                }
                depth &-= 1
                let closed = top
                top = Int(tape[closed].next)
                tape[closed].end = UInt32(truncatingIfNeeded: i &+ 1)
                tape[closed].next = UInt32(truncatingIfNeeded: t)
                i &+= 1
                if depth > 0 {
                    inObject = byte(Int(tape[top].start)) == UInt8(ascii: "{")
                }
            }
        }
    }

    @inline(__always)
    private static func skipWhitespace(_ p: UnsafeRawPointer, _ n: Int, _ k: Int) -> Int {
        var k = k
        while k < n {
            let b = p.load(fromByteOffset: k, as: UInt8.self)
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { break }
            k &+= 1
        }
        return k
    }

    /// Reads `"key"` `:` at `i` (after whitespace) into the tape; returns the offset of the
    /// member's value. (A static function: a local one capturing the parser's variables would
    /// box them on the heap.)
    @inline(__always)
    private static func readKey(
        _ p: UnsafeRawPointer, _ n: Int, _ i: Int,
        tape: UnsafeMutablePointer<JSONTapeEntry>, count t: inout Int, capacity: Int, loneSurrogates: inout Bool
    ) throws(Stop) -> Int {
        guard i < n, p.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "\"") else {
            throw .invalid(JSONParseError(offset: i, message: i < n ? "expected a string key" : "unexpected end of text, expected a string key"))
        }
        guard t < capacity else { throw .tapeFull(at: i) }
        let (end, flags) = try scanString(p, n, i)
        tape[t] = JSONTapeEntry(start: UInt32(truncatingIfNeeded: i), end: UInt32(truncatingIfNeeded: end), next: UInt32(truncatingIfNeeded: t &+ 1), kind: .string, aux: flags)
        if flags & JSONTapeEntry.loneSurrogate != 0 { loneSurrogates = true }
        t &+= 1
        let colon = skipWhitespace(p, n, end)
        guard colon < n, p.load(fromByteOffset: colon, as: UInt8.self) == UInt8(ascii: ":") else {
            throw .invalid(JSONParseError(offset: colon, message: "expected ':' after an object key"))
        }
        return skipWhitespace(p, n, colon &+ 1)
    }

    /// Scans the string whose opening quote is at `i`; returns the offset past its closing quote
    /// and its tape flags (`JSONTapeEntry.escaped`, `.loneSurrogate`, `.lineSeparator`).
    @inline(__always)
    private static func scanString(_ p: UnsafeRawPointer, _ n: Int, _ i: Int) throws(Stop) -> (end: Int, flags: UInt32) {
        var k = i &+ 1
        var flags: UInt32 = 0
        while true {
            // Eight bytes at a time while none needs a look: a quote, a backslash, a control
            // character or a non-ASCII byte. The lowest flagged byte is always a real one.
            while k &+ 8 <= n {
                let word = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: k, as: UInt64.self))
                let special = specialBytes(word)
                if special != 0 {
                    k &+= special.trailingZeroBitCount >> 3
                    break
                }
                k &+= 8
            }
            guard k < n else {
                throw .invalid(JSONParseError(offset: i, message: "unterminated string"))
            }
            let b = p.load(fromByteOffset: k, as: UInt8.self)
            if b == UInt8(ascii: "\"") {
                return (k &+ 1, flags)
            } else if b == UInt8(ascii: "\\") {
                flags |= JSONTapeEntry.escaped
                k = try scanEscape(p, n, k, flags: &flags)
            } else if b < 0x20 {
                throw .invalid(JSONParseError(offset: k, message: "unescaped control character \(describe(b)) in a string"))
            } else if b >= 0x80 {
                let length = UTF8Validation.sequenceLength(p, k, n)
                guard length > 0 else {
                    throw .invalid(JSONParseError(offset: k, message: "invalid UTF-8 in a string"))
                }
                if JSONEscaper.isLineOrParagraphSeparator(p, k, length) { flags |= JSONTapeEntry.lineSeparator }
                k &+= length
            } else {
                k &+= 1
            }
        }
    }

    /// Flags (high bit of each byte) the bytes of `w` that are `"`, `\`, below 0x20 or above 0x7F.
    @inlinable @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
        let quote = zeroBytes(w ^ (ones &* 0x22))
        let backslash = zeroBytes(w ^ (ones &* 0x5C))
        let control = (w &- ones &* 0x20) & ~w & highs
        return quote | backslash | control | (w & highs)
    }

    /// Checks the escape whose backslash is at `k`; returns the offset after it. A `\u` surrogate
    /// that is not half of a high-low pair sets `JSONTapeEntry.loneSurrogate` in `flags`: such a
    /// string is valid JSON but no valid UTF-8 text, so it must never be copied as it stands.
    @inline(__always)
    private static func scanEscape(_ p: UnsafeRawPointer, _ n: Int, _ k: Int, flags: inout UInt32) throws(Stop) -> Int {
        guard k &+ 1 < n else {
            throw .invalid(JSONParseError(offset: k, message: "unterminated escape"))
        }
        switch p.load(fromByteOffset: k &+ 1, as: UInt8.self) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return k &+ 2
        case UInt8(ascii: "u"):
            guard k &+ 6 <= n, let unit = JSONStringDecoding.hex4(p + (k &+ 2)) else {
                throw .invalid(JSONParseError(offset: k, message: "\\u must be followed by four hex digits"))
            }
            switch unit {
            case 0xD800...0xDBFF:
                // Paired only with an escaped low surrogate right after it (as the decoder reads it).
                if k &+ 12 <= n,
                   p.load(fromByteOffset: k &+ 6, as: UInt8.self) == UInt8(ascii: "\\"),
                   p.load(fromByteOffset: k &+ 7, as: UInt8.self) == UInt8(ascii: "u"),
                   let low = JSONStringDecoding.hex4(p + (k &+ 8)), (0xDC00...0xDFFF).contains(low) {
                    return k &+ 12
                }
                flags |= JSONTapeEntry.loneSurrogate
            case 0xDC00...0xDFFF:
                flags |= JSONTapeEntry.loneSurrogate
            default:
                break
            }
            return k &+ 6
        default:
            throw .invalid(JSONParseError(offset: k, message: "invalid escape sequence"))
        }
    }

    /// Scans a number (RFC 8259: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`) at `i`;
    /// returns the offset after it and whether it is written as an integer.
    @inline(__always)
    private static func scanNumber(_ p: UnsafeRawPointer, _ n: Int, _ i: Int) throws(Stop) -> (end: Int, integer: Bool) {
        @inline(__always) func isDigit(_ k: Int) -> Bool {
            k < n && p.load(fromByteOffset: k, as: UInt8.self) &- UInt8(ascii: "0") < 10
        }
        @inline(__always) func digits(from k: Int, after what: String) throws(Stop) -> Int {
            guard isDigit(k) else {
                throw .invalid(JSONParseError(offset: k, message: "expected a digit \(what)"))
            }
            var k = k &+ 1
            while isDigit(k) { k &+= 1 }
            return k
        }
        var k = i
        if p.load(fromByteOffset: k, as: UInt8.self) == UInt8(ascii: "-") { k &+= 1 }
        if k < n && p.load(fromByteOffset: k, as: UInt8.self) == UInt8(ascii: "0") {
            k &+= 1   // a leading zero stands alone: what follows is checked as the next token
        } else {
            k = try digits(from: k, after: "in a number")
        }
        var integer = true
        if k < n && p.load(fromByteOffset: k, as: UInt8.self) == UInt8(ascii: ".") {
            integer = false
            k = try digits(from: k &+ 1, after: "after the decimal point")
        }
        if k < n && p.load(fromByteOffset: k, as: UInt8.self) | 0x20 == UInt8(ascii: "e") {
            integer = false
            k &+= 1
            if k < n {
                let sign = p.load(fromByteOffset: k, as: UInt8.self)
                if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { k &+= 1 }
            }
            k = try digits(from: k, after: "in the exponent")
        }
        return (k, integer)
    }

    /// Checks `true`, `false` or `null` at `i`; returns the offset after it.
    @inline(__always)
    private static func scanLiteral(_ p: UnsafeRawPointer, _ n: Int, _ i: Int) throws(Stop) -> Int {
        let literal: StaticString
        switch p.load(fromByteOffset: i, as: UInt8.self) {
        case UInt8(ascii: "t"): literal = "true"
        case UInt8(ascii: "f"): literal = "false"
        default: literal = "null"
        }
        let length = literal.utf8CodeUnitCount
        guard i &+ length <= n,
              UnsafeRawBufferPointer(start: p + i, count: length).elementsEqual(
                UnsafeRawBufferPointer(start: literal.utf8Start, count: length))
        else {
            throw .invalid(JSONParseError(offset: i, message: "invalid literal, expected \(literal)"))
        }
        return i &+ length
    }

    /// A byte named for an error message: printable ASCII quoted, anything else in hex.
    private static func describe(_ b: UInt8) -> String {
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        let hex = String(b, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" : "")\(hex)"
    }
}
