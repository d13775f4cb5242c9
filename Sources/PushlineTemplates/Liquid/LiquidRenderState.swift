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

    init(root: LiquidValue) { self.root = root }

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
        if LiquidText.equals(key, "rindex0") { return .int(frame.length - frame.index0 - 1) }
        if LiquidText.equals(key, "first") { return .bool(frame.index0 == 0) }
        if LiquidText.equals(key, "last") { return .bool(frame.index0 == frame.length - 1) }
        if LiquidText.equals(key, "length") { return .int(frame.length) }
        if LiquidText.equals(key, "parentloop") { return depth > 0 && !loops[depth - 1].isRenderLoop ? .forloop(depth - 1) : .null }
        if LiquidText.equals(key, "name") { return .string(frame.name) }
        return nil
    }
}
