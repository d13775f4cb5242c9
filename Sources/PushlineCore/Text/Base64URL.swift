/// Base64url without padding (RFC 7515 §2): every JWT segment, the Web Push keys, and the
/// encrypted Web Push bodies a dry run shows. (The emulator decodes with Foundation instead, so
/// its checks do not share this code.)
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode<Bytes: Collection>(_ bytes: Bytes, into output: inout [UInt8]) where Bytes.Element == UInt8 {
        output.reserveCapacity(output.count + (bytes.count / 3 + 1) * 4)
        // Read once: each read of the static goes through its initializer's `swift_once` (Linux).
        let alphabet = Self.alphabet
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            output.append(alphabet[Int(b0 >> 2)])
            output.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            guard let b1 else { return }
            output.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)])
            guard let b2 else { return }
            output.append(alphabet[Int(b2 & 0x3F)])
        }
    }

    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        encode(bytes, into: &output)
        return output
    }

    /// Decodes unpadded base64url; nil on any other byte or an impossible length.
    public static func decode<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // A lone sixth bit group (length ≡ 1 mod 4) cannot come from any byte string.
        return bits >= 6 ? nil : output
    }
}
