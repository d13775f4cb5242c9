/// Number filters with Ruby's rules: integer arithmetic stays integral, `divided_by` on integers
/// floors, `modulo` takes the divisor's sign. Ruby has big integers; Pushline has 64 bits, so a
/// result beyond them (or a float too large to become an integer) is `invalid_value`, never a
/// trap and never a silently rounded number.
enum LiquidMathFilters {
    static func rounded(_ input: LiquidValue, rule: FloatingPointRoundingRule) throws(LiquidFilterError) -> LiquidValue {
        switch try LiquidFilters.number(input) {
        case .int(let i): return .int(i)
        case .double(let d): return .int(try integer(d.rounded(rule)))
        }
    }

    static func round(_ input: LiquidValue, digits: LiquidValue?) throws(LiquidFilterError) -> LiquidValue {
        let n = try LiquidFilters.number(input)
        // Like Ruby Liquid: a non-numeric digit count counts as 0. Counts beyond ±18 digits
        // round the same as ±18 (a Double has 17 significant digits), so clamping loses nothing.
        let places: Int
        switch try LiquidFilters.number(digits ?? .int(0)) {
        case .int(let i): places = max(-18, min(i, 18))
        case .double(let d): places = Int(max(-18, min(d.rounded(.towardZero), 18)))
        }
        if places < 0 {
            var scale = 1.0
            for _ in 0..<(-places) { scale *= 10 }
            return .int(try integer((n.doubleValue / scale).rounded(.toNearestOrAwayFromZero) * scale))
        }
        switch n {
        case .int(let i): return .int(i)
        case .double(let d):
            if places == 0 { return .int(try integer(d.rounded(.toNearestOrAwayFromZero))) }
            var scale = 1.0
            for _ in 0..<min(places, 15) { scale *= 10 }
            return .double((d * scale).rounded(.toNearestOrAwayFromZero) / scale)
        }
    }

    static func arithmetic(_ filter: LiquidFilter, _ a: LiquidNumber, _ b: LiquidNumber) throws(LiquidFilterError) -> LiquidValue {
        if case .int(let x) = a, case .int(let y) = b {
            if filter == .divided_by || filter == .modulo, y == 0 { throw LiquidFilterError("divided by 0") }
            do throws(TemplateArithmeticError) {
                switch filter {
                case .plus: return .int(try TemplateMath.add(x, y))
                case .minus: return .int(try TemplateMath.subtract(x, y))
                case .times: return .int(try TemplateMath.multiply(x, y))
                case .divided_by: return .int(try TemplateMath.floorDivide(x, y))
                default: return .int(try TemplateMath.floorModulo(x, y))
                }
            } catch {
                throw LiquidFilterError(error)
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

    private static func integer(_ d: Double) throws(LiquidFilterError) -> Int {
        do { return try TemplateMath.int(d) } catch { throw LiquidFilterError(error) }
    }
}
