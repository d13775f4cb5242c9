/// Array filters. Inputs that are not arrays act as a one-element list, like Ruby Liquid.
enum LiquidArrayFilters {
    static func flatElements(_ input: LiquidValue) -> [LiquidValue] {
        guard let elements = input.arrayElements else { return input.isNil ? [] : [input] }
        var out: [LiquidValue] = []
        for e in elements {
            if e.isSequence { out += flatElements(e) } else { out.append(e) }
        }
        return out
    }

    static func slice(_ input: LiquidValue, start: Int, length: Int) -> LiquidValue {
        if let elements = input.arrayElements {
            guard let r = window(count: elements.count, start: start, length: length) else { return .array([]) }
            return .array(Array(elements[r]))
        }
        let s = input.textBytes
        let b = LiquidText.scalarBoundaries(s)
        guard let r = window(count: b.count - 1, start: start, length: length) else { return .emptyString }
        return .string(Array(s[b[r.lowerBound]..<b[r.upperBound]]))
    }

    private static func window(count: Int, start: Int, length: Int) -> Range<Int>? {
        // count ≥ 0, so count + start cannot overflow for a negative start.
        let lo = start < 0 ? count + start : start
        guard lo >= 0, lo <= count, length >= 0 else { return nil }
        // Compared before adding: lo + Int.max would overflow.
        return lo..<(length >= count - lo ? count : lo + length)
    }

    private static func key(_ e: LiquidValue, _ property: LiquidValue?, _ state: borrowing LiquidRenderState) -> LiquidValue {
        guard let property, !property.isNil else { return e }
        return e.property(property.textBytes, state: state) ?? .null
    }

    static func sort(_ input: LiquidValue, property: LiquidValue?, natural: Bool, state: inout LiquidRenderState) throws(LiquidFilterError) -> LiquidValue {
        let elements = flatElements(input)
        // About log2(n) comparisons per element, each reading its keys (charged with the input).
        try state.charge(LiquidRenderState.product(elements.count, Int.bitWidth - elements.count.leadingZeroBitCount))
        var keyed: [(key: LiquidValue, value: LiquidValue)] = []
        for e in elements {
            var k = key(e, property, state).normalized
            // Natural sort compares text, case-insensitively, whatever the values are.
            if natural, !k.isNil { k = .string(LiquidStringFilters.downcase(k.textBytes)) }
            keyed.append((k, e))
        }
        var failed = false
        // Nil keys sort last; mixed kinds that cannot be ordered are an error, as in Ruby.
        let sorted = keyed.enumerated().sorted { a, b in
            let ka = a.element.key, kb = b.element.key
            if ka.isNil || kb.isNil { return !ka.isNil && kb.isNil || (ka.isNil == kb.isNil && a.offset < b.offset) }
            guard let c = LiquidValue.compare(ka, kb) else { failed = true; return a.offset < b.offset }
            return c == 0 ? a.offset < b.offset : c < 0
        }
        if failed && !natural { throw LiquidFilterError("cannot compare the values being sorted") }
        return .array(sorted.map { $0.element.value })
    }

    static func uniq(_ input: LiquidValue, property: LiquidValue?, state: inout LiquidRenderState) throws(LiquidFilterError) -> LiquidValue {
        var seen: [LiquidValue] = []
        var out: [LiquidValue] = []
        for e in flatElements(input) {
            // Each element is compared with every kept one: quadratic, so charged as it goes.
            let k = key(e, property, state)
            try state.charge(LiquidRenderState.product(seen.count &+ 1, k.workSize))
            if !seen.contains(where: { LiquidValue.equal($0, k) && $0.isNil == k.isNil }) {
                seen.append(k)
                out.append(e)
            }
        }
        return .array(out)
    }

    static func compact(_ input: LiquidValue, property: LiquidValue?, state: borrowing LiquidRenderState) -> LiquidValue {
        .array(flatElements(input).filter { !key($0, property, state).isNil })
    }

    static func map(_ input: LiquidValue, property: LiquidValue, state: borrowing LiquidRenderState) throws(LiquidFilterError) -> LiquidValue {
        var out: [LiquidValue] = []
        for e in flatElements(input) {
            guard e.isObject else { throw LiquidFilterError("map expects an array of objects") }
            out.append(key(e, property, state))
        }
        return .array(out)
    }

    static func `where`(_ input: LiquidValue, property: LiquidValue, value: LiquidValue?, state: borrowing LiquidRenderState) throws(LiquidFilterError) -> LiquidValue {
        .array(flatElements(input).filter { e in
            let k = key(e, property, state)
            if let value, !value.isNil { return LiquidValue.equal(k, value) }
            return k.isTruthy
        })
    }
}
