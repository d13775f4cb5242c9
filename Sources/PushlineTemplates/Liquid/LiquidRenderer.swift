import PushlineCore

/// Walks the node tree for one recipient, writing into the caller's `RenderOutput`.
struct LiquidRenderer {
    enum Interrupt { case none, breakLoop, continueLoop }

    let snippets: [String: [LiquidNode]]
    let options: TemplateOptions

    func render(_ nodes: [LiquidNode], _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        for node in nodes {
            switch node {
            case .text(let bytes):
                do { try output.write(bytes) } catch { throw TemplateRenderError(error) }
            case .output(let expression):
                let value = try evaluate(expression, &state)
                do { try value.write(to: &output) } catch { throw TemplateRenderError(error) }
            case .conditional(let branches, let otherwise):
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
                    for candidate in values where LiquidValue.equal(value, try evaluate(candidate, &state)) {
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
                state.globals[name] = .string(captured.bytes)
                if r != .none { return r }
            case .increment(let name):
                let value = state.counters[name] ?? 0
                state.counters[name] = value + 1
                do { try LiquidValue.int(value).write(to: &output) } catch { throw TemplateRenderError(error) }
            case .decrement(let name):
                let value = (state.counters[name] ?? 0) - 1
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

    private func countIteration(_ state: inout LiquidRenderState, adding n: Int = 1) throws(TemplateRenderError) {
        state.iterations += n
        if state.iterations > options.maxLoopIterations { throw .loopLimit(options.maxLoopIterations) }
    }

    private func renderFor(_ loop: LiquidForLoop, _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        let collection = try evaluate(loop.collection, &state)
        var offset = try loop.offset.flatMap { (e) throws(TemplateRenderError) in try loopNumber(e, "offset", &state) } ?? 0
        if loop.offsetContinues { offset = state.loopOffsets[loop.name] ?? 0 }
        let limit = try loop.limit.flatMap { (e) throws(TemplateRenderError) in try loopNumber(e, "limit", &state) }

        // Ranges are counted before they are built, so `(1..1000000000)` hits the loop limit, not memory.
        var lower = 0
        var total: Int
        if case .range(let lo, let hi) = collection.normalized { lower = lo; total = max(0, hi - lo + 1) } else { total = -1 }
        var items: [LiquidValue] = []
        if total < 0 {
            switch collection.normalized {
            case .string(let s): items = s.isEmpty ? [] : [collection]
            case .int, .double, .bool: items = []
            default: items = collection.iterationElements
            }
            total = items.count
        }
        let start = min(max(offset, 0), total)
        var count = total - start
        if let limit { count = min(count, max(limit, 0)) }
        state.loopOffsets[loop.name] = start + count
        if count == 0 {
            if let otherwise = loop.otherwise { return try render(otherwise, &state, &output) }
            return .none
        }
        if state.iterations + count > options.maxLoopIterations { throw .loopLimit(options.maxLoopIterations) }

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
        let value = try evaluate(e, &state).normalized
        if value.isNil { return nil }
        switch value {
        case .int, .double, .string:
            guard let n = value.numeric ?? { if case .string(let s) = value { LiquidNumber(parsing: s) } else { nil } }() else {
                throw .other("for loop \(what) must be a number")
            }
            return n.intValue
        default:
            throw .other("for loop \(what) must be a number")
        }
    }

    // MARK: Snippets

    private func renderSnippet(_ include: LiquidInclude, _ state: inout LiquidRenderState, _ output: inout RenderOutput) throws(TemplateRenderError) -> Interrupt {
        var name = include.snippet ?? ""
        if let e = include.snippetExpression { name = LiquidText.string(try evaluate(e, &state).textBytes) }
        guard let body = snippets[name] else { throw .other("unknown snippet '\(name)'") }
        guard state.snippetDepth < options.maxNestingDepth else {
            throw .other("snippets nest deeper than \(options.maxNestingDepth) levels")
        }
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

        if let subject, include.subjectIsLoop, let items = subject.arrayElements {
            try countIteration(&state, adding: 0)
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
            let arguments: [LiquidValue]
            if let literals = call.literalArguments {
                arguments = literals
            } else {
                var evaluated: [LiquidValue] = []
                evaluated.reserveCapacity(call.arguments.count)
                for argument in call.arguments { evaluated.append(try evaluate(argument, &state)) }
                arguments = evaluated
            }
            var keywords: [(name: [UInt8], value: LiquidValue)] = []
            if !call.keywordArguments.isEmpty {
                for keyword in call.keywordArguments { keywords.append((keyword.name, try evaluate(keyword.value, &state))) }
            }
            do {
                value = try LiquidFilters.apply(call.filter, to: value, arguments, keywords, state: state)
            } catch {
                throw .filter(call.filter.rawValue, error.message)
            }
        }
        return value
    }

    func evaluate(_ expression: LiquidExpression, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> LiquidValue {
        switch expression {
        case .literal(let value):
            return value
        case .range(let lower, let upper):
            let lo = try evaluate(lower, &state).toNumber.intValue
            let hi = try evaluate(upper, &state).toNumber.intValue
            return .range(lo, hi)
        case .variable(let variable):
            if let value = try lookup(variable, &state) { return value }
            if options.strict { throw .missingVariable(variable.text) }
            return .null
        }
    }

    private func lookup(_ variable: LiquidVariable, _ state: inout LiquidRenderState) throws(TemplateRenderError) -> LiquidValue? {
        // Fast path: nothing assigned, the record is JSON, the path is static → one index walk.
        if let path = variable.jsonPath, state.hasNoLocals, case .json(let record) = state.root,
           let found = record.value(at: path) {
            return .json(found)
        }
        var root = variable.root
        if let e = variable.rootExpression { root = try evaluate(e, &state).textBytes }
        guard var value = state.variable(root) else { return nil }
        for step in variable.steps {
            let next: LiquidValue?
            switch step {
            case .key(let key):
                next = value.property(key, state: state)
            case .index(let index):
                next = value.element(at: index)
            case .dynamic(let inner):
                let key = try evaluate(inner, &state).normalized
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
        case .and(let a, let b):
            guard try test(a, &state) else { return false }
            return try test(b, &state)
        case .or(let a, let b):
            if try test(a, &state) { return true }
            return try test(b, &state)
        case .compare(let l, let op, let r):
            let left = try evaluate(l, &state)
            let right = try evaluate(r, &state)
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
    /// Truncated toward zero, clamped into Int.
    var intValue: Int {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.isFinite else { return 0 }
            return Int(max(min(d.rounded(.towardZero), 9.2e18), -9.2e18))
        }
    }
}
