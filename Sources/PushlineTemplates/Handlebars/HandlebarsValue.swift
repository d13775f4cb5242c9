import PushlineCore

/// A value during a Handlebars render: a cursor into the recipient's record, or something the
/// template made (a literal, a helper result). Copying one never allocates.
enum HandlebarsValue: Sendable {
    /// `undefined` in Handlebars: the path led nowhere.
    case missing
    case json(JSONValue)
    case string([UInt8])
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    var isMissing: Bool {
        if case .missing = self { return true }
        return false
    }

    /// Missing or JSON null: what lax mode renders as nothing.
    var isNullish: Bool {
        switch self {
        case .missing, .null: return true
        case .json(let value): return value.kind == .null
        default: return false
        }
    }

    /// Handlebars `Utils.isEmpty` (used by `#if`, `#unless`, `#with`, `{{else}}` of `#each`):
    /// `!value && value !== 0`, or an empty array. `includeZero` makes 0 non-empty.
    func isEmpty(includeZero: Bool = false) -> Bool {
        switch self {
        case .missing, .null: return true
        case .bool(let b): return !b
        case .string(let s): return s.isEmpty
        case .int(let i): return i == 0 && !includeZero
        case .double(let d): return d.isNaN || (d == 0 && !includeZero)
        case .json(let value):
            switch value.kind {
            case .null, .false: return true
            case .true, .object: return false
            case .array: return value.count == 0
            case .string: return value.byteRange.count == 2
            case .number: return (value.doubleValue ?? 0) == 0 && !includeZero
            }
        }
    }

    /// Whether the value is an array (record arrays only: templates cannot build them).
    var jsonArray: JSONValue? {
        if case .json(let value) = self, value.kind == .array { return value }
        return nil
    }

    var jsonObject: JSONValue? {
        if case .json(let value) = self, value.kind == .object { return value }
        return nil
    }

    /// The value as a number, JavaScript-style for numbers only (strings are not coerced).
    var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .json(let value) where value.kind == .number: return value.doubleValue
        default: return nil
        }
    }

    /// Same value for the context-depth rule: Handlebars pushes a new `../` level only when a
    /// block changes the context object (`#if` and `{{#with .}}` do not).
    func isSameContext(as other: HandlebarsValue) -> Bool {
        switch (self, other) {
        case (.json(let a), .json(let b)):
            return a.byteRange == b.byteRange && a.kind == b.kind
        case (.missing, .missing), (.null, .null): return true
        default: return false
        }
    }

    /// The text the value renders as (allocates; for helpers, not for plain interpolation).
    var textBytes: [UInt8] {
        var out: [UInt8] = []
        HandlebarsText.append(self, to: &out)
        return out
    }

    /// An upper bound of the work it takes to read the value as text: its bytes, and for record
    /// containers 16 per element as well (helpers materialize them).
    var workSize: Int {
        switch self {
        case .missing, .null, .bool, .int, .double: return 1
        case .string(let s): return s.count &+ 1
        case .json(let json):
            let (weighted, overflow) = json.count.multipliedReportingOverflow(by: 16)
            let (total, overflow2) = json.byteRange.count.addingReportingOverflow(weighted)
            return overflow || overflow2 ? .max : total &+ 1
        }
    }

    /// The text as a Swift String (helpers that need grapheme clusters or case mapping).
    var text: String { String(decoding: textBytes, as: UTF8.self) }
}

/// JavaScript `String(value)` as Handlebars prints it (arrays join with ",", objects print as
/// `[object Object]`, null and undefined print nothing).
enum HandlebarsText {
    static func append(_ value: HandlebarsValue, to sink: inout [UInt8]) {
        switch value {
        case .missing, .null: return
        case .string(let s): sink.append(contentsOf: s)
        case .bool(let b): sink.append(contentsOf: b ? trueBytes : falseBytes)
        case .int(let i): sink.append(contentsOf: Array(String(i).utf8))
        case .double(let d): sink.append(contentsOf: formatDouble(d))
        case .json(let json): appendJSON(json, to: &sink)
        }
    }

    static func appendJSON(_ json: JSONValue, to sink: inout [UInt8]) {
        switch json.kind {
        case .string: _ = json.withUnescapedString { sink.append(contentsOf: $0) }
        case .number: withExtendedLifetime(json) { sink.append(contentsOf: json.unsafeRawText) }
        case .true: sink.append(contentsOf: trueBytes)
        case .false: sink.append(contentsOf: falseBytes)
        case .null: return
        case .object: sink.append(contentsOf: objectBytes)
        case .array:
            for (i, element) in json.elements.enumerated() {
                if i > 0 { sink.append(UInt8(ascii: ",")) }
                appendJSON(element, to: &sink)
            }
        }
    }

    /// JavaScript's number printing for the cases push text meets: integers without ".0".
    static func formatDouble(_ d: Double) -> [UInt8] {
        if d.isNaN { return Array("NaN".utf8) }
        if d.isInfinite { return Array((d < 0 ? "-Infinity" : "Infinity").utf8) }
        if d == d.rounded(.towardZero), abs(d) < 1e15 { return Array(String(Int64(d)).utf8) }
        return Array(d.description.utf8)
    }

    static let trueBytes: [UInt8] = Array("true".utf8)
    static let falseBytes: [UInt8] = Array("false".utf8)
    static let objectBytes: [UInt8] = Array("[object Object]".utf8)
}
