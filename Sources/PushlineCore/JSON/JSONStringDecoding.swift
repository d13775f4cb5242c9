/// Decoding of validated JSON string content (the bytes between the quotes).
///
/// The parser has already checked every escape, so decoding cannot fail. Escapes decode to UTF-8;
/// a `\uD83D\uDE00` surrogate pair combines into one scalar and a lone surrogate becomes U+FFFD,
/// so the result is always valid UTF-8 and never longer than the escaped content.
internal enum JSONStringDecoding {
    /// The value of four hex digits at `p`, or nil when one is not a hex digit.
    @inline(__always)
    static func hex4(_ p: UnsafeRawPointer) -> UInt16? {
        var value: UInt16 = 0
        for k in 0..<4 {
            let c = p.load(fromByteOffset: k, as: UInt8.self)
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Calls `emit` with the decoded content in consecutive pieces: raw runs between escapes
    /// (pointing into `content`) and each decoded escape. Stops early when `emit` returns false;
    /// returns whether it ran to the end.
    @inline(__always)
    static func forEachPiece(_ content: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard let p = content.baseAddress else { return true }
        let n = content.count
        var runStart = 0
        var i = 0
        while i < n {
            guard p.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "\\") else {
                i &+= 1
                continue
            }
            if i > runStart, !emit(UnsafeRawBufferPointer(start: p + runStart, count: i &- runStart)) { return false }
            var scalar: UInt32
            let escape = p.load(fromByteOffset: i &+ 1, as: UInt8.self)
            switch escape {
            case UInt8(ascii: "b"): scalar = 0x08; i &+= 2
            case UInt8(ascii: "f"): scalar = 0x0C; i &+= 2
            case UInt8(ascii: "n"): scalar = 0x0A; i &+= 2
            case UInt8(ascii: "r"): scalar = 0x0D; i &+= 2
            case UInt8(ascii: "t"): scalar = 0x09; i &+= 2
            case UInt8(ascii: "u"):
                let unit = UInt32(hex4(p + (i &+ 2)) ?? 0xFFFD)
                i &+= 6
                switch unit {
                case 0xD800...0xDBFF:
                    // A high surrogate combines only with an escaped low surrogate right after it.
                    if i &+ 6 <= n,
                       p.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "\\"),
                       p.load(fromByteOffset: i &+ 1, as: UInt8.self) == UInt8(ascii: "u"),
                       let low = hex4(p + (i &+ 2)), (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 &+ ((unit &- 0xD800) << 10) &+ (UInt32(low) &- 0xDC00)
                        i &+= 6
                    } else {
                        scalar = 0xFFFD
                    }
                case 0xDC00...0xDFFF:
                    scalar = 0xFFFD
                default:
                    scalar = unit
                }
            default:
                scalar = UInt32(escape)   // `"`, `\` and `/` stand for themselves
                i &+= 2
            }
            runStart = i
            guard withUTF8(of: scalar, emit) else { return false }
        }
        if n > runStart { return emit(UnsafeRawBufferPointer(start: p + runStart, count: n &- runStart)) }
        return true
    }

    /// Calls `body` with the UTF-8 encoding of `scalar` (a valid scalar value), from the stack.
    @inline(__always)
    private static func withUTF8(of scalar: UInt32, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var units: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let count: Int
        switch scalar {
        case 0..<0x80:
            units.0 = UInt8(scalar)
            count = 1
        case 0x80..<0x800:
            units.0 = 0xC0 | UInt8(scalar >> 6)
            units.1 = 0x80 | UInt8(scalar & 0x3F)
            count = 2
        case 0x800..<0x10000:
            units.0 = 0xE0 | UInt8(scalar >> 12)
            units.1 = 0x80 | UInt8(scalar >> 6 & 0x3F)
            units.2 = 0x80 | UInt8(scalar & 0x3F)
            count = 3
        default:
            units.0 = 0xF0 | UInt8(scalar >> 18)
            units.1 = 0x80 | UInt8(scalar >> 12 & 0x3F)
            units.2 = 0x80 | UInt8(scalar >> 6 & 0x3F)
            units.3 = 0x80 | UInt8(scalar & 0x3F)
            count = 4
        }
        return withUnsafeBytes(of: &units) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Decodes `content` into `out` (at least `content.count` bytes); returns the decoded length.
    static func unescape(_ content: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        _ = forEachPiece(content) { piece in
            UnsafeMutableRawBufferPointer(rebasing: out[written...]).copyMemory(from: piece)
            written &+= piece.count
            return true
        }
        return written
    }

    /// Whether the decoded `content` equals `expected`, without allocating.
    static func decodedEquals(_ content: UnsafeRawBufferPointer, _ expected: UnsafeRawBufferPointer) -> Bool {
        var matched = 0
        let complete = forEachPiece(content) { piece in
            guard piece.count <= expected.count &- matched,
                  bytesEqual(piece, UnsafeRawBufferPointer(rebasing: expected[matched..<(matched &+ piece.count)]))
            else { return false }
            matched &+= piece.count
            return true
        }
        return complete && matched == expected.count
    }

    /// Byte equality of two equally long buffers, a word at a time.
    @inline(__always)
    static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = a.count
        guard n == b.count else { return false }
        guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        var k = 0
        while k &+ 8 <= n {
            if pa.loadUnaligned(fromByteOffset: k, as: UInt64.self) != pb.loadUnaligned(fromByteOffset: k, as: UInt64.self) {
                return false
            }
            k &+= 8
        }
        while k < n {
            if pa.load(fromByteOffset: k, as: UInt8.self) != pb.load(fromByteOffset: k, as: UInt8.self) { return false }
            k &+= 1
        }
        return true
    }
}
