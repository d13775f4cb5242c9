/// Why a filter refused its input or arguments: its own complaint (`TemplateRenderError.filter`),
/// a number out of range (`.invalidValue`), or a budget the filter ran out of (passed on as is).
struct LiquidFilterError: Error {
    enum Kind { case filter, invalidValue, render(TemplateRenderError) }
    var kind: Kind
    var message: String
    init(_ message: String) { kind = .filter; self.message = message }
    init(_ error: TemplateArithmeticError) { kind = .invalidValue; message = error.message }
    init(_ error: TemplateRenderError) { kind = .render(error); message = error.description }

    /// The render error for a failure of `filter`.
    func renderError(_ filter: LiquidFilter) -> TemplateRenderError {
        switch kind {
        case .filter: .filter(filter.rawValue, message)
        case .invalidValue: .invalidValue("filter '\(filter.rawValue)': \(message)")
        case .render(let error): error
        }
    }
}

extension LiquidRenderState {
    /// `spend` for filters.
    mutating func charge(_ n: Int) throws(LiquidFilterError) {
        do { try spend(n) } catch { throw LiquidFilterError(error) }
    }

    /// Refuses a built text longer than the value limit before it is built.
    func admitBytes(_ n: Int) throws(LiquidFilterError) {
        if n > budget.maxBytes { throw LiquidFilterError(.outputLimit(budget.maxBytes)) }
    }
}

/// Filter dispatch. Filters build owned values: they run only where a template asks for them.
enum LiquidFilters {
    typealias Keywords = [(name: [UInt8], value: LiquidValue)]

    static func apply(
        _ filter: LiquidFilter, to input: LiquidValue, _ args: [LiquidValue], _ keywords: Keywords,
        state: inout LiquidRenderState
    ) throws(LiquidFilterError) -> LiquidValue {
        // The caller charged the input's and arguments' `workSize`; filters whose output can
        // outgrow their input check the value limit before (or while) they build.
        func arg(_ i: Int) -> LiquidValue? { i < args.count ? args[i] : nil }
        func growing(_ text: [UInt8]) throws(LiquidFilterError) -> [UInt8] { try growingText(text, state) }
        switch filter {
        case .default:
            let allowFalse = keywords.contains { $0.name.elementsEqual("allow_false".utf8) && $0.value.isTruthy }
            if allowFalse, case .bool(false) = input.normalized { return input }
            if !input.isTruthy || input.isEmptyValue { return arg(0) ?? .emptyString }
            return input

        // Strings
        case .append, .prepend:
            let text = input.textBytes, other = arg(0)?.textBytes ?? []
            try state.admitBytes(text.count + other.count)
            return .string(filter == .append ? text + other : other + text)
        case .upcase: return .string(LiquidStringFilters.upcase(input.textBytes))
        case .downcase: return .string(LiquidStringFilters.downcase(input.textBytes))
        case .capitalize: return .string(LiquidStringFilters.capitalize(input.textBytes))
        case .strip: return .string(LiquidStringFilters.strip(input.textBytes, leading: true, trailing: true))
        case .lstrip: return .string(LiquidStringFilters.strip(input.textBytes, leading: true, trailing: false))
        case .rstrip: return .string(LiquidStringFilters.strip(input.textBytes, leading: false, trailing: true))
        case .strip_newlines: return .string(input.textBytes.filter { $0 != 0x0A && $0 != 0x0D })
        case .newline_to_br: return .string(LiquidStringFilters.newlineToBr(try growing(input.textBytes)))
        case .strip_html: return .string(LiquidStringFilters.stripHTML(input.textBytes))
        case .escape: return input.isNil ? .null : .string(LiquidStringFilters.escapeHTML(try growing(input.textBytes), once: false))
        case .escape_once: return .string(LiquidStringFilters.escapeHTML(try growing(input.textBytes), once: true))
        case .url_encode: return input.isNil ? .null : .string(LiquidStringFilters.urlEncode(try growing(input.textBytes)))
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
            guard let result = LiquidStringFilters.replace(input.textBytes, target, with: replacement, which, limit: state.budget.maxBytes) else {
                throw LiquidFilterError(.outputLimit(state.budget.maxBytes))
            }
            return .string(result)
        case .slice:
            let start = try integer(args[0], "start")
            let length = try arg(1).flatMap { (v) throws(LiquidFilterError) in v.isNil ? nil : try integer(v, "length") } ?? 1
            return LiquidArrayFilters.slice(input, start: start, length: length)
        case .split:
            // Each piece costs an element: stop splitting before the pieces outgrow the budget.
            let maxParts = state.remainingSteps / LiquidValue.elementCost
            guard let parts = LiquidStringFilters.split(input.textBytes, by: arg(0)?.textBytes ?? [UInt8(ascii: " ")], maxParts: maxParts) else {
                throw LiquidFilterError(.stepLimit(state.budget.maxSteps))
            }
            return .array(parts.map { .string($0) })

        // Arrays
        case .join:
            let separator = arg(0)?.textBytes ?? [UInt8(ascii: " ")]
            guard input.isSequence else { return .string(input.textBytes) }
            var out: [UInt8] = []
            for (i, e) in LiquidArrayFilters.flatElements(input).enumerated() {
                if i > 0 { out += separator }
                e.appendText(to: &out)
                // A long separator between many elements outgrows the limit: check as it grows.
                try state.admitBytes(out.count)
            }
            return .string(out)
        case .first: return input.arrayElements.flatMap { $0.first } ?? .null
        case .last: return input.arrayElements.flatMap { $0.last } ?? .null
        case .size: return .int(input.size ?? 0)
        case .reverse: return .array((input.arrayElements ?? [input]).reversed())
        case .sort, .sort_natural:
            return try LiquidArrayFilters.sort(input, property: arg(0), natural: filter == .sort_natural, state: &state)
        case .uniq: return try LiquidArrayFilters.uniq(input, property: arg(0), state: &state)
        case .compact: return LiquidArrayFilters.compact(input, property: arg(0), state: state)
        case .map:
            if args[0].isNil { return .array([]) }
            return try LiquidArrayFilters.map(input, property: args[0], state: state)
        case .where:
            if input.isNil || args[0].isNil { return .array([]) }
            guard input.isSequence || input.isObject else { throw LiquidFilterError("where expects an array") }
            return try LiquidArrayFilters.where(input, property: args[0], value: arg(1), state: state)
        case .concat:
            guard let extra = args[0].arrayElements else { throw LiquidFilterError("concat expects an array argument") }
            return .array(LiquidArrayFilters.flatElements(input) + extra)

        // Numbers
        case .abs:
            switch try number(input) {
            case .int(let i): return .int(try checked { () throws(TemplateArithmeticError) in try TemplateMath.abs(i) })
            case .double(let d): return .double(Swift.abs(d))
            }
        case .ceil: return try LiquidMathFilters.rounded(input, rule: .up)
        case .floor: return try LiquidMathFilters.rounded(input, rule: .down)
        case .round: return try LiquidMathFilters.round(input, digits: arg(0))
        case .plus, .minus, .times, .divided_by, .modulo:
            return try LiquidMathFilters.arithmetic(filter, try number(input), try number(args[0]))
        case .at_least:
            let a = try number(input), b = try number(args[0])
            return (a < b ? b : a).value
        case .at_most:
            let a = try number(input), b = try number(args[0])
            return (b < a ? b : a).value

        case .date:
            let format = args[0].textBytes
            // Every directive expands to at most 30 bytes: a format within twice the limit keeps
            // the built text within a small multiple of it; the caller checks the result.
            try state.admitBytes(format.count / 2)
            return try LiquidDateFilter.format(input, format, now: state.budget.now)
        }
    }

    /// Text whose filter never shrinks it (escaping, `newline_to_br`): refused when it is already
    /// over the value limit, so the built text stays within a small multiple of it.
    private static func growingText(_ text: [UInt8], _ state: borrowing LiquidRenderState) throws(LiquidFilterError) -> [UInt8] {
        try state.admitBytes(text.count)
        return text
    }

    /// `input.toNumber`, refusing numbers written beyond Double's range (`1e999`).
    static func number(_ value: LiquidValue) throws(LiquidFilterError) -> LiquidNumber {
        let n = value.toNumber
        if case .double(let d) = n, !d.isFinite { throw LiquidFilterError(TemplateArithmeticError(message: "\(d) is not a finite number")) }
        return n
    }

    static func checked<T>(_ body: () throws(TemplateArithmeticError) -> T) throws(LiquidFilterError) -> T {
        do { return try body() } catch { throw LiquidFilterError(error) }
    }

    static func integer(_ value: LiquidValue, _ what: String) throws(LiquidFilterError) -> Int {
        switch value.normalized {
        case .int(let i): return i
        case .double: throw LiquidFilterError("\(what) must be an integer")
        case .string(let s):
            guard let n = LiquidNumber(parsing: s) else { throw LiquidFilterError("\(what) must be a number") }
            return try checked { () throws(TemplateArithmeticError) in try n.checkedInt() }
        case .null: throw LiquidFilterError("\(what) is undefined")
        default: throw LiquidFilterError("\(what) must be a number")
        }
    }
}
