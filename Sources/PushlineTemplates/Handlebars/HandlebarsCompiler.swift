import PushlineCore

/// Turns template source into a `HandlebarsProgram`: lexes, applies whitespace rules, then
/// builds the block tree, resolving every name once (helpers, block parameters, `../` depth).
struct HandlebarsCompiler {
    let options: TemplateOptions
    /// Handlebars' `compat` option (Mustache name resolution up the context stack).
    let compat: Bool
    /// Compiled partials; `.partial(index:)` nodes point here. Filled lazily, so a partial that
    /// includes itself compiles once and recurses at render time (bounded by `maxNestingDepth`).
    private(set) var partials: [HandlebarsProgram] = []
    private var partialIndex: [String: Int] = [:]
    /// Partials being compiled inside one another. A standalone partial that includes itself is
    /// compiled again at each deeper indentation (a new table key), so this must be bounded.
    private(set) var partialDepth = 0
    /// Source bytes compiled for partials so far: each distinct indentation compiles its own
    /// indented copy, so a template with thousands of differently indented partial tags could
    /// otherwise build gigabytes of copies.
    private var partialSourceBytes = 0
    static let maxPartialSourceBytes = 1 << 24

    init(options: TemplateOptions, compat: Bool) {
        self.options = options
        self.compat = compat
    }

    mutating func compile(_ source: [UInt8]) throws(TemplateCompileError) -> HandlebarsProgram {
        var unit = HandlebarsCompilationUnit(source: source, options: options)
        return try unit.build(with: &self)
    }

    /// The partial table index for `name` at `indent` (a standalone partial indents every line).
    mutating func partial(
        named name: [UInt8], indent: [UInt8], error: (String) -> TemplateCompileError
    ) throws(TemplateCompileError) -> Int? {
        let nameText = String(decoding: name, as: UTF8.self)
        let key = nameText + "\u{0}" + String(decoding: indent, as: UTF8.self)
        if let index = partialIndex[key] { return index }
        guard let snippet = options.snippets[nameText] else { return nil }
        let lines = indent.isEmpty ? 0 : snippet.utf8.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        partialSourceBytes += snippet.utf8.count + lines * indent.count
        if partialSourceBytes > Self.maxPartialSourceBytes {
            throw error(
                "partials expand to more than \(Self.maxPartialSourceBytes) bytes of source (each indentation compiles its own copy)")
        }
        partialDepth += 1
        defer { partialDepth -= 1 }
        let index = partials.count
        partials.append([])
        partialIndex[key] = index
        let program: HandlebarsProgram
        do {
            program = try compile(Self.indent(Array(snippet.utf8), by: indent))
        } catch {
            // Said once, at the outermost partial: a deep chain would repeat it at every level.
            if error.message.hasPrefix("in partial ") { throw error }
            throw TemplateCompileError(
                line: error.line, column: error.column, message: "in partial '\(nameText)': \(error.message)")
        }
        partials[index] = program
        return index
    }

    /// Mustache spec: each line of a standalone partial is indented like the tag (not a
    /// trailing empty line after the last newline).
    static func indent(_ source: [UInt8], by indent: [UInt8]) -> [UInt8] {
        guard !indent.isEmpty, !source.isEmpty else { return source }
        var out = indent
        for (i, c) in source.enumerated() {
            out.append(c)
            if c == 0x0A && i + 1 < source.count { out.append(contentsOf: indent) }
        }
        return out
    }
}

/// One template text being compiled (the main template or one partial).
private struct HandlebarsCompilationUnit {
    let source: [UInt8]
    let positions: HandlebarsSourcePositions
    let options: TemplateOptions

    private struct OpenBlock {
        var kind: HandlebarsBlock.Kind
        var subject: HandlebarsExpression
        var blockParamCount: Int
        var headText: [UInt8]
        var tagOffset: Int
        var body: HandlebarsProgram = []
        var inverse: HandlebarsProgram = []
        var inInverse = false
        var sawElse = false
        /// Opened by `{{else if …}}`: closed together with the block it continues.
        var chained = false

        var node: HandlebarsNode {
            .block(HandlebarsBlock(kind: kind, subject: subject, body: body, inverse: inverse, blockParamCount: blockParamCount))
        }

        mutating func append(_ node: HandlebarsNode) {
            if inInverse { inverse.append(node) } else { body.append(node) }
        }
    }

    private var stack: [OpenBlock] = []
    private var root: HandlebarsProgram = []
    /// Block parameter names in scope, innermost last.
    private var blockParamScopes: [[[UInt8]]] = []

    init(source: [UInt8], options: TemplateOptions) {
        self.source = source
        self.options = options
        self.positions = HandlebarsSourcePositions(source: source)
    }

    private func error(_ offset: Int, _ message: String) -> TemplateCompileError {
        let (line, column) = positions.lineAndColumn(offset)
        return TemplateCompileError(line: line, column: column, message: message)
    }

    private mutating func append(_ node: HandlebarsNode) {
        if stack.isEmpty { root.append(node) } else { stack[stack.count - 1].append(node) }
    }

    mutating func build(with compiler: inout HandlebarsCompiler) throws(TemplateCompileError) -> HandlebarsProgram {
        let lexer = HandlebarsLexer(source: source)
        let (tokens, indents) = HandlebarsWhitespace.apply(try lexer.tokenize())
        for token in tokens {
            switch token.kind {
            case .text: appendText(token.bytes)
            case .comment: break
            case .mustache, .unescaped: try compileMustache(token)
            case .blockOpen, .inverseOpen: try openBlock(token)
            case .elseTag: try compileElse(token)
            case .close: try closeBlock(token)
            case .partial: try compilePartial(token, indent: indents[token.offset] ?? [], compiler: &compiler)
            case .unsupported:
                throw error(token.tagOffset, "partial blocks, inline partials and decorators ({{#>, {{#*, {{*) are not supported")
            }
        }
        if let open = stack.last(where: { !$0.chained }) {
            let (line, column) = positions.lineAndColumn(open.tagOffset)
            let (endLine, endColumn) = positions.lineAndColumn(source.count)
            throw TemplateCompileError(
                line: endLine, column: endColumn,
                message: "unclosed {{#\(String(decoding: open.headText, as: UTF8.self))}} opened at line \(line), column \(column)")
        }
        return root
    }

    /// Merges adjacent text (after comments and stripped tags vanish) into one run.
    private mutating func appendText(_ bytes: [UInt8]) {
        func merge(_ program: inout HandlebarsProgram) {
            if case .text(var previous) = program.last {
                // Emptied first so `previous` is the only reference and grows in place: copying
                // it for every merge was quadratic in a template of 100,000 `x{{! }}` pieces.
                program[program.count - 1] = .text([])
                previous.append(contentsOf: bytes)
                program[program.count - 1] = .text(previous)
            } else {
                program.append(.text(bytes))
            }
        }
        if stack.isEmpty {
            merge(&root)
        } else if stack[stack.count - 1].inInverse {
            merge(&stack[stack.count - 1].inverse)
        } else {
            merge(&stack[stack.count - 1].body)
        }
    }

    // MARK: Tags

    private mutating func compileMustache(_ token: HandlebarsToken) throws(TemplateCompileError) {
        var parser = HandlebarsExpressionParser(token.bytes, base: token.offset, positions: positions)
        let call = try parser.parseCall()
        if !call.blockParams.isEmpty { throw error(token.offset, "block parameters are only allowed on blocks") }
        let expression: HandlebarsExpression
        if call.hasArguments {
            expression = try helperCall(call)
        } else {
            expression = try lookup(call.head)
        }
        if case .path(let path) = expression {
            append(.lookup(HandlebarsLookup(path: path, escaped: token.kind == .mustache)))
        } else {
            append(.value(expression, escaped: token.kind == .mustache))
        }
    }

    private mutating func openBlock(_ token: HandlebarsToken) throws(TemplateCompileError) {
        var parser = HandlebarsExpressionParser(token.bytes, base: token.offset, positions: positions)
        let call = try parser.parseCall(emptyMessage: "block name expected")
        var block = try blockHead(call, tagOffset: token.tagOffset)
        // `{{^name}}` and `{{^if x}}`: the content is the block's inverse.
        if token.kind == .inverseOpen { block.inInverse = true }
        if stack.filter({ !$0.chained }).count >= options.maxNestingDepth {
            throw error(token.tagOffset, "blocks nested deeper than \(options.maxNestingDepth) levels")
        }
        try checkChainDepth(token)
        push(block, blockParams: call.blockParams)
    }

    /// Each `{{else if}}` is a block inside the previous one's inverse, rendered and freed by
    /// recursion: blocks and their `else if` branches together nest at most 4 × maxNestingDepth.
    private func checkChainDepth(_ token: HandlebarsToken) throws(TemplateCompileError) {
        let limit = max(0, min(options.maxNestingDepth, 1 << 20)) * 4
        if stack.count >= limit {
            throw error(token.tagOffset, "blocks and {{else if}} branches nest deeper than \(limit) levels")
        }
    }

    private mutating func push(_ block: OpenBlock, blockParams: [[UInt8]]) {
        stack.append(block)
        blockParamScopes.append(blockParams)
    }

    private mutating func pop() -> OpenBlock {
        blockParamScopes.removeLast()
        return stack.removeLast()
    }

    private mutating func compileElse(_ token: HandlebarsToken) throws(TemplateCompileError) {
        guard !stack.isEmpty else { throw error(token.tagOffset, "{{else}} outside a block") }
        let top = stack.count - 1
        if stack[top].sawElse { throw error(token.tagOffset, "a second {{else}} in one block") }
        stack[top].sawElse = true
        stack[top].inInverse.toggle()
        var parser = HandlebarsExpressionParser(token.bytes, base: token.offset, positions: positions)
        if parser.atEnd { return }
        // `{{else if x}}`: a block inside the inverse that the outer close tag also closes.
        let call = try parser.parseCall()
        var block = try blockHead(call, tagOffset: token.tagOffset)
        block.chained = true
        try checkChainDepth(token)
        push(block, blockParams: call.blockParams)
    }

    private mutating func closeBlock(_ token: HandlebarsToken) throws(TemplateCompileError) {
        let leading = token.bytes.drop(while: HandlebarsLexer.isWhitespace)
        let name = Array(leading[..<(leading.lastIndex(where: { !HandlebarsLexer.isWhitespace($0) }).map { $0 + 1 } ?? leading.startIndex)])
        guard !stack.isEmpty else {
            throw error(token.tagOffset, "{{/\(String(decoding: name, as: UTF8.self))}} closes no open block")
        }
        while let last = stack.last, last.chained {
            let chained = pop()
            stack[stack.count - 1].append(chained.node)
        }
        let open = stack[stack.count - 1]
        guard open.headText == name else {
            let (line, column) = positions.lineAndColumn(open.tagOffset)
            throw error(
                token.tagOffset,
                "mismatched {{/\(String(decoding: name, as: UTF8.self))}}: {{#\(String(decoding: open.headText, as: UTF8.self))}} opened at line \(line), column \(column) is still open")
        }
        append(pop().node)
    }

    private mutating func compilePartial(
        _ token: HandlebarsToken, indent: [UInt8], compiler: inout HandlebarsCompiler
    ) throws(TemplateCompileError) {
        var parser = HandlebarsExpressionParser(token.bytes, base: token.offset, positions: positions)
        let name = try parser.parsePartialName()
        var call = HandlebarsCallSyntax(head: .literal(.missing, raw: [], offset: token.offset), offset: token.offset)
        try parser.parseRemainingArguments(into: &call)
        if !call.hash.isEmpty { throw error(token.offset, "partial hash arguments are not supported") }
        if !call.blockParams.isEmpty || call.params.count > 1 {
            throw error(token.offset, "a partial takes at most one context argument")
        }
        let context = try call.params.first.map { (operand) throws(TemplateCompileError) in try argument(operand) }
        // A standalone partial that includes itself compiles again at each deeper indentation.
        if compiler.partialDepth >= options.maxNestingDepth {
            throw error(token.offset, "partials nest deeper than \(options.maxNestingDepth) levels")
        }
        guard let index = try compiler.partial(named: name, indent: indent, error: { error(token.offset, $0) }) else {
            // Mustache renders an unknown partial as nothing; Handlebars (and Pushline) refuse it.
            if compiler.compat { return }
            throw error(token.offset, "unknown partial '\(String(decoding: name, as: UTF8.self))' (partials come from the campaign's snippets)")
        }
        append(.partial(index: index, context: context))
    }

    // MARK: Names

    /// The block a `{{#…}}` (or `{{else …}}`) opens.
    private func blockHead(_ call: HandlebarsCallSyntax, tagOffset: Int) throws(TemplateCompileError) -> OpenBlock {
        let name = simpleName(call.head)
        func make(_ kind: HandlebarsBlock.Kind, _ subject: HandlebarsExpression) -> OpenBlock {
            OpenBlock(kind: kind, subject: subject, blockParamCount: call.blockParams.count, headText: call.headText, tagOffset: tagOffset)
        }
        func single(_ helper: String) throws(TemplateCompileError) -> HandlebarsExpression {
            guard call.params.count == 1 else {
                throw error(call.offset, "#\(helper) requires exactly one argument")
            }
            return try argument(call.params[0])
        }
        switch name {
        case "if", "unless":
            var includeZero = false
            for pair in call.hash {
                guard String(decoding: pair.key, as: UTF8.self) == "includeZero",
                      case .literal(.bool(let flag), _, _) = pair.value else {
                    throw error(call.offset, "#\(name!) takes only includeZero=true|false")
                }
                includeZero = flag
            }
            if !call.blockParams.isEmpty { throw error(call.offset, "#\(name!) takes no block parameters") }
            let subject = try single(name!)
            return make(name == "if" ? .if(includeZero: includeZero) : .unless(includeZero: includeZero), subject)
        case "each", "with":
            if !call.hash.isEmpty { throw error(call.offset, "#\(name!) takes no hash arguments") }
            if name == "with" && call.blockParams.count > 1 { throw error(call.offset, "#with takes one block parameter") }
            return make(name == "each" ? .each : .with, try single(name!))
        default:
            if !call.blockParams.isEmpty { throw error(call.offset, "block parameters need #each or #with") }
            if call.hasArguments { return make(.section, try helperCall(call)) }
            return make(.section, try lookup(call.head))
        }
    }

    /// A single plain identifier (`if`, `upper`), the only form a helper name takes.
    private func simpleName(_ operand: HandlebarsOperandSyntax) -> String? {
        guard case .path(let path) = operand, !path.isData, path.segments.count == 1, !path.segments[0].literal else { return nil }
        return String(decoding: path.segments[0].bytes, as: UTF8.self)
    }

    private func helperCall(_ call: HandlebarsCallSyntax) throws(TemplateCompileError) -> HandlebarsExpression {
        // Arguments first, so errors come in source order (a bad path before an unknown helper).
        var arguments: [HandlebarsExpression] = []
        for param in call.params { arguments.append(try argument(param)) }
        var hash: [HandlebarsHashArgument] = []
        for pair in call.hash { hash.append(HandlebarsHashArgument(key: pair.key, value: try argument(pair.value))) }
        guard let name = simpleName(call.head), let helper = HandlebarsHelper(rawValue: name) else {
            let text = String(decoding: call.headText, as: UTF8.self)
            if ["if", "unless", "each", "with"].contains(text) {
                throw error(call.offset, "'\(text)' is a block helper: write {{#\(text) …}}…{{/\(text)}}")
            }
            throw error(call.offset, "unknown helper '\(text)' (helpers: \(HandlebarsHelper.allNames))")
        }
        if let message = helper.arityError(positional: call.params.count) {
            throw error(call.offset, "helper '\(name)' \(message)")
        }
        return .helper(helper, arguments, hash: hash)
    }

    /// An argument: paths look up, literals are values, subexpressions call helpers.
    private func argument(_ operand: HandlebarsOperandSyntax) throws(TemplateCompileError) -> HandlebarsExpression {
        switch operand {
        case .path(let path): return .path(try resolve(path))
        case .literal(let value, _, _): return .literal(value)
        case .subexpression(let call): return try helperCall(call)
        }
    }

    /// A mustache or section name without arguments: a literal names a key (`{{"foo bar"}}`).
    private func lookup(_ operand: HandlebarsOperandSyntax) throws(TemplateCompileError) -> HandlebarsExpression {
        switch operand {
        case .path(let path): return .path(try resolve(path))
        case .literal(_, let raw, let offset):
            let syntax = HandlebarsPathSyntax(
                isData: false, segments: [.init(bytes: raw, literal: true)],
                text: String(decoding: raw, as: UTF8.self), offset: offset)
            return .path(try resolve(syntax))
        case .subexpression(let call): return try helperCall(call)
        }
    }

    private func resolve(_ path: HandlebarsPathSyntax) throws(TemplateCompileError) -> HandlebarsPath {
        var segments = path.segments[...]
        var depth = 0
        var scoped = false
        func isKeyword(_ segment: HandlebarsPathSyntax.Segment, _ word: [UInt8]) -> Bool { !segment.literal && segment.bytes == word }
        while let first = segments.first, isKeyword(first, HandlebarsExpressionParser.parentSegment) {
            depth += 1
            scoped = true
            segments = segments.dropFirst()
        }
        if let first = segments.first,
           isKeyword(first, HandlebarsExpressionParser.thisSegment) || isKeyword(first, HandlebarsExpressionParser.thisDotSegment) {
            scoped = true
            segments = segments.dropFirst()
        }
        for segment in segments
        where isKeyword(segment, HandlebarsExpressionParser.thisSegment) || isKeyword(segment, HandlebarsExpressionParser.thisDotSegment)
            || isKeyword(segment, HandlebarsExpressionParser.parentSegment) {
            throw error(path.offset, "invalid path '\(path.text)': 'this', '.' and '..' may only start a path")
        }
        var base: HandlebarsPath.Base = .context(depth: depth, scoped: scoped)
        if path.isData {
            guard let name = segments.first else { throw error(path.offset, "data variable name expected after '@'") }
            segments = segments.dropFirst()
            switch String(decoding: name.bytes, as: UTF8.self) {
            case "root": base = .root
            case "index": base = .data(.index, depth: depth)
            case "key": base = .data(.key, depth: depth)
            case "first": base = .data(.first, depth: depth)
            case "last": base = .data(.last, depth: depth)
            default: base = .data(.unknown, depth: depth)
            }
        } else if !scoped, let first = segments.first {
            for (distance, scope) in blockParamScopes.reversed().filter({ !$0.isEmpty }).enumerated() {
                if let slot = scope.firstIndex(of: first.bytes) {
                    base = .blockParameter(scopes: distance, slot: slot)
                    segments = segments.dropFirst()
                    break
                }
            }
        }
        let resolved = segments.map { segment in
            HandlebarsSegment(key: segment.bytes, index: Self.arrayIndex(segment.bytes))
        }
        let jsonPath = resolved.isEmpty || resolved.contains(where: { $0.index != nil })
            ? nil : JSONPath(components: resolved.map { .key($0.key) })
        return HandlebarsPath(base: base, segments: resolved, jsonPath: jsonPath, text: path.text)
    }

    private static func arrayIndex(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, bytes.count < 10, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
