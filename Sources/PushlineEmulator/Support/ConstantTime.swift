/// Comparisons of secrets whose time does not depend on where they differ, so a client cannot
/// learn a signature or a client secret byte by byte from how fast it is refused.
enum ConstantTime {
    /// Whether `a` and `b` are the same bytes. Only the length may leak (it is public anyway:
    /// HMAC-SHA256 is 32 bytes, the client secret's length is in the docs).
    static func equal<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool where A.Element == UInt8, B.Element == UInt8 {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
