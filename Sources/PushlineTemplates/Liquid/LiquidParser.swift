import PushlineCore

/// Builds the node tree from tokens: one recursive pass, blocks closed by their end tags.
struct LiquidParser {
    let source: [UInt8]
    let options: TemplateOptions
    private var tokens: [LiquidToken]
    private var position = 0
    private var depth: Int
    /// Snippet names that `include`/`render` refer to, compiled along with the template.
    private(set) var snippetNames: [String] = []

    init(source: [UInt8], tokens: [LiquidToken], options: TemplateOptions, depth: Int = 0) {
        self.source = source
        self.tokens = tokens
        self.options = options
        self.depth = depth
    }

    private func name(_ token: LiquidToken) -> String { String(decoding: source[token.name], as: UTF8.self) }
    private func error(_ token: LiquidToken, _ message: String) -> TemplateCompileError {
        LiquidSource(source).error(at: token.offset, message)
    }

    /// Parses the whole token list.
    mutating func parseDocument() throws(TemplateCompileError) -> [LiquidNode] {
        let (nodes, end) = try parseBlock(until: [], opener: nil)
        if let end { throw error(end, "unexpected '\(name(end))' tag") }
        return nodes
    }

    /// Parses nodes until one of `terminators`; returns the nodes and the terminating tag (nil at
    /// the end of input, which is an error when `opener` is given).
    private mutating func parseBlock(until terminators: Set<String>, opener: LiquidToken?) throws(TemplateCompileError) -> ([LiquidNode], LiquidToken?) {
        var nodes: [LiquidNode] = []
        while position < tokens.count {
            let token = tokens[position]
            position += 1
            switch token.kind {
            case .text:
                if !token.content.isEmpty { nodes.append(.text(Array(source[token.content]))) }
            case .output:
                var p = try LiquidExpressionParser(source: source, range: token.content)
                if p.atEnd { continue }
                let expr = try p.parseFilteredExpression()
                try p.expectEnd()
                nodes.append(.output(expr))
            case .tag:
                let tagName = name(token)
                if terminators.contains(tagName) { return (nodes, token) }
                if let node = try parseTag(tagName, token) { nodes.append(node) }
            }
        }
        if let opener {
            let (line, _) = LiquidSource(source).position(of: opener.offset)
            let expected = terminators.sorted().last { $0.hasPrefix("end") } ?? "end"
            throw error(opener, "'\(name(opener))' tag opened at line \(line) was never closed (expected '\(expected)')")
        }
        return (nodes, nil)
    }

    private mutating func enterBlock(_ token: LiquidToken) throws(TemplateCompileError) {
        depth += 1
        if depth > options.maxNestingDepth {
            throw error(token, "blocks nest deeper than \(options.maxNestingDepth) levels")
        }
    }

    private mutating func parseTag(_ tagName: String, _ token: LiquidToken) throws(TemplateCompileError) -> LiquidNode? {
        // Comments are not markup: check them before tokenizing.
        if tagName == "#" {
            try checkInlineComment(token)
            return nil
        }
        if tagName == "comment" {
            if token.fromLiquidTag { try skipLiquidComment(token) }
            return nil
        }
        if tagName == "liquid" {
            // A `liquid` line may itself be a `liquid` tag: each level is a block, so a chain of
            // them is bounded like any nesting.
            try enterBlock(token)
            defer { depth -= 1 }
            var sub = LiquidParser(source: source, tokens: liquidTagLines(token), options: options, depth: depth)
            let nodes = try sub.parseDocument()
            snippetNames += sub.snippetNames
            return .block(nodes)
        }
        var markup = try LiquidExpressionParser(source: source, range: token.content)
        switch tagName {
        case "if", "unless":
            try enterBlock(token)
            defer { depth -= 1 }
            var condition = try markup.parseCondition()
            try markup.expectEnd()
            if tagName == "unless" { condition = .not(condition) }
            let end = "end" + tagName
            var branches: [LiquidBranch] = []
            var otherwise: [LiquidNode]? = nil
            var (body, terminator) = try parseBlock(until: ["elsif", "else", end], opener: token)
            branches.append(LiquidBranch(condition: condition, body: body))
            while let t = terminator, name(t) != end {
                if otherwise != nil {
                    // Anything after the first `else` is ignored, like Shopify Liquid.
                    (_, terminator) = try parseBlock(until: ["elsif", "else", end], opener: token)
                    continue
                }
                if name(t) == "elsif" {
                    var p = try LiquidExpressionParser(source: source, range: t.content)
                    let c = try p.parseCondition()
                    try p.expectEnd()
                    (body, terminator) = try parseBlock(until: ["elsif", "else", end], opener: token)
                    branches.append(LiquidBranch(condition: c, body: body))
                } else {
                    (body, terminator) = try parseBlock(until: ["elsif", "else", end], opener: token)
                    otherwise = body
                }
            }
            // Blocks holding only whitespace (and silent tags) print nothing, as in Shopify.
            if branches.allSatisfy({ LiquidParser.isBlank($0.body) }) && LiquidParser.isBlank(otherwise ?? []) {
                for i in branches.indices { branches[i].body = LiquidParser.removingBlankText(branches[i].body) }
                otherwise = otherwise.map(LiquidParser.removingBlankText)
            }
            return .conditional(branches: branches, otherwise: otherwise)

        case "case":
            try enterBlock(token)
            defer { depth -= 1 }
            let subject = try markup.parseExpression()
            try markup.expectEnd()
            var blocks: [LiquidCaseBlock] = []
            var (_, terminator) = try parseBlock(until: ["when", "else", "endcase"], opener: token)
            while let t = terminator, name(t) != "endcase" {
                let (body, next) = try parseBlock(until: ["when", "else", "endcase"], opener: token)
                if name(t) == "when" {
                    var p = try LiquidExpressionParser(source: source, range: t.content)
                    var values = [try p.parseExpression()]
                    // Shopify stops reading a `when` at the first token that is not `,` or `or`.
                    while p.consume(.comma) || p.consumeWord("or") { values.append(try p.parseExpression()) }
                    blocks.append(LiquidCaseBlock(values: values, body: body))
                } else {
                    blocks.append(LiquidCaseBlock(values: nil, body: body))
                }
                terminator = next
            }
            if blocks.allSatisfy({ LiquidParser.isBlank($0.body) }) {
                for i in blocks.indices { blocks[i].body = LiquidParser.removingBlankText(blocks[i].body) }
            }
            return .caseWhen(subject: subject, blocks: blocks)

        case "for":
            try enterBlock(token)
            defer { depth -= 1 }
            let variable = try markup.parseName("loop variable")
            guard markup.consumeWord("in") else { throw markup.error("expected 'in' in for loop, found \(markup.describe(markup.current))") }
            let collectionStart = markup.current.offset
            let collection = try markup.parseExpression()
            let collectionEnd = markup.current.offset
            var collectionText = Array(source[collectionStart..<collectionEnd])
            while let last = collectionText.last, LiquidText.isWhitespace(last) { collectionText.removeLast() }
            var loop = LiquidForLoop(
                name: variable + [UInt8(ascii: "-")] + collectionText, offsetContinues: false,
                variable: variable, collection: collection, limit: nil, offset: nil, reversed: false, body: [], otherwise: nil)
            while !markup.atEnd {
                if markup.consumeWord("reversed") { loop.reversed = true; continue }
                if markup.consumeWord("limit") {
                    try markup.expect(.colon, "':' after limit")
                    loop.limit = try markup.parseExpression()
                } else if markup.consumeWord("offset") {
                    try markup.expect(.colon, "':' after offset")
                    if markup.consumeWord("continue") { loop.offsetContinues = true } else { loop.offset = try markup.parseExpression() }
                } else if markup.consume(.comma) {
                    continue
                } else {
                    throw markup.error("unexpected \(markup.describe(markup.current)) in for loop")
                }
            }
            let (body, terminator) = try parseBlock(until: ["else", "endfor"], opener: token)
            loop.body = body
            if let t = terminator, name(t) == "else" {
                loop.otherwise = try parseBlock(until: ["endfor"], opener: token).0
            }
            if LiquidParser.isBlank(loop.body) && LiquidParser.isBlank(loop.otherwise ?? []) {
                loop.body = LiquidParser.removingBlankText(loop.body)
                loop.otherwise = loop.otherwise.map(LiquidParser.removingBlankText)
            }
            return .forLoop(loop)

        case "break": return .breakLoop
        case "continue": return .continueLoop

        case "assign":
            let target = try markup.parseName("variable name")
            try markup.expect(.equals, "'=' in assign")
            let value = try markup.parseFilteredExpression()
            try markup.expectEnd()
            return .assign(name: target, value: value)

        case "capture":
            try enterBlock(token)
            defer { depth -= 1 }
            let target = try markup.parseName("variable name")
            try markup.expectEnd()
            let (body, _) = try parseBlock(until: ["endcapture"], opener: token)
            return .capture(name: target, body: body)

        case "increment", "decrement":
            let target = try markup.parseName("variable name")
            try markup.expectEnd()
            return tagName == "increment" ? .increment(name: target) : .decrement(name: target)

        case "echo":
            if markup.atEnd { return nil }
            let expr = try markup.parseFilteredExpression()
            try markup.expectEnd()
            return .output(expr)

        case "raw":
            // The lexer put the body in one text token followed by `endraw`.
            var text: [UInt8] = []
            if position < tokens.count, tokens[position].kind == .text {
                text = Array(source[tokens[position].content])
                position += 1
            }
            guard position < tokens.count, name(tokens[position]) == "endraw" else { throw error(token, "'raw' tag was never closed") }
            position += 1
            return text.isEmpty ? nil : .text(text)

        case "include", "render":
            return .include(try parseInclude(&markup, isolated: tagName == "render"))

        default:
            throw error(token, "unknown tag '\(tagName)'")
        }
    }

    /// Every line of a multi-line `{% # … %}` must start with `#`.
    private func checkInlineComment(_ token: LiquidToken) throws(TemplateCompileError) {
        var i = token.content.lowerBound
        while i < token.content.upperBound {
            if source[i] == 0x0A {
                var j = i + 1
                while j < token.content.upperBound, LiquidText.isWhitespace(source[j]), source[j] != 0x0A { j += 1 }
                if j < token.content.upperBound, source[j] != 0x0A, source[j] != UInt8(ascii: "#") {
                    throw LiquidSource(source).error(at: j, "every line of an inline comment must start with '#'")
                }
            }
            i += 1
        }
    }

    private mutating func skipLiquidComment(_ token: LiquidToken) throws(TemplateCompileError) {
        var nested = 0
        while position < tokens.count {
            let n = name(tokens[position])
            position += 1
            if n == "comment" { nested += 1 }
            if n == "endcomment" {
                if nested == 0 { return }
                nested -= 1
            }
        }
        throw error(token, "'comment' tag was never closed")
    }

    private mutating func parseInclude(_ markup: inout LiquidExpressionParser, isolated: Bool) throws(TemplateCompileError) -> LiquidInclude {
        var include = LiquidInclude(snippet: nil, snippetExpression: nil, isolated: isolated, subject: nil, subjectIsLoop: false, alias: nil, arguments: [])
        if markup.current.kind == .string {
            let nameToken = markup.advance()
            let snippet = markup.text(nameToken)
            guard options.snippets[snippet] != nil else {
                throw markup.error("unknown snippet '\(snippet)' (snippets come from the campaign's snippets, never files)", at: nameToken)
            }
            snippetNames.append(snippet)
            include.snippet = snippet
        } else if !isolated {
            // `include` may name its snippet with a variable: every snippet must then be compiled.
            include.snippetExpression = try markup.parseExpression()
            snippetNames += options.snippets.keys.sorted()
        } else {
            throw markup.error("expected a snippet name in quotes, found \(markup.describe(markup.current))")
        }
        if markup.isWord("with") || markup.isWord("for") {
            include.subjectIsLoop = markup.isWord("for")
            _ = markup.advance()
            include.subject = try markup.parseExpression()
            if markup.consumeWord("as") { include.alias = try markup.parseName("alias") }
        }
        _ = markup.consume(.comma)
        while !markup.atEnd {
            guard markup.current.kind == .identifier else { throw markup.error("expected an argument name, found \(markup.describe(markup.current))") }
            let key = markup.bytes(markup.advance())
            try markup.expect(.colon, "':' after argument name")
            include.arguments.append((key, try markup.parseExpression()))
            _ = markup.consume(.comma)
        }
        return include
    }

    /// Whether nodes print nothing but whitespace: text that is all whitespace, silent tags, and
    /// blocks made of those.
    static func isBlank(_ nodes: [LiquidNode]) -> Bool {
        nodes.allSatisfy { node in
            switch node {
            case .text(let t): t.allSatisfy(LiquidText.isWhitespace)
            case .assign, .capture, .breakLoop, .continueLoop: true
            case .conditional(let branches, let otherwise): branches.allSatisfy { isBlank($0.body) } && isBlank(otherwise ?? [])
            case .caseWhen(_, let blocks): blocks.allSatisfy { isBlank($0.body) }
            case .forLoop(let loop): isBlank(loop.body) && isBlank(loop.otherwise ?? [])
            case .block(let inner): isBlank(inner)
            case .output, .increment, .decrement, .include: false
            }
        }
    }

    static func removingBlankText(_ nodes: [LiquidNode]) -> [LiquidNode] {
        nodes.filter { if case .text = $0 { false } else { true } }
    }

    /// The lines of `{% liquid %}` as tag tokens (ranges into the same source, nothing copied).
    private func liquidTagLines(_ token: LiquidToken) -> [LiquidToken] {
        var lines: [LiquidToken] = []
        var i = token.content.lowerBound
        let end = token.content.upperBound
        while i < end {
            var lineEnd = i
            while lineEnd < end && source[lineEnd] != 0x0A { lineEnd += 1 }
            var lo = i, hi = lineEnd
            while lo < hi, LiquidText.isWhitespace(source[lo]) { lo += 1 }
            while hi > lo, LiquidText.isWhitespace(source[hi - 1]) { hi -= 1 }
            if lo < hi {
                var nameEnd = lo
                if source[lo] == UInt8(ascii: "#") { nameEnd += 1 } else {
                    while nameEnd < hi, LiquidLexer.isWordByte(source[nameEnd]) { nameEnd += 1 }
                }
                var markup = nameEnd
                while markup < hi, LiquidText.isWhitespace(source[markup]) { markup += 1 }
                var line = LiquidToken(kind: .tag, content: markup..<hi, name: lo..<nameEnd, offset: lo)
                line.fromLiquidTag = true
                lines.append(line)
            }
            i = lineEnd + 1
        }
        return lines
    }
}
