import PushlineCore

/// Parses the markup of one tag or output: expressions, filters, conditions.
struct LiquidExpressionParser {
    let source: [UInt8]
    private let tokens: [LiquidMarkupToken]
    private(set) var position = 0
    /// Open parentheses and brackets around the expression being parsed.
    private var depth = 0
    /// Deepest nesting of `(…..…)` and `[…]`: expressions are parsed, evaluated and freed by
    /// recursion, so their depth is bounded (a compile error, never a stack overflow).
    static let maxExpressionDepth = 64

    init(source: [UInt8], range: Range<Int>) throws(TemplateCompileError) {
        self.source = source
        self.tokens = try LiquidMarkupLexer(source: source).tokenize(range)
    }

    private mutating func enter(_ token: LiquidMarkupToken) throws(TemplateCompileError) {
        depth += 1
        if depth > Self.maxExpressionDepth {
            throw error("expression nests deeper than \(Self.maxExpressionDepth) levels of parentheses and brackets", at: token)
        }
    }

    var current: LiquidMarkupToken { tokens[position] }
    var atEnd: Bool { current.kind == .end }

    func error(_ message: String, at token: LiquidMarkupToken? = nil) -> TemplateCompileError {
        LiquidSource(source).error(at: (token ?? current).offset, message)
    }

    func text(_ token: LiquidMarkupToken) -> String { String(decoding: source[token.range], as: UTF8.self) }
    func bytes(_ token: LiquidMarkupToken) -> [UInt8] { Array(source[token.range]) }

    func isWord(_ word: String, _ token: LiquidMarkupToken? = nil) -> Bool {
        let t = token ?? current
        return t.kind == .identifier && source[t.range].elementsEqual(word.utf8)
    }

    mutating func advance() -> LiquidMarkupToken {
        let t = tokens[position]
        if t.kind != .end { position += 1 }
        return t
    }

    @discardableResult
    mutating func expect(_ kind: LiquidMarkupToken.Kind, _ what: String) throws(TemplateCompileError) -> LiquidMarkupToken {
        guard current.kind == kind else { throw error("expected \(what), found \(describe(current))") }
        return advance()
    }

    mutating func consume(_ kind: LiquidMarkupToken.Kind) -> Bool {
        guard current.kind == kind else { return false }
        position += 1
        return true
    }

    mutating func consumeWord(_ word: String) -> Bool {
        guard isWord(word) else { return false }
        position += 1
        return true
    }

    func expectEnd() throws(TemplateCompileError) {
        guard atEnd else { throw error("unexpected \(describe(current))") }
    }

    func describe(_ token: LiquidMarkupToken) -> String {
        token.kind == .end ? "end of markup" : "'\(text(token))'"
    }

    /// A variable name as assigned or captured: a word, or digits (`{% assign 123 = … %}` is legal).
    mutating func parseName(_ what: String) throws(TemplateCompileError) -> [UInt8] {
        switch current.kind {
        case .identifier, .integer:
            if current.kind == .identifier, source[current.range.upperBound - 1] == UInt8(ascii: "?"), what != "loop variable" {
                throw error("invalid \(what) '\(text(current))'")
            }
            return bytes(advance())
        case .string:
            return bytes(advance())
        default:
            throw error("expected \(what), found \(describe(current))")
        }
    }

    // MARK: Expressions

    mutating func parseExpression() throws(TemplateCompileError) -> LiquidExpression {
        let token = current
        switch token.kind {
        case .string:
            position += 1
            return .literal(.string(bytes(token)))
        case .integer(let v):
            position += 1
            return .literal(.int(v))
        case .float(let v):
            position += 1
            return .literal(.double(v))
        case .openParen:
            position += 1
            try enter(token)
            defer { depth -= 1 }
            let lower = try parseExpression()
            try expect(.dotDot, "'..' in range")
            let upper = try parseExpression()
            try expect(.closeParen, "')' closing range")
            return .range(lower, upper)
        case .identifier:
            position += 1
            if current.kind != .dot && current.kind != .openBracket {
                switch String(decoding: source[token.range], as: UTF8.self) {
                case "true": return .literal(.bool(true))
                case "false": return .literal(.bool(false))
                case "nil", "null": return .literal(.null)
                case "empty": return .literal(.empty)
                case "blank": return .literal(.blank)
                default: break
                }
            }
            return .variable(try parseSteps(root: bytes(token), start: token))
        case .openBracket:
            // `{{ ["key"] }}`: a root looked up by a computed name.
            position += 1
            try enter(token)
            let key = try parseExpression()
            depth -= 1
            try expect(.closeBracket, "']'")
            if case .literal(.string(let name)) = key { return .variable(try parseSteps(root: name, start: token)) }
            var variable = try parseSteps(root: [], start: token)
            variable.rootExpression = key
            variable.jsonPath = nil
            return .variable(variable)
        default:
            throw error("expected a value, found \(describe(token))")
        }
    }

    private mutating func parseSteps(root: [UInt8], start: LiquidMarkupToken) throws(TemplateCompileError) -> LiquidVariable {
        var steps: [LiquidVariable.Step] = []
        while true {
            if consume(.dot) {
                guard current.kind == .identifier else { throw error("expected a property name after '.', found \(describe(current))") }
                steps.append(.key(bytes(advance())))
            } else if current.kind == .openBracket {
                let bracket = advance()
                try enter(bracket)
                let inner = try parseExpression()
                depth -= 1
                try expect(.closeBracket, "']'")
                switch inner {
                case .literal(.string(let key)): steps.append(.key(key))
                case .literal(.int(let index)): steps.append(.index(index))
                default: steps.append(.dynamic(inner))
                }
            } else {
                break
            }
        }
        let end = position > 0 ? tokens[position - 1].range.upperBound : start.range.upperBound
        let text = String(decoding: source[start.offset..<max(start.offset, end)], as: UTF8.self)
        var components: [JSONPath.Component] = [.key(root)]
        for step in steps {
            switch step {
            case .key(let k): components.append(.key(k))
            case .index(let i): components.append(.index(i))
            case .dynamic: break
            }
        }
        let isStatic = components.count == steps.count + 1
        return LiquidVariable(root: root, rootExpression: nil, steps: steps, jsonPath: isStatic ? JSONPath(components: components) : nil, text: text)
    }

    /// `expression | filter: arg, key: value | filter`.
    mutating func parseFilteredExpression() throws(TemplateCompileError) -> LiquidFilteredExpression {
        let base = try parseExpression()
        var filters: [LiquidFilterCall] = []
        while consume(.pipe) {
            guard current.kind == .identifier else { throw error("expected a filter name after '|', found \(describe(current))") }
            let nameToken = advance()
            guard let filter = LiquidFilter(rawValue: text(nameToken)) else {
                throw error("unknown filter '\(text(nameToken))'", at: nameToken)
            }
            var call = LiquidFilterCall(filter: filter, arguments: [], keywordArguments: [])
            if consume(.colon) {
                repeat {
                    if current.kind == .identifier, tokens[position + 1].kind == .colon {
                        let name = bytes(advance())
                        position += 1
                        call.keywordArguments.append((name, try parseExpression()))
                    } else {
                        call.arguments.append(try parseExpression())
                    }
                } while consume(.comma)
            }
            let arity = filter.arity
            guard arity.contains(call.arguments.count) else {
                throw error("filter '\(filter.rawValue)' takes \(arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)") argument(s), got \(call.arguments.count)", at: nameToken)
            }
            filters.append(call)
        }
        return LiquidFilteredExpression(base: base, filters: filters)
    }

    // MARK: Conditions

    /// `a == b and c or d`: `and`/`or` share one precedence and group from the right, like Shopify.
    mutating func parseCondition() throws(TemplateCompileError) -> LiquidCondition {
        let first = try parseComparison()
        var rest: [(isAnd: Bool, term: LiquidCondition)] = []
        while true {
            let isAnd: Bool
            if consumeWord("and") { isAnd = true } else if consumeWord("or") { isAnd = false } else { break }
            rest.append((isAnd, try parseComparison()))
        }
        return rest.isEmpty ? first : .chain(first: first, rest: rest)
    }

    private mutating func parseComparison() throws(TemplateCompileError) -> LiquidCondition {
        let left = try parseExpression()
        if case .comparison(let op) = current.kind {
            position += 1
            return .compare(left, op, try parseExpression())
        }
        return .truthy(left)
    }
}
