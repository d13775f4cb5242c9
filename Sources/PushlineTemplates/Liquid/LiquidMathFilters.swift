/// Number filters with Ruby's rules: integer arithmetic stays integral, `divided_by` on integers
/// floors, `modulo` takes the divisor's sign.
enum LiquidMathFilters {
    static func rounded(_ input: LiquidValue, rule: FloatingPointRoundingRule) throws(LiquidFilterError) -> LiquidValue {
        switch input.toNumber {
        case .int(let i): return .int(i)
        case .double(let d): return .int(LiquidNumber.double(d.rounded(rule)).intValue)
        }
    }

    static func round(_ input: LiquidValue, digits: LiquidValue?) throws(LiquidFilterError) -> LiquidValue {
        let n = input.toNumber
        // Like Ruby Liquid: a non-numeric digit count counts as 0.
        let places = digits?.toNumber.intValue ?? 0
        if places < 0 {
            var scale = 1.0
            for _ in 0..<min(-places, 18) { scale *= 10 }
            return .int(LiquidNumber.double((n.doubleValue / scale).rounded(.toNearestOrAwayFromZero) * scale).intValue)
        }
        switch n {
        case .int(let i): return .int(i)
        case .double(let d):
            if places == 0 { return .int(LiquidNumber.double(d.rounded(.toNearestOrAwayFromZero)).intValue) }
            var scale = 1.0
            for _ in 0..<min(places, 15) { scale *= 10 }
            return .double((d * scale).rounded(.toNearestOrAwayFromZero) / scale)
        }
    }

    static func arithmetic(_ filter: LiquidFilter, _ a: LiquidNumber, _ b: LiquidNumber) throws(LiquidFilterError) -> LiquidValue {
        if case .int(let x) = a, case .int(let y) = b {
            switch filter {
            case .plus: if let r = exact(x.addingReportingOverflow(y)) { return r }
            case .minus: if let r = exact(x.subtractingReportingOverflow(y)) { return r }
            case .times: if let r = exact(x.multipliedReportingOverflow(by: y)) { return r }
            case .divided_by:
                guard y != 0 else { throw LiquidFilterError("divided by 0") }
                let (q, r) = x.quotientAndRemainder(dividingBy: y)
                return .int(r != 0 && (r < 0) != (y < 0) ? q - 1 : q)
            default:
                guard y != 0 else { throw LiquidFilterError("divided by 0") }
                let r = x % y
                return .int(r != 0 && (r < 0) != (y < 0) ? r + y : r)
            }
        }
        let x = a.doubleValue, y = b.doubleValue
        // Ruby Liquid computes with BigDecimal: round binary noise back to the operands' decimals.
        let places = max(decimalPlaces(a), decimalPlaces(b))
        switch filter {
        case .plus: return .double(round(x + y, places))
        case .minus: return .double(round(x - y, places))
        case .times: return .double(round(x * y, decimalPlaces(a) + decimalPlaces(b)))
        case .divided_by:
            guard y != 0 else { throw LiquidFilterError("divided by 0") }
            return .double(x / y)
        default:
            guard y != 0 else { throw LiquidFilterError("divided by 0") }
            let r = x.truncatingRemainder(dividingBy: y)
            return .double(round(r != 0 && (r < 0) != (y < 0) ? r + y : r, places))
        }
    }

    private static func decimalPlaces(_ n: LiquidNumber) -> Int {
        guard case .double(let d) = n, d.isFinite else { return 0 }
        let text = d.description
        guard !text.contains("e"), let dot = text.firstIndex(of: ".") else { return 16 }
        let fraction = text[text.index(after: dot)...]
        return fraction == "0" ? 0 : fraction.count
    }

    private static func round(_ value: Double, _ places: Int) -> Double {
        guard places < 15, value.isFinite else { return value }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let r = (value * scale).rounded() / scale
        return r.isFinite ? r : value
    }

    /// Nil on overflow, so the float path below computes an approximate result instead.
    private static func exact(_ result: (partialValue: Int, overflow: Bool)) -> LiquidValue? {
        result.overflow ? nil : .int(result.partialValue)
    }
}
