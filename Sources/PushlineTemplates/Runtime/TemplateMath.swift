/// An integer operation whose result does not fit (overflow, a Double outside Int's range, NaN).
/// Renderers turn it into `TemplateRenderError.invalidValue`, so the recipient becomes a reject.
struct TemplateArithmeticError: Error, Sendable, Equatable {
    let message: String
}

/// Checked integer arithmetic for every number that comes from a record or a template.
///
/// Swift traps on overflow, on `Int.min / -1`, on `abs(Int.min)` and on converting an
/// out-of-range Double with `Int(_:)`; one hostile record must never stop a run, so the template
/// engines route every such operation through here. Each is a compare and an add: free on the
/// hot path.
enum TemplateMath {
    static func add(_ a: Int, _ b: Int) throws(TemplateArithmeticError) -> Int {
        let (r, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw overflowError(a, "+", b) }
        return r
    }

    static func subtract(_ a: Int, _ b: Int) throws(TemplateArithmeticError) -> Int {
        let (r, overflow) = a.subtractingReportingOverflow(b)
        guard !overflow else { throw overflowError(a, "-", b) }
        return r
    }

    static func multiply(_ a: Int, _ b: Int) throws(TemplateArithmeticError) -> Int {
        let (r, overflow) = a.multipliedReportingOverflow(by: b)
        guard !overflow else { throw overflowError(a, "*", b) }
        return r
    }

    /// Ruby's integer division (rounds toward negative infinity). `b` must not be 0.
    static func floorDivide(_ a: Int, _ b: Int) throws(TemplateArithmeticError) -> Int {
        let (q, overflow) = a.dividedReportingOverflow(by: b)
        guard !overflow, b != 0 else { throw overflowError(a, "/", b) }
        let r = a.remainderReportingOverflow(dividingBy: b).partialValue
        // q - 1 cannot overflow: q == Int.min needs a == Int.min and b == 1, whose remainder is 0.
        return r != 0 && (r < 0) != (b < 0) ? q - 1 : q
    }

    /// Ruby's modulo (takes the divisor's sign). `b` must not be 0. `Int.min % -1` is 0.
    static func floorModulo(_ a: Int, _ b: Int) throws(TemplateArithmeticError) -> Int {
        guard b != 0 else { throw overflowError(a, "%", b) }
        let r = a.remainderReportingOverflow(dividingBy: b).partialValue
        // r and b have opposite signs here, so r + b cannot overflow.
        return r != 0 && (r < 0) != (b < 0) ? r + b : r
    }

    static func negate(_ a: Int) throws(TemplateArithmeticError) -> Int {
        guard a != .min else { throw TemplateArithmeticError(message: "-(\(a)) does not fit in a 64-bit integer") }
        return -a
    }

    static func abs(_ a: Int) throws(TemplateArithmeticError) -> Int {
        guard a != .min else { throw TemplateArithmeticError(message: "abs(\(a)) does not fit in a 64-bit integer") }
        return Swift.abs(a)
    }

    /// `d` truncated toward zero, when it is finite and within Int's range.
    static func int(_ d: Double) throws(TemplateArithmeticError) -> Int {
        let t = d.rounded(.towardZero)
        // 2^63 is exact in a Double; Int's range is [-2^63, 2^63).
        guard t.isFinite, t >= -0x1p63, t < 0x1p63 else {
            throw TemplateArithmeticError(message: "\(d) is not a number within the 64-bit integer range")
        }
        return Int(t)
    }

    /// Elements of the inclusive range `lo...hi` (0 when empty), when that count fits in an Int.
    static func rangeCount(_ lo: Int, _ hi: Int) throws(TemplateArithmeticError) -> Int {
        guard lo <= hi else { return 0 }
        let (span, overflow) = hi.subtractingReportingOverflow(lo)
        guard !overflow, span < .max else {
            throw TemplateArithmeticError(message: "the range (\(lo)..\(hi)) has more elements than a 64-bit integer counts")
        }
        return span + 1
    }

    private static func overflowError(_ a: Int, _ op: String, _ b: Int) -> TemplateArithmeticError {
        TemplateArithmeticError(message: "\(a) \(op) \(b) does not fit in a 64-bit integer")
    }
}

/// What the step budget charges for work that is not a byte or an element: the time of a call or an
/// expansion measured in the time a byte of filter work takes, roughly.
enum TemplateCost {
    /// A filter or helper call (argument evaluation, dispatch, the result value).
    static let call = 16
    /// A snippet or partial expansion (scope set-up and tear-down around its body).
    static let expansion = 256
}

extension TemplateRenderError {
    init(_ error: TemplateArithmeticError) { self = .invalidValue(error.message) }
}
