/// Arithmetic on `iat` / `exp` claims, which are hostile integers (any Int64): saturating, so
/// `Int64.min` or `Int64.max` in a token is refused as too old or too new, never a trap.
enum ClaimTime {
    static func plus(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    static func minus(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : difference
    }
}
