/// Why a filter refused its input or arguments (becomes `TemplateRenderError.filter`).
struct LiquidFilterError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Filter dispatch. Filters build owned values: they run only where a template asks for them.
enum LiquidFilters {
    typealias Keywords = [(name: [UInt8], value: LiquidValue)]

    static func apply(
        _ filter: LiquidFilter, to input: LiquidValue, _ args: [LiquidValue], _ keywords: Keywords,
        state: borrowing LiquidRenderState
    ) throws(LiquidFilterError) -> LiquidValue {
        func arg(_ i: Int) -> LiquidValue? { i < args.count ? args[i] : nil }
        switch filter {
        case .default:
            let allowFalse = keywords.contains { $0.name.elementsEqual("allow_false".utf8) && $0.value.isTruthy }
            if allowFalse, case .bool(false) = input.normalized { return input }
            if !input.isTruthy || input.isEmptyValue { return arg(0) ?? .emptyString }
            return input

        // Strings
        case .append: return .string(input.textBytes + (arg(0)?.textBytes ?? []))
        case .prepend: return .string((arg(0)?.textBytes ?? []) + input.textBytes)
        case .upcase: return .string(LiquidStringFilters.upcase(input.textBytes))
        case .downcase: return .string(LiquidStringFilters.downcase(input.textBytes))
        case .capitalize: return .string(LiquidStringFilters.capitalize(input.textBytes))
        case .strip: return .string(LiquidStringFilters.strip(input.textBytes, leading: true, trailing: true))
        case .lstrip: return .string(LiquidStringFilters.strip(input.textBytes, leading: true, trailing: false))
        case .rstrip: return .string(LiquidStringFilters.strip(input.textBytes, leading: false, trailing: true))
        case .strip_newlines: return .string(input.textBytes.filter { $0 != 0x0A && $0 != 0x0D })
        case .newline_to_br: return .string(LiquidStringFilters.newlineToBr(input.textBytes))
        case .strip_html: return .string(LiquidStringFilters.stripHTML(input.textBytes))
        case .escape: return input.isNil ? .null : .string(LiquidStringFilters.escapeHTML(input.textBytes, once: false))
        case .escape_once: return .string(LiquidStringFilters.escapeHTML(input.textBytes, once: true))
        case .url_encode: return input.isNil ? .null : .string(LiquidStringFilters.urlEncode(input.textBytes))
        case .url_decode: return input.isNil ? .null : .string(LiquidStringFilters.urlDecode(input.textBytes))
        case .truncate:
            let length = try arg(0).map { (v) throws(LiquidFilterError) in try integer(v, "length") } ?? 50
            return .string(LiquidStringFilters.truncate(input.textBytes, length: length, ellipsis: arg(1)?.textBytes ?? Array("...".utf8)))
        case .truncatewords:
            let words = try arg(0).map { (v) throws(LiquidFilterError) in try integer(v, "word count") } ?? 15
            return .string(LiquidStringFilters.truncateWords(input.textBytes, words: words, ellipsis: arg(1)?.textBytes ?? Array("...".utf8)))
        case .replace, .replace_first, .replace_last, .remove, .remove_first, .remove_last:
            let target = arg(0)?.textBytes ?? []
            let replacement: [UInt8]
            switch filter {
            case .replace, .replace_first, .replace_last: replacement = arg(1)?.textBytes ?? []
            default: replacement = []
            }
            let which: LiquidStringFilters.Occurrence
            switch filter {
            case .replace, .remove: which = .all
            case .replace_first, .remove_first: which = .first
            default: which = .last
            }
            return .string(LiquidStringFilters.replace(input.textBytes, target, with: replacement, which))
        case .slice:
            let start = try integer(args[0], "start")
            let length = try arg(1).flatMap { (v) throws(LiquidFilterError) in v.isNil ? nil : try integer(v, "length") } ?? 1
            return LiquidArrayFilters.slice(input, start: start, length: length)
        case .split:
            return .array(LiquidStringFilters.split(input.textBytes, by: arg(0)?.textBytes ?? [UInt8(ascii: " ")]).map { .string($0) })

        // Arrays
        case .join:
            let separator = arg(0)?.textBytes ?? [UInt8(ascii: " ")]
            guard input.arrayElements != nil else { return .string(input.textBytes) }
            var out: [UInt8] = []
            for (i, e) in LiquidArrayFilters.flatElements(input).enumerated() {
                if i > 0 { out += separator }
                e.appendText(to: &out)
            }
            return .string(out)
        case .first: return input.arrayElements.flatMap { $0.first } ?? .null
        case .last: return input.arrayElements.flatMap { $0.last } ?? .null
        case .size: return .int(input.size ?? 0)
        case .reverse: return .array((input.arrayElements ?? [input]).reversed())
        case .sort, .sort_natural:
            return try LiquidArrayFilters.sort(input, property: arg(0), natural: filter == .sort_natural, state: state)
        case .uniq: return LiquidArrayFilters.uniq(input, property: arg(0), state: state)
        case .compact: return LiquidArrayFilters.compact(input, property: arg(0), state: state)
        case .map:
            if args[0].isNil { return .array([]) }
            return try LiquidArrayFilters.map(input, property: args[0], state: state)
        case .where:
            if input.isNil || args[0].isNil { return .array([]) }
            guard input.arrayElements != nil || input.isObject else { throw LiquidFilterError("where expects an array") }
            return try LiquidArrayFilters.where(input, property: args[0], value: arg(1), state: state)
        case .concat:
            guard let extra = args[0].arrayElements else { throw LiquidFilterError("concat expects an array argument") }
            return .array(LiquidArrayFilters.flatElements(input) + extra)

        // Numbers
        case .abs:
            switch input.toNumber {
            case .int(let i): return .int(i == .min ? .max : Swift.abs(i))
            case .double(let d): return .double(Swift.abs(d))
            }
        case .ceil: return try LiquidMathFilters.rounded(input, rule: .up)
        case .floor: return try LiquidMathFilters.rounded(input, rule: .down)
        case .round: return try LiquidMathFilters.round(input, digits: arg(0))
        case .plus, .minus, .times, .divided_by, .modulo:
            return try LiquidMathFilters.arithmetic(filter, input.toNumber, args[0].toNumber)
        case .at_least:
            let a = input.toNumber, b = args[0].toNumber
            return (a < b ? b : a).value
        case .at_most:
            let a = input.toNumber, b = args[0].toNumber
            return (b < a ? b : a).value

        case .date:
            return LiquidDateFilter.format(input, args[0])
        }
    }

    static func integer(_ value: LiquidValue, _ what: String) throws(LiquidFilterError) -> Int {
        switch value.normalized {
        case .int(let i): return i
        case .double: throw LiquidFilterError("\(what) must be an integer")
        case .string(let s):
            guard let n = LiquidNumber(parsing: s) else { throw LiquidFilterError("\(what) must be a number") }
            return n.intValue
        case .null: throw LiquidFilterError("\(what) is undefined")
        default: throw LiquidFilterError("\(what) must be a number")
        }
    }
}
