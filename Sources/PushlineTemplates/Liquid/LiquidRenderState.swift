import PushlineCore

/// Everything one render changes: variables, counters, loop frames, the iteration budget.
///
/// Created empty per render; empty collections do not allocate, so a template with no `assign`
/// or loop renders without touching the heap.
struct LiquidRenderState {
    struct LoopFrame {
        var index0: Int
        var length: Int
        var name: [UInt8]
        /// The loop of `render … for`, which is no loop's `parentloop`.
        var isRenderLoop: Bool
    }

    let root: LiquidValue
    /// `assign` and `capture` targets: visible for the rest of the render, like Shopify's outer scope.
    var globals: [[UInt8]: LiquidValue] = [:]
    /// Loop variables and `include` arguments, innermost last; they shadow globals.
    var bindings: [(name: [UInt8], value: LiquidValue)] = []
    /// `increment`/`decrement` counters, a namespace of their own.
    var counters: [[UInt8]: Int] = [:]
    var loops: [LoopFrame] = []
    var iterations = 0
    /// Where each loop stopped, by loop name, for `offset: continue`.
    var loopOffsets: [[UInt8]: Int] = [:]
    var snippetDepth = 0
    /// Nested `render` calls (blocks and snippets together): bounds the renderer's recursion.
    var renderDepth = 0
    /// Work done so far, against `budget.maxSteps`.
    var steps = 0
    let budget: LiquidBudget

    init(root: LiquidValue, budget: LiquidBudget) {
        self.root = root
        self.budget = budget
    }

    /// Counts `n` steps of work; past the budget the render stops with `.stepLimit`.
    mutating func spend(_ n: Int) throws(TemplateRenderError) {
        let (next, overflow) = steps.addingReportingOverflow(n)
        guard !overflow, next <= budget.maxSteps else { throw .stepLimit(budget.maxSteps) }
        steps = next
    }

    /// `a + b` for step counts, saturating instead of overflowing.
    static func sum(_ a: Int, _ b: Int) -> Int {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : r
    }

    /// `a * b` for step counts, saturating instead of overflowing.
    static func product(_ a: Int, _ b: Int) -> Int {
        let (p, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : p
    }

    /// Steps left, for builders that must stop before their result outgrows the budget.
    var remainingSteps: Int { budget.maxSteps - steps }

    /// Whether no variable has been set, so lookups can go straight to the record.
    var hasNoLocals: Bool { bindings.isEmpty && globals.isEmpty && counters.isEmpty && loops.isEmpty }

    func variable(_ name: [UInt8]) -> LiquidValue? {
        for i in bindings.indices.reversed() where bindings[i].name == name { return bindings[i].value }
        if !loops.isEmpty, name.elementsEqual("forloop".utf8) { return .forloop(loops.count - 1) }
        if let v = globals[name] { return v }
        if let c = counters[name] { return .int(c) }
        return root.property(name, state: self)
    }

    func forloopProperty(depth: Int, key: UnsafeRawBufferPointer) -> LiquidValue? {
        guard loops.indices.contains(depth) else { return nil }
        let frame = loops[depth]
        if LiquidText.equals(key, "index") { return .int(frame.index0 + 1) }
        if LiquidText.equals(key, "index0") { return .int(frame.index0) }
        if LiquidText.equals(key, "rindex") { return .int(frame.length - frame.index0) }
        // index0 < length (both from the loop's bounded count): none of these can overflow.
        if LiquidText.equals(key, "rindex0") { return .int(frame.length - frame.index0 - 1) }
        if LiquidText.equals(key, "first") { return .bool(frame.index0 == 0) }
        if LiquidText.equals(key, "last") { return .bool(frame.index0 == frame.length - 1) }
        if LiquidText.equals(key, "length") { return .int(frame.length) }
        if LiquidText.equals(key, "parentloop") { return depth > 0 && !loops[depth - 1].isRenderLoop ? .forloop(depth - 1) : .null }
        if LiquidText.equals(key, "name") { return .string(frame.name) }
        return nil
    }
}

/// Per-render limits, fixed at compile time (see `TemplateOptions`).
struct LiquidBudget: Sendable {
    /// Most bytes one value a filter, `assign` or `capture` builds may hold.
    let maxBytes: Int
    let maxSteps: Int
    let maxLoopIterations: Int
    /// Deepest render recursion: blocks nest at most `maxNestingDepth` per template or snippet,
    /// snippets at most `maxNestingDepth` deep; this bounds both together so the stack stays small.
    let maxRenderDepth: Int
    /// Not a limit but the other constant of every render: what `"now"` means to `date`.
    let now: Int

    init(_ options: TemplateOptions) {
        now = options.now
        maxBytes = options.maxOutputBytes
        maxSteps = options.maxRenderSteps
        maxLoopIterations = options.maxLoopIterations
        maxRenderDepth = max(0, min(options.maxNestingDepth, 1 << 20)) * 4
    }
}
