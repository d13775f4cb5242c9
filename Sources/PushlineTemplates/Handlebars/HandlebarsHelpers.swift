import PushlineCore

// Built-in helpers (Pushline templates cannot register their own; names are resolved at compile
// time, so an unknown helper is a compile error):
//
//   Blocks:      #if x [includeZero=true], #unless x, #each list [as |item key|], #with x [as |x|],
//                plus Mustache sections {{#name}} / {{^name}}, and any value helper as a section:
//                {{#eq a "b"}}…{{else}}…{{/eq}}.
//   Comparison:  eq a b, ne a b (strict, like ===: numbers by value, strings by bytes),
//                gt, gte, lt, lte a b (numbers, or two strings by code point); → boolean.
//   Logic:       and a b…, or a b…, not a (Handlebars truthiness: "", 0, false, null,
//                missing and [] are false); → boolean.
//   Values:      default a b… → the first argument that is not missing, null or "".
//                lookup obj key → obj[key] (key a string or an array index).
//                len x → elements of an array, members of an object, characters of a string.
//   Text:        upper / uppercase, lower / lowercase, capitalize (first character), trim,
//                truncate text n [suffix] (n characters at most, suffix included; grapheme
//                clusters, so emoji and accents are never cut), join list [separator=", "].
//   Other:       log … (accepted and ignored: renders nothing).
//
// In strict mode a missing path passed to a text helper or `len`/`join`/`lookup` is an error; the
// comparison and logic helpers and `default` accept missing values (that is their purpose).

enum HandlebarsHelper: String, Sendable, CaseIterable {
    case eq, ne, gt, gte, lt, lte
    case and, or, not
    case `default`, lookup, len
    case upper, uppercase, lower, lowercase, capitalize, trim, truncate, join
    case log

    static let allNames = allCases.map(\.rawValue).joined(separator: ", ")

    /// Why `positional` arguments do not fit, or nil.
    func arityError(positional: Int) -> String? {
        let range: ClosedRange<Int>
        switch self {
        case .eq, .ne, .gt, .gte, .lt, .lte, .lookup: range = 2...2
        case .and, .or: range = 2...Int.max
        case .default: range = 2...Int.max
        case .not, .len, .upper, .uppercase, .lower, .lowercase, .capitalize, .trim: range = 1...1
        case .truncate: range = 2...3
        case .join: range = 1...2
        case .log: range = 0...Int.max
        }
        if range.contains(positional) { return nil }
        if range.lowerBound == range.upperBound { return "takes \(range.lowerBound) argument\(range.lowerBound == 1 ? "" : "s"), not \(positional)" }
        if range.upperBound == Int.max { return "takes at least \(range.lowerBound) arguments, not \(positional)" }
        return "takes \(range.lowerBound) to \(range.upperBound) arguments, not \(positional)"
    }

    /// Whether a missing argument is a normal input (no strict-mode error).
    var toleratesMissing: Bool {
        switch self {
        case .eq, .ne, .gt, .gte, .lt, .lte, .and, .or, .not, .default, .log: true
        default: false
        }
    }
}

extension HandlebarsRenderer {
    mutating func call(
        _ helper: HandlebarsHelper, _ arguments: [HandlebarsExpression], _ hash: [HandlebarsHashArgument],
        _ frame: UnsafePointer<HandlebarsFrame>
    ) throws(TemplateRenderError) -> HandlebarsValue {
        let tolerant = helper.toleratesMissing
        func argument(_ k: Int) throws(TemplateRenderError) -> HandlebarsValue {
            let value = try evaluate(arguments[k], frame, tolerant: tolerant)
            // Helpers read their arguments (copy, compare, count characters): charged by size.
            try spend(value.workSize)
            return value
        }
        switch helper {
        case .eq: return .bool(Self.strictEquals(try argument(0), try argument(1)))
        case .ne: return .bool(!Self.strictEquals(try argument(0), try argument(1)))
        case .gt, .gte, .lt, .lte:
            guard let order = Self.compare(try argument(0), try argument(1)) else { return .bool(false) }
            switch helper {
            case .gt: return .bool(order > 0)
            case .gte: return .bool(order >= 0)
            case .lt: return .bool(order < 0)
            default: return .bool(order <= 0)
            }
        case .and:
            for k in arguments.indices where try argument(k).isEmpty() { return .bool(false) }
            return .bool(true)
        case .or:
            for k in arguments.indices where !(try argument(k).isEmpty()) { return .bool(true) }
            return .bool(false)
        case .not:
            return .bool(try argument(0).isEmpty())
        case .default:
            for k in arguments.indices.dropLast() {
                let value = try argument(k)
                if !value.isNullish && !Self.isEmptyString(value) { return value }
            }
            return try argument(arguments.count - 1)
        case .lookup:
            let container = try argument(0)
            let key = try argument(1)
            return Self.lookup(container, key)
        case .len:
            let value = try argument(0)
            switch value {
            case .json(let json) where json.kind == .array || json.kind == .object: return .int(Int64(json.count))
            case .missing, .null: return .int(0)
            default: return .int(Int64(value.text.count))
            }
        case .upper, .uppercase, .lower, .lowercase:
            var text = try argument(0).textBytes
            Self.changeCase(&text, upper: helper == .upper || helper == .uppercase)
            return .string(text)
        case .capitalize:
            let text = try argument(0).text
            guard let first = text.first else { return .string([]) }
            return .string(Array((first.uppercased() + text.dropFirst()).utf8))
        case .trim:
            let text = try argument(0).text.drop(while: \.isWhitespace)
            let end = text.lastIndex(where: { !$0.isWhitespace }).map(text.index(after:)) ?? text.startIndex
            return .string(Array(text[..<end].utf8))
        case .truncate:
            let text = try argument(0).text
            guard let limit = try argument(1).number, limit >= 0, limit == limit.rounded() else {
                if strict { throw .filter("truncate", "the length must be a whole number ≥ 0") }
                return .string(Array(text.utf8))
            }
            let suffix = arguments.count > 2 ? try argument(2).text : ""
            let maximum = Int(min(limit, Double(Int32.max)))
            guard text.count > maximum else { return .string(Array(text.utf8)) }
            let kept = max(0, maximum - suffix.count)
            return .string(Array((String(text.prefix(kept)) + (suffix.count <= maximum ? suffix : "")).utf8))
        case .join:
            let list = try argument(0)
            let separator = arguments.count > 1 ? try argument(1).textBytes : Self.defaultSeparator
            guard let array = list.jsonArray else {
                if strict && !list.isNullish { throw .filter("join", "expects an array") }
                return list.isNullish ? .string([]) : list
            }
            var out: [UInt8] = []
            for (k, element) in array.elements.enumerated() {
                if k > 0 { out.append(contentsOf: separator) }
                out.append(contentsOf: HandlebarsValue.json(element).textBytes)
                // A long separator between many elements outgrows the limit: checked as it grows.
                if out.count > maxBytes { throw .outputLimit(maxBytes) }
            }
            return .string(out)
        case .log:
            return .missing
        }
    }

    static let defaultSeparator: [UInt8] = Array(", ".utf8)

    /// ASCII text changes case in place (one buffer, no String); anything else goes through
    /// Unicode case mapping (`ß` → `SS`, `É` → `é`).
    private static func changeCase(_ text: inout [UInt8], upper: Bool) {
        guard text.allSatisfy({ $0 < 0x80 }) else {
            let string = String(decoding: text, as: UTF8.self)
            text = Array((upper ? string.uppercased() : string.lowercased()).utf8)
            return
        }
        let from = upper ? UInt8(ascii: "a")...UInt8(ascii: "z") : UInt8(ascii: "A")...UInt8(ascii: "Z")
        for k in text.indices where from.contains(text[k]) { text[k] ^= 0x20 }
    }

    private static func isEmptyString(_ value: HandlebarsValue) -> Bool {
        switch value {
        case .string(let bytes): return bytes.isEmpty
        case .json(let json): return json.kind == .string && json.byteRange.count == 2
        default: return false
        }
    }

    /// JavaScript `===` over our values.
    static func strictEquals(_ a: HandlebarsValue, _ b: HandlebarsValue) -> Bool {
        if let x = a.number, let y = b.number { return x == y }
        switch (a, b) {
        case (.missing, .missing): return true
        case (.null, .null): return true
        case (.null, .json(let json)), (.json(let json), .null): return json.kind == .null
        default: break
        }
        if let x = boolean(a), let y = boolean(b) { return x == y }
        if isString(a) && isString(b) { return compareStrings(a, b) == 0 }
        if case .json(let x) = a, case .json(let y) = b, x.kind == y.kind, x.kind == .object || x.kind == .array || x.kind == .null {
            return x.kind == .null || x.byteRange == y.byteRange
        }
        return false
    }

    /// Order of two numbers or two strings; nil for anything else (the comparison is false).
    static func compare(_ a: HandlebarsValue, _ b: HandlebarsValue) -> Int? {
        if let x = a.number, let y = b.number { return x < y ? -1 : (x > y ? 1 : 0) }
        if isString(a) && isString(b) { return compareStrings(a, b) }
        return nil
    }

    private static func boolean(_ value: HandlebarsValue) -> Bool? {
        switch value {
        case .bool(let b): return b
        case .json(let json) where json.kind == .true: return true
        case .json(let json) where json.kind == .false: return false
        default: return nil
        }
    }

    private static func isString(_ value: HandlebarsValue) -> Bool {
        switch value {
        case .string: return true
        case .json(let json): return json.kind == .string
        default: return false
        }
    }

    /// Byte order of UTF-8 is code point order; no allocation for record strings.
    private static func compareStrings(_ a: HandlebarsValue, _ b: HandlebarsValue) -> Int {
        withStringBytes(a) { x in withStringBytes(b) { y in
            let common = min(x.count, y.count)
            for k in 0..<common where x[k] != y[k] { return x[k] < y[k] ? -1 : 1 }
            return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
        } }
    }

    private static func withStringBytes<R>(_ value: HandlebarsValue, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch value {
        case .string(let bytes): return bytes.withUnsafeBytes(body)
        case .json(let json): if let result = json.withUnescapedString(body) { return result }
        default: break
        }
        return body(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    private static func lookup(_ container: HandlebarsValue, _ key: HandlebarsValue) -> HandlebarsValue {
        guard case .json(let json) = container else { return .missing }
        switch json.kind {
        case .array:
            guard let number = key.number, number >= 0, number == number.rounded(), number < Double(Int.max) else { return .missing }
            return json[Int(number)].map(HandlebarsValue.json) ?? .missing
        case .object:
            let name = key.textBytes
            return name.withUnsafeBytes { json.member(utf8: $0) }.map(HandlebarsValue.json) ?? .missing
        default:
            return .missing
        }
    }
}
