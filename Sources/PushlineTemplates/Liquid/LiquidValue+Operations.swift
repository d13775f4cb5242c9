import PushlineCore

// Equality, ordering, `contains`, text and number conversions: Ruby Liquid semantics.
extension LiquidValue {
    /// A number for comparisons and math, or nil when the value is not numeric.
    var numeric: LiquidNumber? {
        switch normalized {
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        default: nil
        }
    }

    /// Like Ruby Liquid's `Utils.to_number`: numeric strings convert, anything else is 0.
    var toNumber: LiquidNumber {
        switch normalized {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return LiquidNumber(parsing: s) ?? .int(0)
        default: return .int(0)
        }
    }

    /// Whether the value is `empty`: an empty string, array or object.
    var isEmptyValue: Bool {
        switch self {
        case .string(let s): return s.isEmpty
        case .array(let a): return a.isEmpty
        case .object(let o): return o.keys.isEmpty
        case .range(let lo, let hi): return lo > hi
        case .empty: return true
        case .json(let j):
            switch j.kind {
            case .string: return j.byteRange.count == 2
            case .array, .object: return j.count == 0
            default: return false
            }
        default: return false
        }
    }

    /// Whether the value is `blank`: nil, false, empty, or only whitespace.
    var isBlankValue: Bool {
        switch normalized {
        case .null, .bool(false), .blank, .empty: return true
        case .string(let s): return s.allSatisfy(LiquidText.isWhitespace)
        default: return isEmptyValue
        }
    }

    static func equal(_ a: LiquidValue, _ b: LiquidValue) -> Bool {
        switch (a, b) {
        case (.empty, .empty), (.blank, .blank): return true
        case (.empty, _): return b.isEmptyValue && !b.isNil
        case (_, .empty): return a.isEmptyValue && !a.isNil
        case (.blank, _): return b.isBlankValue
        case (_, .blank): return a.isBlankValue
        default: break
        }
        switch (a.normalized, b.normalized) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.range(let a1, let a2), .range(let b1, let b2)): return a1 == b1 && a2 == b2
        case (let x, let y) where x.isObject && y.isObject: return x.textBytes == y.textBytes
        case (let x, let y):
            if let nx = x.numeric, let ny = y.numeric { return nx == ny }
            if let ex = x.arrayElements, let ey = y.arrayElements {
                return ex.count == ey.count && zip(ex, ey).allSatisfy { LiquidValue.equal($0, $1) }
            }
            return false
        }
    }

    /// `<` style ordering; nil when the values cannot be ordered (Liquid then errors or is false).
    static func compare(_ a: LiquidValue, _ b: LiquidValue) -> Int? {
        let x = a.normalized, y = b.normalized
        if let nx = x.numeric, let ny = y.numeric { return nx < ny ? -1 : (nx == ny ? 0 : 1) }
        if case .string(let sx) = x, case .string(let sy) = y {
            return sx.lexicographicallyPrecedes(sy) ? -1 : (sx == sy ? 0 : 1)
        }
        return nil
    }

    func contains(_ needle: LiquidValue) -> Bool {
        // Shopify: a nil or false needle is never contained.
        guard needle.isTruthy else { return false }
        switch normalized {
        case .string(let s):
            guard case .string(let n) = needle.normalized else {
                if needle.isNil { return false }
                return LiquidText.find(needle.textBytes, in: s) != nil
            }
            return LiquidText.find(n, in: s) != nil
        case .object(let o):
            guard case .string(let k) = needle.normalized else { return false }
            return o[k] != nil
        case .json(let j) where j.kind == .object:
            guard case .string(let k) = needle.normalized else { return false }
            return k.withUnsafeBytes { j.member(utf8: $0) } != nil
        default:
            guard let elements = arrayElements else { return false }
            return elements.contains { LiquidValue.equal($0, needle) }
        }
    }

    /// The value as text, the way `{{ }}` shows it (allocates; for filters, not for output).
    var textBytes: [UInt8] {
        var out: [UInt8] = []
        appendText(to: &out)
        return out
    }

    func appendText(to out: inout [UInt8]) {
        switch self {
        case .null, .empty, .blank, .forloop: break
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): LiquidText.appendDecimal(i, to: &out)
        case .double(let d): out.append(contentsOf: LiquidNumber.rubyText(d).utf8)
        case .string(let s): out.append(contentsOf: s)
        case .array(let a): for e in a { e.appendText(to: &out) }
        case .range(let lo, let hi):
            LiquidText.appendDecimal(lo, to: &out)
            out.append(contentsOf: "..".utf8)
            LiquidText.appendDecimal(hi, to: &out)
        case .object(let o): LiquidValue.appendInspect(o, to: &out)
        case .json(let j):
            switch j.kind {
            case .string: j.withUnescapedString { out.append(contentsOf: $0) }
            case .number: withExtendedLifetime(j) { out.append(contentsOf: j.unsafeRawText) }
            case .true: out.append(contentsOf: "true".utf8)
            case .false: out.append(contentsOf: "false".utf8)
            case .null: break
            case .array: for e in j.elements { LiquidValue.json(e).appendText(to: &out) }
            case .object: out.append(contentsOf: j.jsonText)
            }
        }
    }

    /// Objects print in JSON-ish form; Ruby's Hash#inspect is not something a push should show.
    private static func appendInspect(_ o: LiquidObject, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, key) in o.keys.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: key)
            out.append(contentsOf: "\":".utf8)
            o.values[i].appendText(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Writes the value as `{{ }}` output. Strings and numbers from the record go straight from
    /// the record's bytes: no allocation.
    func write(to output: inout RenderOutput) throws(RenderOutput.LimitExceeded) {
        switch self {
        case .null, .empty, .blank, .forloop: return
        case .string(let s): try output.write(s)
        case .bool(let b): try output.write(b ? "true" : "false")
        case .int(let i): try LiquidValue.writeDecimal(i, to: &output)
        case .json(let j):
            switch j.kind {
            case .string:
                // Escape-free strings (nearly all) are written from the record's own bytes: the
                // generic, cross-module `withUnescapedString` costs a runtime metadata lookup per call.
                if !j.stringHasEscapes {
                    defer { withExtendedLifetime(j) {} }
                    try output.write(j.unsafeRawStringContent)
                } else {
                    let written: Void?? = try j.withUnescapedString { (bytes) throws(RenderOutput.LimitExceeded) in
                        try output.write(bytes)
                    }
                    _ = written
                }
            case .number:
                defer { withExtendedLifetime(j) {} }
                try output.write(j.unsafeRawText)
            case .true: try output.write("true")
            case .false: try output.write("false")
            case .null: return
            case .array:
                for e in j.elements { try LiquidValue.json(e).write(to: &output) }
            case .object:
                try output.write(j.jsonText)
            }
        default:
            try output.write(textBytes)
        }
    }

    private static func writeDecimal(_ value: Int, to output: inout RenderOutput) throws(RenderOutput.LimitExceeded) {
        // 20 digits and a sign fit in a stack buffer: integers print without allocating.
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let written = withUnsafeMutableBytes(of: &buffer) { raw -> Int in
            var magnitude = value.magnitude
            var end = raw.count
            repeat {
                end -= 1
                raw[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { end -= 1; raw[end] = UInt8(ascii: "-") }
            return end
        }
        try withUnsafeBytes(of: &buffer) { (raw) throws(RenderOutput.LimitExceeded) in
            try output.write(UnsafeRawBufferPointer(rebasing: raw[written...]))
        }
    }
}

/// An integer or a float, with Ruby's mixed arithmetic (int op float → float).
enum LiquidNumber: Sendable, Equatable, Comparable {
    case int(Int)
    case double(Double)

    var doubleValue: Double {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        }
    }

    var value: LiquidValue {
        switch self {
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        }
    }

    static func == (a: LiquidNumber, b: LiquidNumber) -> Bool {
        if case .int(let x) = a, case .int(let y) = b { return x == y }
        return a.doubleValue == b.doubleValue
    }

    static func < (a: LiquidNumber, b: LiquidNumber) -> Bool {
        if case .int(let x) = a, case .int(let y) = b { return x < y }
        return a.doubleValue < b.doubleValue
    }

    /// `-?\d+` → int, `-?\d+\.\d+` → float (surrounding whitespace allowed), else nil.
    init?<C: Collection<UInt8>>(parsing bytes: C) {
        let all = Array(bytes)
        // Trimmed by moving indices: removeFirst() per space was quadratic on a record string of
        // 100,000 spaces.
        var lo = 0, hi = all.count
        while lo < hi, LiquidText.isWhitespace(all[lo]) { lo += 1 }
        while hi > lo, LiquidText.isWhitespace(all[hi - 1]) { hi -= 1 }
        let s = all[lo..<hi]
        var i = s.startIndex
        if i < s.endIndex, s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+") { i += 1 }
        let digitsStart = i
        while i < s.endIndex, s[i] >= 0x30 && s[i] <= 0x39 { i += 1 }
        guard i > digitsStart else { return nil }
        let text = String(decoding: s, as: UTF8.self)
        if i == s.endIndex {
            if let v = Int(text) { self = .int(v) } else if let d = Double(text) { self = .double(d) } else { return nil }
            return
        }
        guard s[i] == UInt8(ascii: "."), let d = Double(text) else { return nil }
        self = .double(d)
    }

    /// Ruby's Float#to_s: always a fraction digit, exponent form outside 1e-4 ..< 1e16.
    static func rubyText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        let magnitude = abs(d)
        if magnitude != 0 && (magnitude >= 1e16 || magnitude < 1e-4) {
            var text = d.description  // e.g. "1e+16", "1.5e-05"
            guard let e = text.firstIndex(of: "e") else { return text }
            var mantissa = String(text[..<e])
            var exponent = String(text[text.index(after: e)...])
            if !mantissa.contains(".") { mantissa += ".0" }
            let sign = exponent.hasPrefix("-") ? "-" : "+"
            exponent = String(exponent.drop { $0 == "-" || $0 == "+" })
            if exponent.count < 2 { exponent = "0" + exponent }
            text = mantissa + "e" + sign + exponent
            return text
        }
        var text = d.description
        if let e = text.firstIndex(of: "e") {
            // Swift uses exponents for some values Ruby prints plainly; expand them.
            text = String(text[..<e])
            return plainDecimal(d)
        }
        if !text.contains(".") { text += ".0" }
        return text
    }

    private static func plainDecimal(_ d: Double) -> String {
        // Only reached for 1e-4 ≤ |d| < 1e16 where Swift chose an exponent: format digit by digit.
        let sign = d < 0 ? "-" : ""
        let text = abs(d).description
        guard let e = text.firstIndex(of: "e"), let exp = Int(text[text.index(after: e)...]) else { return text }
        let mantissa = text[..<e].replacingOccurrences(".", "")
        let pointAt = (text[..<e].firstIndex(of: ".").map { text.distance(from: text.startIndex, to: $0) } ?? mantissa.count) + exp
        var digits = mantissa
        if pointAt <= 0 { return sign + "0." + String(repeating: "0", count: -pointAt) + digits }
        if pointAt >= digits.count { digits += String(repeating: "0", count: pointAt - digits.count); return sign + digits + ".0" }
        let idx = digits.index(digits.startIndex, offsetBy: pointAt)
        return sign + digits[..<idx] + "." + digits[idx...]
    }
}

private extension Substring {
    func replacingOccurrences(_ a: Character, _ b: String) -> String {
        String(self.filter { $0 != a })
    }
}
