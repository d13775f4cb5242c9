import PushlineCore

/// The shapes of most push texts, compiled flat: literal text, outputs of a static path with at
/// most a `default: '…'` and one of `downcase`, `upcase`, `url_encode`, and `if` blocks comparing
/// a static path with a number (`{% if customer.points > 1000 %}…{% endif %}`), nested.
///
/// Rendering is a loop over ops of plain indices: values go from the record's bytes into the
/// output, filtered byte by byte, with no `LiquidValue`, no render state and nothing retained
/// per node. Whatever the fast path cannot decide exactly (a value of another kind, a character
/// under a case filter whose mapping is not one-to-one within two bytes or changes a longer
/// character, a missing variable, a non-integer number) is handed to the general
/// renderer for that one output or condition, so results are the general renderer's, always.
struct LiquidFlatProgram: Sendable {
    enum Op: Sendable {
        /// Literal bytes of `text`; `verbatim` when JSON escaping leaves them as they are.
        case text(Range<Int>, verbatim: Bool)
        /// `outputs[i]`.
        case output(Int)
        /// `branches[i]`: its bodies are the ops after it.
        case branch(Int)
    }

    enum Transform: Sendable {
        case none, downcase, upcase, urlEncode
    }

    struct Output: Sendable {
        var path: JSONPath
        /// The expression as written, for the general renderer.
        var expression: LiquidFilteredExpression
        /// `default: '<text>'` first.
        var defaultText: [UInt8]?
        /// Whether JSON escaping leaves `defaultText` as it is.
        var defaultVerbatim: Bool
        var transform: Transform
    }

    struct Branch: Sendable {
        var path: JSONPath
        var comparison: LiquidOperator
        var number: Int
        /// The condition as written, for the general renderer.
        var condition: LiquidCondition
        var then: Range<Int>
        var otherwise: Range<Int>
    }

    let text: [UInt8]
    let ops: [Op]
    let outputs: [Output]
    let branches: [Branch]
    /// Records up to this size (the whole line's bytes bound every value in it) cannot make
    /// the general renderer hit its step or value limit on this program, so the fast path gives
    /// its result; a larger record is rendered by the general renderer, limits and all.
    let maxRecordBytes: Int

    /// Nil unless every node has one of the shapes above.
    init?(_ nodes: [LiquidNode], budget: LiquidBudget) {
        var builder = Builder()
        guard builder.add(nodes) else { return nil }
        text = builder.text
        ops = builder.ops
        outputs = builder.outputs
        branches = builder.branches
        maxRecordBytes = Self.maxRecordBytes(outputs: outputs, branches: branches.count, budget: budget)
    }

    /// What the general renderer spends at most per output or branch, for a record of `s`
    /// bytes: a filter call and its input, argument and result (a value's work size is at most
    /// `elementCost` per element plus its bytes, and elements take two bytes each), twice over;
    /// a comparison's two sides. `url_encode` triples what it reads.
    private static func maxRecordBytes(outputs: [Output], branches: Int, budget: LiquidBudget) -> Int {
        let operations = max(1, outputs.count + branches)
        let longestDefault = outputs.map { $0.defaultText?.count ?? 0 }.max() ?? 0
        let perByte = 2 * (LiquidValue.elementCost / 2 + 1) * 4
        let constant = 4 * TemplateCost.call + 2 * longestDefault + 8
        let bySteps = (budget.maxSteps / operations - constant) / perByte
        let growth = outputs.contains { $0.transform == .urlEncode } ? 3 : 1
        let byBytes = budget.maxBytes / growth - longestDefault
        return max(0, min(bySteps, byBytes))
    }

    private struct Builder {
        var text: [UInt8] = []
        var ops: [Op] = []
        var outputs: [Output] = []
        var branches: [Branch] = []

        mutating func add(_ nodes: [LiquidNode]) -> Bool {
            for node in nodes {
                switch node {
                case .text(let bytes):
                    let start = text.count
                    text += bytes
                    let verbatim = bytes.withUnsafeBytes { JSONEscaper.leavesUnchanged($0) }
                    ops.append(.text(start..<text.count, verbatim: verbatim))
                case .output(let expression):
                    guard let output = Self.output(expression) else { return false }
                    outputs.append(output)
                    ops.append(.output(outputs.count - 1))
                case .conditional(let branchList, let otherwise):
                    guard branchList.count == 1, case .compare(let left, let comparison, let right) = branchList[0].condition,
                          comparison != .contains,
                          case .variable(let variable) = left, let path = variable.jsonPath,
                          case .literal(.int(let number)) = right
                    else { return false }
                    let index = branches.count
                    branches.append(Branch(path: path, comparison: comparison, number: number, condition: branchList[0].condition, then: 0..<0, otherwise: 0..<0))
                    ops.append(.branch(index))
                    let thenStart = ops.count
                    guard add(branchList[0].body) else { return false }
                    let elseStart = ops.count
                    guard add(otherwise ?? []) else { return false }
                    branches[index].then = thenStart..<elseStart
                    branches[index].otherwise = elseStart..<ops.count
                default:
                    return false
                }
            }
            return true
        }

        static func output(_ expression: LiquidFilteredExpression) -> Output? {
            guard case .variable(let variable) = expression.base, let path = variable.jsonPath else { return nil }
            var filters = expression.filters[...]
            var defaultText: [UInt8]?
            if let first = filters.first, first.filter == .default {
                guard first.keywordArguments.isEmpty, let literals = first.literalArguments, literals.count == 1,
                      case .string(let fallback) = literals[0]
                else { return nil }
                defaultText = fallback
                filters = filters.dropFirst()
            }
            var transform = Transform.none
            if let call = filters.first {
                guard filters.count == 1, call.arguments.isEmpty, call.keywordArguments.isEmpty else { return nil }
                switch call.filter {
                case .downcase: transform = .downcase
                case .upcase: transform = .upcase
                case .url_encode: transform = .urlEncode
                default: return nil
                }
            }
            let defaultVerbatim = defaultText?.withUnsafeBytes { JSONEscaper.leavesUnchanged($0) } ?? false
            return Output(path: path, expression: expression, defaultText: defaultText, defaultVerbatim: defaultVerbatim, transform: transform)
        }
    }

    /// The general renderer's hand, for what the fast path does not decide.
    struct Fallback {
        let renderer: LiquidRenderer
        let record: JSONValue

        func write(_ expression: LiquidFilteredExpression, into output: inout RenderOutput) throws(TemplateRenderError) {
            var state = LiquidRenderState(root: .json(record), budget: renderer.budget)
            let value = try renderer.evaluate(expression, &state)
            if value.isSequence { try state.spend(value.workSize) }
            do { try value.write(to: &output) } catch { throw TemplateRenderError(error) }
        }

        func test(_ condition: LiquidCondition) throws(TemplateRenderError) -> Bool {
            var state = LiquidRenderState(root: .json(record), budget: renderer.budget)
            return try renderer.test(condition, &state)
        }
    }

    /// False (nothing written) when the record is larger than the fast path answers for.
    func render(record: JSONValue, into output: inout RenderOutput, renderer: LiquidRenderer) throws(TemplateRenderError) -> Bool {
        guard record.byteRange.count <= maxRecordBytes else { return false }
        // The literal text is read in place for the whole render: a slice of `text` per
        // literal retained the array. (The standard library's closures do not throw typed
        // errors, hence the `Result`.)
        let done = text.withUnsafeBytes { literals in
            Result { () throws(TemplateRenderError) in
                try run(0..<ops.count, record: record, literals: literals, into: &output, renderer: renderer)
            }
        }
        try done.get()
        return true
    }

    /// `renderer` is passed on its own and a `Fallback` made only where one is used: building
    /// it for every render retained and released the renderer and the record each time.
    private func run(
        _ range: Range<Int>, record: JSONValue, literals: UnsafeRawBufferPointer, into output: inout RenderOutput, renderer: LiquidRenderer
    ) throws(TemplateRenderError) {
        var i = range.lowerBound
        while i < range.upperBound {
            switch ops[i] {
            case .text(let bytes, let verbatim):
                do { try output.write(UnsafeRawBufferPointer(rebasing: literals[bytes]), verbatim: verbatim) } catch { throw TemplateRenderError(error) }
                i += 1
            case .output(let index):
                // By index, not by copy: a copied `Output` would retain its path and expression.
                if try !write(index, record: record, into: &output) {
                    try Fallback(renderer: renderer, record: record).write(outputs[index].expression, into: &output)
                }
                i += 1
            case .branch(let index):
                let taken: Bool
                if let known = test(index, record: record) {
                    taken = known
                } else {
                    taken = try Fallback(renderer: renderer, record: record).test(branches[index].condition)
                }
                try run(taken ? branches[index].then : branches[index].otherwise, record: record, literals: literals, into: &output, renderer: renderer)
                i = branches[index].otherwise.upperBound
            }
        }
    }

    /// The comparison when the value is an integer written as one; nil otherwise.
    private func test(_ index: Int, record: JSONValue) -> Bool? {
        guard let value = record.value(at: branches[index].path), let wide = value.int64Value, let left = Int(exactly: wide) else { return nil }
        let number = branches[index].number
        switch branches[index].comparison {
        case .equal: return left == number
        case .notEqual: return left != number
        case .less: return left < number
        case .greater: return left > number
        case .lessOrEqual: return left <= number
        case .greaterOrEqual: return left >= number
        case .contains: return nil
        }
    }

    /// Writes output `index`'s value when the fast path decides it exactly; false (nothing
    /// written) when the general renderer must.
    private func write(_ index: Int, record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        let transform = outputs[index].transform
        guard let value = record.value(at: outputs[index].path) else {
            // Missing: `default` gives its text (even in strict mode); without it, strict mode
            // has an error to raise, so the general renderer decides.
            guard outputs[index].defaultText != nil else { return false }
            return try writeDefault(index, into: &output)
        }
        switch value.kind {
        case .string:
            // The record's own bytes: the generic, cross-module `withUnescapedString` costs a
            // runtime metadata lookup per call, and a slice of `document.buffer` a retain.
            let content = value.unsafeRawStringContent
            defer { withExtendedLifetime(value) {} }
            if content.isEmpty, outputs[index].defaultText != nil { return try writeDefault(index, into: &output) }
            // Verbatim when the parser vouched for it (escaping would copy it unchanged); that is
            // the common case, so it is asked first and alone.
            let verbatim = value.stringIsVerbatimJSON
            if verbatim || !value.stringHasEscapes {
                guard transform != .none else {
                    do { try output.write(content, verbatim: verbatim) } catch { throw TemplateRenderError(error) }
                    return true
                }
                return try transformed(content, transform, verbatim: verbatim, into: &output)
            }
            let done = try value.withUnescapedString { (bytes) throws(TemplateRenderError) -> Bool in
                try self.transform(bytes, transform, into: &output)
            }
            return done ?? false
        case .null, .false:
            guard outputs[index].defaultText != nil else { return false }
            return try writeDefault(index, into: &output)
        case .number where transform == .none && outputs[index].defaultText == nil:
            do { try LiquidValue.json(value).write(to: &output) } catch { throw TemplateRenderError(error) }
            return true
        default:
            return false
        }
    }

    private func writeDefault(_ index: Int, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        guard let text = outputs[index].defaultText else { return false }
        return try transform(text, outputs[index].transform, verbatim: outputs[index].defaultVerbatim, into: &output)
    }

    /// Writes `bytes` through `transform`; false (nothing written) for text a case filter must
    /// treat as Unicode.
    private func transform(_ bytes: UnsafeRawBufferPointer, _ transform: Transform, verbatim: Bool = false, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        guard transform == .none else { return try transformed(bytes, transform, verbatim: verbatim, into: &output) }
        do { try output.write(bytes, verbatim: verbatim) } catch { throw TemplateRenderError(error) }
        return true
    }

    private func transform(_ bytes: [UInt8], _ transform: Transform, verbatim: Bool, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        // Array.withUnsafeBytes is not typed-throws: the error comes out in a Result.
        try bytes.withUnsafeBytes { bytes in
            Result { () throws(TemplateRenderError) -> Bool in try self.transform(bytes, transform, verbatim: verbatim, into: &output) }
        }.get()
    }

    /// `downcase`, `upcase` or `url_encode` applied in runs of a stack buffer: one `write` (one
    /// limit check, one escape pass) per 256 bytes, not per byte. False (nothing written) for
    /// text a case filter must treat as Unicode.
    ///
    /// Runs skip the escaping pass when escaping leaves them as they are: `url_encode` writes
    /// only unreserved ASCII, `+` and `%XX`; casing `verbatim` text keeps it so (ASCII letters
    /// stay letters, two-byte characters map to two-byte letters, longer ones are copied).
    private func transformed(_ bytes: some Collection<UInt8>, _ transform: Transform, verbatim: Bool, into output: inout RenderOutput) throws(TemplateRenderError) -> Bool {
        do throws(RenderOutput.LimitExceeded) {
            switch transform {
            case .downcase, .upcase:
                let upper = transform == .upcase
                return try SimpleCasing.write(bytes, upper: upper) { (run) throws(RenderOutput.LimitExceeded) in try output.write(run, verbatim: verbatim) }
            case .urlEncode:
                try Self.urlEncode(bytes) { (run) throws(RenderOutput.LimitExceeded) in try output.write(run, verbatim: true) }
            case .none:
                // Not reached: plain values are written without coming here.
                try output.write(Array(bytes))
            }
        } catch {
            throw TemplateRenderError(error)
        }
        return true
    }

    /// Like `url_encode` (Ruby's CGI.escape): unreserved bytes stay, space becomes `+`, the rest
    /// `%XX`; ASCII out, so runs may end anywhere.
    private static func urlEncode<E: Error>(_ bytes: some Collection<UInt8>, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        let chunk = 256
        let written: Result<Void, E> = withUnsafeTemporaryAllocation(byteCount: chunk, alignment: 1) { buffer in
            var count = 0
            for byte in bytes {
                if count > chunk - 3 {
                    do throws(E) { try emit(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) } catch { return .failure(error) }
                    count = 0
                }
                if LiquidStringFilters.isURLUnreserved(byte) {
                    buffer[count] = byte
                    count += 1
                } else if byte == 0x20 {
                    buffer[count] = UInt8(ascii: "+")
                    count += 1
                } else {
                    buffer[count] = UInt8(ascii: "%")
                    buffer[count + 1] = LiquidStringFilters.hexDigit(byte >> 4)
                    buffer[count + 2] = LiquidStringFilters.hexDigit(byte & 0xF)
                    count += 3
                }
            }
            guard count > 0 else { return .success(()) }
            return Result { () throws(E) in try emit(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
        }
        try written.get()
    }
}
