/// Parses the inside of one tag (`helper a "b" 1 (sub x) key=value as |item i|`) into a syntax
/// tree; `HandlebarsCompiler` then resolves names (helpers, block parameters, `../`).
struct HandlebarsCallSyntax {
    var head: HandlebarsOperandSyntax
    var params: [HandlebarsOperandSyntax] = []
    var hash: [(key: [UInt8], value: HandlebarsOperandSyntax)] = []
    var blockParams: [[UInt8]] = []
    var offset: Int
    /// The head as written (`if`, `../awesome`, `"foo"`): a block's close tag must repeat it.
    var headText: [UInt8] = []

    var hasArguments: Bool { !params.isEmpty || !hash.isEmpty }
}

indirect enum HandlebarsOperandSyntax {
    case path(HandlebarsPathSyntax)
    /// A string, number or boolean literal; `raw` is its text, used as a key when the literal
    /// stands alone in a mustache (`{{"foo bar"}}` and `{{12}}` look those names up).
    case literal(HandlebarsValue, raw: [UInt8], offset: Int)
    case subexpression(HandlebarsCallSyntax)
}

struct HandlebarsPathSyntax {
    struct Segment {
        var bytes: [UInt8]
        /// Written as `[literal]`: never `this`, `..` or `.`.
        var literal: Bool
    }
    var isData: Bool
    var segments: [Segment]
    var text: String
    var offset: Int
}

struct HandlebarsExpressionParser {
    private let bytes: [UInt8]
    /// Offset of `bytes` in the template source, for error positions.
    private let base: Int
    private let positions: HandlebarsSourcePositions
    private var i = 0
    /// Subexpressions open around the operand being parsed.
    private var depth = 0
    /// Deepest nesting of `(…)` subexpressions: they are parsed, compiled, evaluated and freed by
    /// recursion, so the depth is bounded (a compile error, never a stack overflow).
    static let maxExpressionDepth = 64

    init(_ bytes: [UInt8], base: Int, positions: HandlebarsSourcePositions) {
        self.bytes = bytes
        self.base = base
        self.positions = positions
    }

    func error(at local: Int, _ message: String) -> TemplateCompileError {
        let (line, column) = positions.lineAndColumn(base + local)
        return TemplateCompileError(line: line, column: column, message: message)
    }

    /// The whole tag content as one call; nothing may follow it.
    mutating func parseCall(emptyMessage: String = "empty tag") throws(TemplateCompileError) -> HandlebarsCallSyntax {
        skipSpace()
        guard i < bytes.count else { throw error(at: i, emptyMessage) }
        let call = try parseCallBody(closing: nil)
        skipSpace()
        if i < bytes.count { throw error(at: i, "unexpected '\(character(at: i))'") }
        return call
    }

    /// A partial's name: a path-like word, `[literal]` or a string (`{{> shared/dude}}`).
    mutating func parsePartialName() throws(TemplateCompileError) -> [UInt8] {
        skipSpace()
        guard i < bytes.count else { throw error(at: i, "partial name expected") }
        let c = bytes[i]
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || c == UInt8(ascii: "[") {
            let close = c == UInt8(ascii: "[") ? UInt8(ascii: "]") : c
            let start = i + 1
            guard let end = bytes[start...].firstIndex(of: close) else { throw error(at: i, "unterminated partial name") }
            i = end + 1
            return Array(bytes[start..<end])
        }
        if c == UInt8(ascii: "(") { throw error(at: i, "dynamic partial names are not supported") }
        let start = i
        while i < bytes.count && !HandlebarsLexer.isWhitespace(bytes[i]) { i += 1 }
        return Array(bytes[start..<i])
    }

    /// What follows a partial name: an optional context and hash arguments.
    mutating func parseRemainingArguments(into call: inout HandlebarsCallSyntax) throws(TemplateCompileError) {
        try parseArguments(into: &call, closing: nil)
        skipSpace()
        if i < bytes.count { throw error(at: i, "unexpected '\(character(at: i))'") }
    }

    var atEnd: Bool {
        var j = i
        while j < bytes.count && HandlebarsLexer.isWhitespace(bytes[j]) { j += 1 }
        return j == bytes.count
    }

    // MARK: Grammar

    private mutating func parseCallBody(closing: UInt8?) throws(TemplateCompileError) -> HandlebarsCallSyntax {
        let start = i
        let head = try parseOperand()
        var call = HandlebarsCallSyntax(head: head, offset: base + start, headText: Array(bytes[start..<i]))
        try parseArguments(into: &call, closing: closing)
        return call
    }

    private mutating func parseArguments(into call: inout HandlebarsCallSyntax, closing: UInt8?) throws(TemplateCompileError) {
        while true {
            skipSpace()
            guard i < bytes.count else { return }
            if let closing, bytes[i] == closing { return }
            if bytes[i] == UInt8(ascii: ")") { throw error(at: i, "unexpected ')'") }
            if startsBlockParams() {
                try parseBlockParams(into: &call)
                continue
            }
            if let key = hashKeyAhead() {
                i += key.count
                skipSpace()
                i += 1   // '='
                skipSpace()
                guard i < bytes.count else { throw error(at: i, "value expected after '\(String(decoding: key, as: UTF8.self))='") }
                call.hash.append((Array(key), try parseOperand()))
                continue
            }
            if !call.hash.isEmpty { throw error(at: i, "positional argument after hash arguments") }
            if !call.blockParams.isEmpty { throw error(at: i, "argument after block parameters") }
            call.params.append(try parseOperand())
        }
    }

    private mutating func parseOperand() throws(TemplateCompileError) -> HandlebarsOperandSyntax {
        skipSpace()
        guard i < bytes.count else { throw error(at: i, "expression expected") }
        let start = i
        let c = bytes[i]
        if c == UInt8(ascii: "(") {
            depth += 1
            defer { depth -= 1 }
            if depth > Self.maxExpressionDepth {
                throw error(at: start, "expression nests deeper than \(Self.maxExpressionDepth) levels of subexpressions")
            }
            i += 1
            skipSpace()
            let call = try parseCallBody(closing: UInt8(ascii: ")"))
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ")") else { throw error(at: start, "unclosed '(' subexpression") }
            i += 1
            return .subexpression(call)
        }
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
            let text = try parseString(quote: c)
            return .literal(.string(text), raw: text, offset: base + start)
        }
        if let number = numberAhead() {
            i += number.count
            let text = String(decoding: number, as: UTF8.self)
            let value: HandlebarsValue = Int64(text).map { .int($0) } ?? .double(Double(text) ?? 0)
            return .literal(value, raw: Array(number), offset: base + start)
        }
        for (word, value) in HandlebarsExpressionParser.keywords where wordAhead(word) {
            i += word.count
            return .literal(value, raw: word, offset: base + start)
        }
        return .path(try parsePath())
    }

    private mutating func parsePath() throws(TemplateCompileError) -> HandlebarsPathSyntax {
        let start = i
        var isData = false
        if bytes[i] == UInt8(ascii: "@") { isData = true; i += 1 }
        var segments: [HandlebarsPathSyntax.Segment] = []
        while true {
            guard i < bytes.count else { throw error(at: i, "path segment expected") }
            if bytes[i] == UInt8(ascii: "[") {
                let open = i
                guard let end = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "]")) else {
                    throw error(at: open, "unterminated '[' in path")
                }
                segments.append(.init(bytes: Array(bytes[(i + 1)..<end]), literal: true))
                i = end + 1
            } else if bytes[i] == UInt8(ascii: "."), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: ".") {
                segments.append(.init(bytes: HandlebarsExpressionParser.parentSegment, literal: false))
                i += 2
            } else if bytes[i] == UInt8(ascii: "."), isDelimiterOrSeparator(i + 1) {
                segments.append(.init(bytes: HandlebarsExpressionParser.thisDotSegment, literal: false))
                i += 1
            } else {
                let segmentStart = i
                while i < bytes.count && HandlebarsExpressionParser.isIdentifierByte(bytes[i]) { i += 1 }
                if i == segmentStart { throw error(at: i, "unexpected '\(character(at: i))'") }
                segments.append(.init(bytes: Array(bytes[segmentStart..<i]), literal: false))
            }
            // A separator continues the path.
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "/") {
                let isParentStart = bytes[i] == UInt8(ascii: ".") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: ".")
                if !isParentStart || segments.last?.bytes == HandlebarsExpressionParser.parentSegment {
                    i += 1
                    if i >= bytes.count || HandlebarsLexer.isWhitespace(bytes[i]) { throw error(at: i, "path ends with a separator") }
                    continue
                }
            }
            break
        }
        return HandlebarsPathSyntax(
            isData: isData, segments: segments, text: String(decoding: bytes[start..<i], as: UTF8.self), offset: base + start)
    }

    private mutating func parseString(quote: UInt8) throws(TemplateCompileError) -> [UInt8] {
        let start = i
        i += 1
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == quote {
                out.append(quote)
                i += 2
                continue
            }
            if c == quote {
                i += 1
                return out
            }
            out.append(c)
            i += 1
        }
        throw error(at: start, "unterminated string literal")
    }

    private mutating func parseBlockParams(into call: inout HandlebarsCallSyntax) throws(TemplateCompileError) {
        let start = i
        i += 2   // "as"
        skipSpace()
        i += 1   // "|"
        var names: [[UInt8]] = []
        while true {
            skipSpace()
            guard i < bytes.count else { throw error(at: start, "unclosed block parameters: missing '|'") }
            if bytes[i] == UInt8(ascii: "|") { i += 1; break }
            let nameStart = i
            while i < bytes.count && HandlebarsExpressionParser.isIdentifierByte(bytes[i]) { i += 1 }
            if i == nameStart { throw error(at: i, "block parameter name expected") }
            names.append(Array(bytes[nameStart..<i]))
        }
        if names.isEmpty || names.count > 2 { throw error(at: start, "a block takes one or two block parameters") }
        call.blockParams = names
    }

    // MARK: Lookahead

    private func startsBlockParams() -> Bool {
        guard wordAhead(HandlebarsExpressionParser.asKeyword) else { return false }
        var j = i + 2
        while j < bytes.count && HandlebarsLexer.isWhitespace(bytes[j]) { j += 1 }
        return j < bytes.count && bytes[j] == UInt8(ascii: "|")
    }

    /// `key=` ahead: returns the key.
    private func hashKeyAhead() -> ArraySlice<UInt8>? {
        var j = i
        while j < bytes.count && HandlebarsExpressionParser.isIdentifierByte(bytes[j]) { j += 1 }
        guard j > i else { return nil }
        let key = bytes[i..<j]
        while j < bytes.count && HandlebarsLexer.isWhitespace(bytes[j]) { j += 1 }
        return j < bytes.count && bytes[j] == UInt8(ascii: "=") ? key : nil
    }

    /// `-?[0-9]+(\.[0-9]+)?` followed by a delimiter.
    private func numberAhead() -> ArraySlice<UInt8>? {
        var j = i
        if j < bytes.count && bytes[j] == UInt8(ascii: "-") { j += 1 }
        let digitsStart = j
        while j < bytes.count && isDigit(bytes[j]) { j += 1 }
        guard j > digitsStart else { return nil }
        if j + 1 < bytes.count && bytes[j] == UInt8(ascii: ".") && isDigit(bytes[j + 1]) {
            j += 1
            while j < bytes.count && isDigit(bytes[j]) { j += 1 }
        }
        return isDelimiter(j) ? bytes[i..<j] : nil
    }

    private func wordAhead(_ word: [UInt8]) -> Bool {
        guard i + word.count <= bytes.count, bytes[i..<(i + word.count)].elementsEqual(word) else { return false }
        return isDelimiter(i + word.count)
    }

    private func isDelimiter(_ j: Int) -> Bool {
        guard j < bytes.count else { return true }
        let c = bytes[j]
        return HandlebarsLexer.isWhitespace(c) || c == UInt8(ascii: ")") || c == UInt8(ascii: "|") || c == UInt8(ascii: "=")
    }

    private func isDelimiterOrSeparator(_ j: Int) -> Bool {
        isDelimiter(j) || bytes[j] == UInt8(ascii: "/") || bytes[j] == UInt8(ascii: ".")
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private mutating func skipSpace() {
        while i < bytes.count && HandlebarsLexer.isWhitespace(bytes[i]) { i += 1 }
    }

    private func character(at j: Int) -> String {
        j < bytes.count ? String(decoding: [bytes[j]], as: UTF8.self) : "end of tag"
    }

    /// Handlebars' ID: anything but whitespace and ``!"#%&'()*+,./;<=>@[\]^`{|}~``.
    static func isIdentifierByte(_ c: UInt8) -> Bool {
        if c >= 0x80 { return true }
        if HandlebarsLexer.isWhitespace(c) { return false }
        switch c {
        case UInt8(ascii: "!"), UInt8(ascii: "\""), UInt8(ascii: "#"), UInt8(ascii: "%")...UInt8(ascii: ","),
             UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ";")...UInt8(ascii: ">"), UInt8(ascii: "@"),
             UInt8(ascii: "[")...UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{")...UInt8(ascii: "~"):
            return false
        default:
            return c >= 0x20
        }
    }

    static let parentSegment: [UInt8] = Array("..".utf8)
    static let thisDotSegment: [UInt8] = Array(".".utf8)
    static let thisSegment: [UInt8] = Array("this".utf8)
    static let asKeyword: [UInt8] = Array("as".utf8)
    static let keywords: [([UInt8], HandlebarsValue)] = [
        (Array("true".utf8), .bool(true)), (Array("false".utf8), .bool(false)),
        (Array("null".utf8), .null), (Array("undefined".utf8), .missing),
    ]
}
