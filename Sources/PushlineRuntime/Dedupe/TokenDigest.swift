/// A 64-bit keyed digest of a device's address within its channel: what dedupe remembers
/// instead of the token itself (8 bytes, whatever the token's length).
///
/// The hash is wyhash's construction (a 64×64→128-bit multiply folded by xor, over 16-byte
/// blocks), hand-written because no package on the machine offers a fast non-cryptographic
/// 64-bit hash and SHA-256 would cost more than encoding the request. The key is fixed, so the
/// same audience gives the same digests (and the same skips) on every run.
///
/// Collisions: two distinct tokens share a digest with probability 2⁻⁶⁴; among n distinct
/// tokens the chance that any pair does is about n² / 2⁶⁵: 6.8 × 10⁻⁵ for n = 50 million (one
/// run in ~15,000 would skip one device wrongly; docs/pipeline.md, "Dedupe").
public enum TokenDigest {
    static let secret0: UInt64 = 0xa076_1d64_78bd_642f
    static let secret1: UInt64 = 0xe703_7ed1_a0b4_28db
    static let secret2: UInt64 = 0x8ebc_6af0_9c88_c6e3

    @inline(__always)
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    static func load64(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The digest of `token` in `channel` (a provider, or a webhook route): the same bytes in two
    /// channels give unrelated digests.
    public static func digest(channel: UInt64, token: UnsafeRawBufferPointer) -> UInt64 {
        var seed = secret0 ^ mix(channel &+ secret1, secret2)
        let count = token.count
        var offset = 0
        while count - offset > 16 {
            seed = mix(load64(token, offset) ^ secret1, load64(token, offset + 8) ^ seed)
            offset += 16
        }
        // The last 1...16 bytes (fewer for a short token), read as two words zero-padded.
        var a: UInt64 = 0
        var b: UInt64 = 0
        let rest = count - offset
        if rest >= 8 {
            a = load64(token, offset)
            b = load64(token, count - 8)
        } else {
            for i in 0..<rest { a |= UInt64(token[offset + i]) << UInt64(8 * i) }
        }
        return mix(secret1 ^ UInt64(truncatingIfNeeded: count), mix(a ^ secret1, b ^ seed))
    }

    public static func digest(channel: UInt64, token: some Collection<UInt8>) -> UInt64 {
        let bytes = Array(token)
        return bytes.withUnsafeBytes { digest(channel: channel, token: $0) }
    }
}
