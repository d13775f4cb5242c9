import PushlineCore

/// Walks the node tree for one recipient, writing into the caller's `RenderOutput`.
struct LiquidRenderer {
    enum Interrupt { case none, breakLoop, continueLoop }

    let snippets: [String: [LiquidNode]]
    let options: TemplateOptions
    let budget: LiquidBudget

    init(snippets: [String: [LiquidNode]], options: TemplateOptions) {
        self.snippets = snippets
        self.options = options
        self.budget = LiquidBudget(options)
    }

    func render(_ nodes: [LiquidNode], _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        // Blocks nest at most maxNestingDepth per template and snippets as deep again: this
        // bounds both together, so a snippet recursing through nested blocks cannot exhaust the stack.
        state.renderDepth += 1
        defer { state.renderDepth -= 1 }
        if state.renderDepth > budget.maxRenderDepth {
            throw .other("blocks and snippets nest deeper than \(budget.maxRenderDepth) levels while rendering")
        }
        for node in nodes {
            switch node {
            case .text(let bytes):
                do { try output.write(bytes) } catch { throw TemplateRenderError(error) }
            case .output(let expression):
                let value = try evaluate(expression, &state)
                // An array prints element by element, and empty elements write nothing: the
                // output limit alone would let a loop walk a huge array again and again.
                if value.isSequence { try state.spend(value.workSize) }
                do { try value.write(to: &output) } catch { throw TemplateRenderError(error) }
            case .conditional(let branches, let otherwise):
                // A step per conditional: in a loop, a template of many conditions repeats them all.
                try state.spend(1)
                var chosen = otherwise
                for branch in branches where try test(branch.condition, &state) {
                    chosen = branch.body
                    break
                }
                if let chosen {
                    let r = try render(chosen, &state, &output)
                    if r != .none { return r }
                }
            case .caseWhen(let subject, let blocks):
                try state.spend(1)
                let value = try evaluate(subject, &state)
                var matched = false
                for block in blocks {
                    guard let values = block.values else {
                        if !matched {
                            let r = try render(block.body, &state, &output)
                            if r != .none { return r }
                        }
                        continue
                    }
                    // Each matching value renders the body once, as Shopify does.
                    for candidate in values where try equalCharged(value, try evaluate(candidate, &state), &state) {
                        matched = true
                        let r = try render(block.body, &state, &output)
                        if r != .none { return r }
                    }
                }
            case .forLoop(let loop):
                let r = try renderFor(loop, &state, &output)
                if r != .none { return r }
            case .breakLoop:
                return .breakLoop
            case .continueLoop:
                return .continueLoop
            case .assign(let name, let expression):
                state.globals[name] = try evaluate(expression, &state)
            case .capture(let name, let body):
                var captured = RenderOutput(mode: .raw, limit: options.maxOutputBytes, reservingCapacity: 64)
                let r = try render(body, &state, &captured)
                try state.spend(captured.textCount)
                state.globals[name] = .string(captured.bytes)
                if r != .none { return r }
            case .increment(let name):
                let value = state.counters[name] ?? 0
                state.counters[name] = try checked { () throws(TemplateArithmeticError) in try TemplateMath.add(value, 1) }
                do { try LiquidValue.int(value).write(to: &output) } catch { throw TemplateRenderError(error) }
            case .decrement(let name):
                let value = try checked { () throws(TemplateArithmeticError) in try TemplateMath.subtract(state.counters[name] ?? 0, 1) }
                state.counters[name] = value
                do { try LiquidValue.int(value).write(to: &output) } catch { throw TemplateRenderError(error) }
            case .block(let body):
                let r = try render(body, &state, &output)
                if r != .none { return r }
            case .include(let include):
                let r = try renderSnippet(include, &state, &output)
                if r != .none { return r }
            }
        }
        return .none
    }

    // MARK: Loops

    private func countIteration(_ state: inout LiquidRenderState) throws(TemplateRenderError) {
        // iterations ≤ maxLoopIterations before the increment: no overflow.
        state.iterations += 1
        if state.iterations > options.maxLoopIterations { throw .loopLimit(options.maxLoopIterations) }
        try state.spend(1)
    }

    /// Refuses a loop of `count` more iterations before it starts (and before its items are built).
    private func admitIterations(_ count: Int, _ state: borrowing LiquidRenderState) throws(TemplateRenderError) {
        if count > options.maxLoopIterations - state.iterations { throw .loopLimit(options.maxLoopIterations) }
    }

    func checked<T>(_ body: () throws(TemplateArithmeticError) -> T) throws(TemplateRenderError) -> T {
        do { return try body() } catch { throw TemplateRenderError(error) }
    }

    private func renderFor(_ loop: LiquidForLoop, _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        let collection = try evaluate(loop.collection, &state)
        var offset = try loop.offset.flatMap { (e) throws(TemplateRenderError) in try loopNumber(e, "offset", &state) } ?? 0
        if loop.offsetContinues { offset = state.loopOffsets[loop.name] ?? 0 }
        let limit = try loop.limit.flatMap { (e) throws(TemplateRenderError) in try loopNumber(e, "limit", &state) }

        // Ranges are counted before they are built, so `(1..1000000000)` hits the loop limit, not memory.
        var lower = 0
        var total: Int
        // A range's count fits in an Int (checked when it was built).
        // (Matched before `normalized`, which copies a record string.)
        if case .range(let lo, let hi) = collection { lower = lo; total = lo <= hi ? hi &- lo &+ 1 : 0 } else { total = -1 }
        var items: [LiquidValue] = []
        if total < 0 {
            // Materializing a record's array or object costs its size: charged before it is built.
            try state.spend(collection.workSize)
            switch collection.normalized {
            case .string(let s): items = s.isEmpty ? [] : [collection]
            case .int, .double, .bool: items = []
            default: items = collection.iterationElements
            }
            total = items.count
        }
        // 0 ≤ start ≤ total and 0 ≤ count ≤ total - start: start + count and the indexes below
        // stay within 0...total, and lower + k within the range.
        let start = min(max(offset, 0), total)
        var count = total - start
        if let limit { count = min(count, max(limit, 0)) }
        state.loopOffsets[loop.name] = start + count
        if count == 0 {
            if let otherwise = loop.otherwise { return try render(otherwise, &state, &output) }
            return .none
        }
        try admitIterations(count, state)

        state.loops.append(.init(index0: 0, length: count, name: loop.name, isRenderLoop: false))
        state.bindings.append((loop.variable, .null))
        defer {
            state.loops.removeLast()
            state.bindings.removeLast()
        }
        let depth = state.loops.count - 1
        let slot = state.bindings.count - 1
        for i in 0..<count {
            try countIteration(&state)
            let k = loop.reversed ? start + count - 1 - i : start + i
            state.loops[depth].index0 = i
            state.bindings[slot].value = items.isEmpty ? .int(lower + k) : items[k]
            if try render(loop.body, &state, &output) == .breakLoop { break }
        }
        return .none
    }

    /// `limit:`/`offset:` values: integers or numeric strings; nil (undefined) means not given.
    private func loopNumber(_ e: LiquidExpression, _ what: String, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> Int? {
        let raw = try evaluate(e, &state)
        try state.spend(raw.workSize)  // a numeric string is copied and parsed
        let value = raw.normalized
        if value.isNil { return nil }
        switch value {
        case .int, .double, .string:
            guard let n = value.numeric ?? { if case .string(let s) = value { LiquidNumber(parsing: s) } else { nil } }() else {
                throw .other("for loop \(what) must be a number")
            }
            return try checked { () throws(TemplateArithmeticError) in try n.checkedInt() }
        default:
            throw .other("for loop \(what) must be a number")
        }
    }

    // MARK: Snippets

    private func renderSnippet(_ include: LiquidInclude, _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        var name = include.snippet ?? ""
        if let e = include.snippetExpression {
            let value = try evaluate(e, &state)
            try state.spend(value.workSize)
            name = LiquidText.string(value.textBytes)
        }
        guard let body = snippets[name] else { throw .other("unknown snippet '\(name)'") }
        guard state.snippetDepth < options.maxNestingDepth else {
            throw .other("snippets nest deeper than \(options.maxNestingDepth) levels")
        }
        // A snippet that includes itself twice expands 2^depth times: each expansion is charged.
        try state.spend(TemplateCost.expansion)
        let subject = try include.subject.map { (e) throws(TemplateRenderError) in try evaluate(e, &state) }
        var arguments: [(name: [UInt8], value: LiquidValue)] = []
        for argument in include.arguments { arguments.append((argument.name, try evaluate(argument.value, &state))) }
        let alias = include.alias ?? Array(name.utf8)

        // `render` sees only its arguments and the record; `include` shares the caller's variables.
        var saved: (globals: [[UInt8]: LiquidValue], bindings: [(name: [UInt8], value: LiquidValue)], loops: [LiquidRenderState.LoopFrame], counters: [[UInt8]: Int])?
        if include.isolated {
            saved = (state.globals, state.bindings, state.loops, state.counters)
            state.globals = [:]
            state.bindings = []
            state.loops = []
            state.counters = [:]
        }
        let bindingCount = state.bindings.count
        state.snippetDepth += 1
        defer {
            state.snippetDepth -= 1
            state.bindings.removeSubrange(bindingCount...)
            if let saved {
                state.globals = saved.globals
                state.bindings = saved.bindings
                state.loops = saved.loops
                state.counters = saved.counters
            }
        }
        // `render` arguments are the snippet's own variables (an `assign` may replace them);
        // `include` arguments shadow the caller's for the snippet's duration.
        if include.isolated {
            for a in arguments { state.globals[a.name] = a.value }
        } else {
            state.bindings += arguments
        }

        if let subject, include.subjectIsLoop, subject.isSequence {
            try state.spend(subject.workSize)
            let items = subject.arrayElements ?? []
            try admitIterations(items.count, state)
            state.bindings.append((alias, .null))
            if include.isolated { state.loops.append(.init(index0: 0, length: items.count, name: alias, isRenderLoop: true)) }
            defer { if include.isolated { state.loops.removeLast() } }
            for (i, item) in items.enumerated() {
                try countIteration(&state)
                state.bindings[state.bindings.count - 1].value = item
                if include.isolated { state.loops[state.loops.count - 1].index0 = i }
                _ = try render(body, &state, &output)
            }
            return .none
        }
        if let subject {
            state.bindings.append((alias, subject))
        } else if !include.isolated, let value = state.variable(alias) {
            // `include 'product'` binds `product` to the caller's `product` variable, as Shopify does.
            state.bindings.append((alias, value))
        }
        let r = try render(body, &state, &output)
        // A `break` in an included snippet ends the caller's loop; `render` is sealed.
        return include.isolated ? .none : r
    }

    // MARK: Expressions

    func evaluate(_ expression: LiquidFilteredExpression, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> LiquidValue {
        var value: LiquidValue
        if expression.filters.first?.filter == .default, case .variable(let variable) = expression.base {
            // `x | default: …` states that x may be missing, so even strict mode lets it through.
            value = try lookup(variable, &state) ?? .null
        } else {
            value = try evaluate(expression.base, &state)
        }
        for call in expression.filters {
            // A filter reads its input and arguments (copies, scans, materializes ranges and
            // arrays): their size is charged before it runs, so no filter starts work or
            // allocation the budget does not cover.
            var cost = LiquidRenderState.sum(TemplateCost.call, value.workSize)
            let arguments: [LiquidValue]
            if let literals = call.literalArguments {
                arguments = literals
            } else {
                var evaluated: [LiquidValue] = []
                evaluated.reserveCapacity(call.arguments.count)
                for argument in call.arguments { evaluated.append(try evaluate(argument, &state)) }
                arguments = evaluated
            }
            for argument in arguments { cost = LiquidRenderState.sum(cost, argument.workSize) }
            var keywords: [(name: [UInt8], value: LiquidValue)] = []
            if !call.keywordArguments.isEmpty {
                for keyword in call.keywordArguments { keywords.append((keyword.name, try evaluate(keyword.value, &state))) }
            }
            try state.spend(cost)
            do {
                value = try LiquidFilters.apply(call.filter, to: value, arguments, keywords, state: &state)
            } catch {
                throw error.renderError(call.filter)
            }
            try admitProduced(value, &state)
        }
        return value
    }

    /// A filter's result: text within the value limit, and its size charged (every byte built
    /// costs a step, so what a render allocates stays within its step budget).
    private func admitProduced(_ value: LiquidValue, _ state: inout LiquidRenderState) throws(TemplateRenderError) {
        switch value {
        case .string(let s):
            if s.count > budget.maxBytes { throw .outputLimit(budget.maxBytes) }
            try state.spend(s.count)
        case .array:
            try state.spend(value.workSize)
        default:
            break
        }
    }

    func evaluate(_ expression: LiquidExpression, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> LiquidValue {
        switch expression {
        case .literal(let value):
            return value
        case .range(let lower, let upper):
            let lowerValue = try evaluate(lower, &state)
            let upperValue = try evaluate(upper, &state)
            // Bounds that are record strings are copied and parsed: charged, since ranges repeat in loops.
            try state.spend(LiquidRenderState.sum(lowerValue.workSize, upperValue.workSize))
            let lo = lowerValue.toNumber
            let hi = upperValue.toNumber
            return try checked { () throws(TemplateArithmeticError) in
                let (l, h) = (try lo.checkedInt(), try hi.checkedInt())
                // A range whose count does not fit in an Int is refused here, so everything that
                // counts or indexes ranges can compute hi - lo + 1 without checking.
                _ = try TemplateMath.rangeCount(l, h)
                return .range(l, h)
            }
        case .variable(let variable):
            if let value = try lookup(variable, &state) { return value }
            if options.strict { throw .missingVariable(variable.text) }
            return .null
        }
    }

    private func lookup(_ variable: LiquidVariable, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> LiquidValue? {
        // Fast path: nothing assigned, the record is JSON, the path is static → one index walk.
        // Without locals there is no loop and no snippet: each lookup runs once per render.
        if let path = variable.jsonPath, state.hasNoLocals, state.snippetDepth == 0, case .json(let record) = state.root,
           let found = record.value(at: path) {
            return .json(found)
        }
        var root = variable.root
        if let e = variable.rootExpression {
            let key = try evaluate(e, &state)
            try state.spend(key.workSize)
            root = key.textBytes
        }
        guard var value = state.variable(root) else { return nil }
        for step in variable.steps {
            // A step into a record value scans it (members, elements, a string's characters for
            // `size`): lookups repeat in loops, so each costs the size of what it scans.
            try state.spend(value.lookupCost)
            let next: LiquidValue?
            switch step {
            case .key(let key):
                next = value.property(key, state: state)
            case .index(let index):
                next = value.element(at: index)
            case .dynamic(let inner):
                let raw = try evaluate(inner, &state)
                try state.spend(raw.workSize)
                let key = raw.normalized
                switch key {
                case .int(let index): next = value.element(at: index)
                case .string(let name): next = value.property(name, state: state)
                default: next = nil
                }
            }
            guard let next else { return nil }
            value = next
        }
        return value
    }

    // MARK: Conditions

    func test(_ condition: LiquidCondition, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> Bool {
        switch condition {
        case .truthy(let e):
            return try evaluate(e, &state).isTruthy
        case .not(let c):
            return try !test(c, &state)
        case .chain(let first, let rest):
            // Shopify's Condition#evaluate: left to right, stopping at `or` after a true term and
            // at `and` after a false one, which is `a and (b or (c …))` without recursion.
            var result = try test(first, &state)
            for (isAnd, term) in rest {
                if isAnd ? !result : result { break }
                result = try test(term, &state)
            }
            return result
        case .compare(let l, let op, let r):
            let left = try evaluate(l, &state)
            let right = try evaluate(r, &state)
            // Comparing copies strings and walks arrays (ranges materialize for `contains`).
            try state.spend(LiquidRenderState.sum(left.workSize, right.workSize))
            switch op {
            case .equal: return LiquidValue.equal(left, right)
            case .notEqual: return !LiquidValue.equal(left, right)
            case .contains: return left.contains(right)
            case .less: return try order(left, right).map { $0 < 0 } ?? false
            case .greater: return try order(left, right).map { $0 > 0 } ?? false
            case .lessOrEqual: return try order(left, right).map { $0 <= 0 } ?? false
            case .greaterOrEqual: return try order(left, right).map { $0 >= 0 } ?? false
            }
        }
    }
}

extension LiquidRenderer {
    private func equalCharged(_ a: LiquidValue, _ b: LiquidValue, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> Bool {
        try state.spend(LiquidRenderState.sum(a.workSize, b.workSize))
        return LiquidValue.equal(a, b)
    }

    /// Ordering for `<` and friends: nil (false) when a side is nil, an error for values of
    /// kinds that have no order between them (a string and a number), as in Ruby.
    func order(_ a: LiquidValue, _ b: LiquidValue) throws(TemplateRenderError) -> Int? {
        if a.isNil || b.isNil { return nil }
        switch (a, b) {
        case (.empty, _), (.blank, _), (_, .empty), (_, .blank): return nil
        default: break
        }
        guard let c = LiquidValue.compare(a, b) else { throw .other("cannot compare these values with an ordering operator") }
        return c
    }
}

extension LiquidNumber {
    /// Truncated toward zero; a float outside Int's range (or not finite) is an error.
    func checkedInt() throws(TemplateArithmeticError) -> Int {
        switch self {
        case .int(let i): return i
        case .double(let d): return try TemplateMath.int(d)
        }
    }
}
