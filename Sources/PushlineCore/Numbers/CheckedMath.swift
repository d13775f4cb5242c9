/// Integer arithmetic on values that come from records, templates, configuration or the command
/// line. Every operation reports overflow as nil instead of trapping: a trap kills the whole run,
/// a nil becomes a reject or a diagnostic naming the value.
public enum CheckedMath {
    @inline(__always)
    public static func add(_ a: Int, _ b: Int) -> Int? {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : sum
    }

    @inline(__always)
    public static func subtract(_ a: Int, _ b: Int) -> Int? {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? nil : difference
    }

    @inline(__always)
    public static func multiply(_ a: Int, _ b: Int) -> Int? {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? nil : product
    }

    /// The integer a Double holds exactly when it is finite and within Int's range; nil otherwise
    /// (`Int(_: Double)` traps on NaN, infinities and out-of-range values).
    @inline(__always)
    public static func integer(_ value: Double) -> Int? {
        guard value.isFinite else { return nil }
        return Int(exactly: value.rounded(.towardZero))
    }

    /// An Int64 read from a record as Int (the same width on every platform Pushline builds for,
    /// checked anyway).
    @inline(__always)
    public static func integer(_ value: Int64) -> Int? {
        Int(exactly: value)
    }
}
