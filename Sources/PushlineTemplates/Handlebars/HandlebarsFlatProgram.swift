import PushlineCore

/// The shapes of most push texts, compiled flat: literal text, `{{path}}` / `{{{path}}}` of a
/// plain context path, `upper` / `uppercase` / `lower` / `lowercase` of one such path, and
/// `#if` / `#unless` (with `{{else}}`, `includeZero=`) on one, nested.
///
/// Rendering is a loop over ops of plain indices: values go from the record's bytes into the
/// output, cased byte by byte, with no `HandlebarsValue` built, no renderer, no frame and nothing
/// retained per node. Whatever the fast path cannot decide exactly (a missing path in strict mode,
/// non-ASCII text a case helper must treat as Unicode, an array or object under a helper, a
/// helper result over the byte limit) is handed to the general renderer for that one node, so
/// results are the general renderer's, always.
struct HandlebarsFlatProgram: Sendable {
    enum Op: Sendable {
        /// Literal bytes of `text`; `verbatim` when JSON escaping leaves them as they are.
        case text(Range<Int>, verbatim: Bool)
        /// `outputs[i]`.
        case output(Int)
        /// `branches[i]`: its bodies are the ops after it.
        case branch(Int)
    }

    enum Transform: Sendable {
        case none, upper, lower
    }

    struct Output: Sendable {
        var path: JSONPath
        /// HTML-escaped: the node's own flag and the template's option together.
        var escaped: Bool
        var transform: Transform
        /// The node as a one-node program, for the general renderer.
        var node: HandlebarsProgram
    }

    struct Branch: Sendable {
        var path: JSONPath
        var includeZero: Bool
        /// `#unless`: the body renders when the value is empty.
        var negated: Bool
        var then: Range<Int>
        var otherwise: Range<Int>
    }

    let text: [UInt8]
    let ops: [Op]
    let outputs: [Output]
    let branches: [Branch]
    let strict: Bool
    /// `TemplateOptions.maxOutputBytes`: the most a helper may build.
    let maxHelperBytes: Int
    /// Records up to this size (the whole line's bytes bound every value in it) cannot make the
    /// general renderer hit its step limit on this program, so the fast path (which counts no
    /// steps) gives its result; a larger record is rendered by the general renderer.
    let maxRecordBytes: Int

    /// Nil unless every node has one of the shapes above and the options leave the general
    /// renderer nothing to decide that the fast path would not (compat name resolution, a render
    /// depth limit the blocks reach).
    init?(_ program: HandlebarsProgram, options: TemplateOptions, compat: Bool) {
        guard !compat else { return nil }
        var builder = Builder(htmlEscape: options.htmlEscape)
        guard builder.add(program, depth: 1) else { return nil }
        // The general renderer counts one level per program it renders (the template, then each
        // block body) and fails past 4 × maxNestingDepth; a per-node fallback renders at depth 1.
        let maxRenderDepth = max(0, min(options.maxNestingDepth, 1 << 20)) * 4
        guard builder.deepest <= maxRenderDepth else { return nil }
        text = builder.text
        ops = builder.ops
        outputs = builder.outputs
        branches = builder.branches
        strict = options.strict
        maxHelperBytes = options.maxOutputBytes
        let helpers = outputs.count(where: { $0.transform != .none })
        guard let bound = Self.maxRecordBytes(blocks: branches.count, helpers: helpers, maxSteps: options.maxRenderSteps) else { return nil }
        maxRecordBytes = bound
    }

    /// What the general renderer spends at most, for a record of `s` bytes: a step per block; per
    /// helper a call, its argument's work size (bytes plus 16 per element, elements taking two
    /// bytes at least: 9s + 1) and its result's bytes (at most 8s + 15: `[{}]` prints as
    /// `[object Object]`, and casing at most triples text). Lookups outside loops cost nothing.
    /// Nil when the blocks alone can exceed the budget.
    private static func maxRecordBytes(blocks: Int, helpers: Int, maxSteps: Int) -> Int? {
        guard blocks <= maxSteps else { return nil }
        guard helpers > 0 else { return .max }
        let perHelper = (maxSteps - blocks) / helpers
        return max(0, (perHelper - TemplateCost.call - 16) / 17)
    }

    private struct Builder {
        let htmlEscape: Bool
        var text: [UInt8] = []
        var ops: [Op] = []
        var outputs: [Output] = []
        var branches: [Branch] = []
        /// Render depth the general renderer reaches: 1 for the template, one more per block.
        var deepest = 0

        init(htmlEscape: Bool) { self.htmlEscape = htmlEscape }

        mutating func add(_ nodes: HandlebarsProgram, depth: Int) -> Bool {
            deepest = max(deepest, depth)
            for node in nodes {
                switch node {
                case .text(let bytes):
                    let start = text.count
                    text += bytes
                    let verbatim = bytes.withUnsafeBytes { JSONEscaper.leavesUnchanged($0) }
                    ops.append(.text(start..<text.count, verbatim: verbatim))
                case .lookup(let lookup):
                    guard let path = lookup.contextPath else { return false }
                    outputs.append(Output(path: path, escaped: lookup.escaped && htmlEscape, transform: .none, node: [node]))
                    ops.append(.output(outputs.count - 1))
                case .value(.helper(let helper, let arguments, let hash), let escaped):
                    let transform: Transform
                    switch helper {
                    case .upper, .uppercase: transform = .upper
                    case .lower, .lowercase: transform = .lower
                    default: return false
                    }
                    guard hash.isEmpty, arguments.count == 1, case .path(let argument) = arguments[0],
                          let path = Self.contextPath(argument)
                    else { return false }
                    outputs.append(Output(path: path, escaped: escaped && htmlEscape, transform: transform, node: [node]))
                    ops.append(.output(outputs.count - 1))
                case .block(let block):
                    let includeZero: Bool
                    let negated: Bool
                    switch block.kind {
                    case .if(let zero): (includeZero, negated) = (zero, false)
                    case .unless(let zero): (includeZero, negated) = (zero, true)
                    default: return false
                    }
                    guard case .path(let subject) = block.subject, let path = Self.contextPath(subject) else { return false }
                    let index = branches.count
                    branches.append(Branch(path: path, includeZero: includeZero, negated: negated, then: 0..<0, otherwise: 0..<0))
                    ops.append(.branch(index))
                    let thenStart = ops.count
                    guard add(block.body, depth: depth + 1) else { return false }
                    let elseStart = ops.count
                    guard add(block.inverse, depth: depth + 1) else { return false }
                    branches[index].then = thenStart..<elseStart
                    branches[index].otherwise = elseStart..<ops.count
                default:
                    return false
                }
            }
            return true
        }

        /// The path's JSON path when it is a plain key path from the current context (what
        /// `HandlebarsLookup.contextPath` is for `{{path}}`).
        static func contextPath(_ path: HandlebarsPath) -> JSONPath? {
            guard case .context(depth: 0, _) = path.base else { return nil }
            return path.jsonPath
        }
    }

    /// False (nothing written) when the record is larger than the fast path answers for.
    func render(record: JSONValue, into output: inout RenderOutput, template: HandlebarsTemplate) throws(TemplateRenderError) -> Bool {
        guard record.byteRange.count <= maxRecordBytes else { return false }
        // The literal text is read in place for the whole render: a slice of `text` per
        // literal retained the array. (The standard library's closures do not throw typed
        // errors, hence the `Result`.)
        let done = text.withUnsafeBytes { literals in
            Result { () throws(TemplateRenderError) in
                try run(0..<ops.count, record: record, literals: literals, into: &output, template: template)
            }
        }
        try done.get()
        return true
    }

    private func run(
        _ range: Range<Int>, record: JSONValue, literals: UnsafeRawBufferPointer, into output: inout RenderOutput, template: HandlebarsTemplate
    ) throws(TemplateRenderError) {
        var i = range.lowerBound
        while i < range.upperBound {
            switch ops[i] {
            case .text(let bytes, let verbatim):
                do { try output.write(UnsafeRawBufferPointer(rebasing: literals[bytes]), verbatim: verbatim) } catch { throw TemplateRenderError(error) }
                i += 1
            case .output(let index):
                // By index, not by copy: a copied `Output` would retain its path and node.
                if try !write(index, record: record, into: &output) {
                    try template.render(outputs[index].node, context: .json(record), into: &output)
                }
                i += 1
            case .branch(let index):
                // `#if`'s own test (`Utils.isEmpty`), on the value as the general renderer finds it.
                let subject = record.value(at: branches[index].path).map(HandlebarsValue.json) ?? .missing
                let taken = subject.isEmpty(includeZero: branches[index].includeZero) == branches[index].negated
                try run(taken ? branches[index].then : branches[index].otherwise, record: record, literals: literals, into: &output, template: template)
                i = branches[index].otherwise.upperBound
            }
        }
    }

    /// Writes output `index` when the fast path decides it exactly; false (nothing written) when
    /// the general renderer must.
    private func write(_ index: Int, record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        let escaped = outputs[index].escaped
        let transform = outputs[index].transform
        guard let value = record.value(at: outputs[index].path) else {
            // Missing renders nothing, or is strict mode's error, which the general renderer raises.
            return !strict
        }
        if transform == .none {
            // The general renderer's own writer: every kind prints exactly as it prints it.
            try HandlebarsRenderer.write(json: value, escaped: escaped, into: &output)
            return true
        }
        switch value.kind {
        case .string where !value.stringHasEscapes:
            // From the record's buffer, not through the generic `withUnescapedString` (a runtime
            // metadata lookup per call across the module boundary).
            let range = value.byteRange
            return try value.document.buffer.withUnsafeBytes { all in
                let content = UnsafeRawBufferPointer(rebasing: all[(range.lowerBound + 1)..<(range.upperBound - 1)])
                return Result { () throws(TemplateRenderError) -> Bool in try cased(content, transform, escaped: escaped, into: &output) }
            }.get()
        case .string:
            let done = try value.withUnescapedString { (content) throws(TemplateRenderError) -> Bool in
                try cased(content, transform, escaped: escaped, into: &output)
            }
            return done ?? false
        case .number:
            // Printed as written (`1e5` upper is `1E5`), which is ASCII.
            return try value.withRawBytes { (content) throws(TemplateRenderError) -> Bool in
                try cased(content, transform, escaped: escaped, into: &output)
            }
        case .true:
            return try cased(HandlebarsFlatProgram.trueText, transform, escaped: escaped, into: &output)
        case .false:
            return try cased(HandlebarsFlatProgram.falseText, transform, escaped: escaped, into: &output)
        case .null:
            return true
        case .array, .object:
            return false
        }
    }

    private static let trueText: StaticString = "true"
    private static let falseText: StaticString = "false"

    private func cased(_ text: StaticString, _ transform: Transform, escaped: Bool, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        try cased(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), transform, escaped: escaped, into: &output)
    }

    /// Writes `bytes` upper- or lowercased (and HTML-escaped), in chunks of a stack buffer; false
    /// (nothing written) for text the helper must case as Unicode, or a result over the helper
    /// byte limit (the general renderer's error to raise). Cased bytes are as many as the input.
    private func cased(_ bytes: UnsafeRawBufferPointer, _ transform: Transform, escaped: Bool, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        guard bytes.count <= maxHelperBytes else { return false }
        let upper = transform == .upper
        do throws(RenderOutput.LimitExceeded) {
            return try SimpleCasing.write(bytes, upper: upper) { (run) throws(RenderOutput.LimitExceeded) in
                if escaped { try HandlebarsEscaping.write(run, into: &output) } else { try output.write(run) }
            }
        } catch {
            throw TemplateRenderError(error)
        }
    }
}
