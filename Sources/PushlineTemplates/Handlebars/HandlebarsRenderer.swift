import PushlineCore

/// Runs a compiled program for one recipient, writing into a `RenderOutput`.
///
/// Values stay cursors into the record; strings are written from the record's bytes
/// (`withUnescapedString`), numbers as their JSON text, so plain interpolation allocates nothing.
struct HandlebarsRenderer {
    let partials: [HandlebarsProgram]
    let strict: Bool
    let htmlEscape: Bool
    let compat: Bool
    let maxLoopIterations: Int
    let maxPartialDepth: Int
    /// Most bytes a helper may build (`TemplateOptions.maxOutputBytes`).
    let maxBytes: Int
    let maxSteps: Int
    /// Deepest render recursion, blocks and partials together (4 × maxNestingDepth).
    let maxRenderDepth: Int
    let root: HandlebarsValue
    private var iterations = 0
    private var partialDepth = 0
    private var renderDepth = 0
    /// Work done so far: iterations, helper calls, partial expansions, bytes helpers read and build.
    private(set) var steps = 0

    init(template: HandlebarsTemplate, root: HandlebarsValue) {
        partials = template.partials
        strict = template.options.strict
        htmlEscape = template.options.htmlEscape
        compat = template.compat
        maxLoopIterations = template.options.maxLoopIterations
        maxPartialDepth = template.options.maxNestingDepth
        maxBytes = template.options.maxOutputBytes
        maxSteps = template.options.maxRenderSteps
        maxRenderDepth = max(0, min(template.options.maxNestingDepth, 1 << 20)) * 4
        self.root = root
    }

    /// Counts `n` steps; past `maxSteps` the render stops (`render_step_limit`).
    mutating func spend(_ n: Int) throws(TemplateRenderError) {
        let (next, overflow) = steps.addingReportingOverflow(n)
        guard !overflow, next <= maxSteps else { throw .stepLimit(maxSteps) }
        steps = next
    }

    mutating func render(
        _ program: HandlebarsProgram, _ frame: UnsafePointer<HandlebarsFrame>, _ out: inout RenderOutput
    ) throws(TemplateRenderError) {
        // Blocks nest at most maxNestingDepth per template or partial, partials as deep again:
        // this bounds both together so a partial recursing through nested blocks keeps the stack small.
        renderDepth += 1
        defer { renderDepth -= 1 }
        if renderDepth > maxRenderDepth {
            throw .other("blocks and partials nest deeper than \(maxRenderDepth) levels while rendering")
        }
        for node in program {
            switch node {
            case .text(let bytes):
                do { try out.write(bytes) } catch { throw TemplateRenderError(error) }
            case .lookup(let node):
                if iterations > 0 || partialDepth > 0 { try chargeRepeatedLookup(node.path, frame) }
                if let contextPath = node.contextPath, case .json(let context) = frame.pointee.context,
                   let found = context.value(at: contextPath) {
                    try Self.write(json: found, escaped: node.escaped && htmlEscape, into: &out)
                    continue
                }
                let value = lookup(node.path, frame)
                if value.isMissing {
                    if strict { throw .missingVariable(node.path.text) }
                    continue
                }
                try Self.write(value, escaped: node.escaped && htmlEscape, into: &out)
            case .value(let expression, let escaped):
                let value = try evaluate(expression, frame, tolerant: false)
                try Self.write(value, escaped: escaped && htmlEscape, into: &out)
            case .block(let block):
                try render(block, frame, &out)
            case .partial(let index, let context):
                partialDepth += 1
                defer { partialDepth -= 1 }
                if partialDepth > maxPartialDepth {
                    throw .other("partials nested deeper than \(maxPartialDepth) levels")
                }
                // A partial that includes itself twice expands 2^depth times: each expansion is charged.
                try spend(TemplateCost.expansion)
                if let context {
                    let value = try evaluate(context, frame, tolerant: true)
                    try renderScoped(partials[index], frame, context: value, &out)
                } else {
                    try render(partials[index], frame, &out)
                }
            }
        }
    }

    private mutating func render(
        _ block: HandlebarsBlock, _ frame: UnsafePointer<HandlebarsFrame>, _ out: inout RenderOutput
    ) throws(TemplateRenderError) {
        // A step per block: in a loop, a template of many blocks repeats them all.
        try spend(1)
        let subject = try evaluate(block.subject, frame, tolerant: true)
        switch block.kind {
        case .if(let includeZero):
            try render(subject.isEmpty(includeZero: includeZero) ? block.inverse : block.body, frame, &out)
        case .unless(let includeZero):
            try render(subject.isEmpty(includeZero: includeZero) ? block.body : block.inverse, frame, &out)
        case .with:
            if subject.isEmpty() {
                try render(block.inverse, frame, &out)
            } else {
                try renderScoped(block.body, frame, context: subject, blockParams: block.blockParamCount, &out)
            }
        case .each:
            if !(try iterate(subject, block, frame, &out)) { try render(block.inverse, frame, &out) }
        case .section:
            // Handlebars' blockHelperMissing.
            switch subject {
            case .bool(true):
                try render(block.body, frame, &out)
            case .json(let json) where json.kind == .true:
                try render(block.body, frame, &out)
            case .missing, .null, .bool(false):
                try render(block.inverse, frame, &out)
            case .json(let json) where json.kind == .false || json.kind == .null:
                try render(block.inverse, frame, &out)
            case .json(let json) where json.kind == .array:
                if !(try iterate(subject, block, frame, &out)) { try render(block.inverse, frame, &out) }
            default:
                try renderScoped(block.body, frame, context: subject, &out)
            }
        }
    }

    /// Renders `program` with `context` as `this`.
    private mutating func renderScoped(
        _ program: HandlebarsProgram, _ frame: UnsafePointer<HandlebarsFrame>, context: HandlebarsValue,
        blockParams: Int = 0, _ out: inout RenderOutput
    ) throws(TemplateRenderError) {
        let inner = HandlebarsFrame(
            context: context, ownsContext: !context.isSameContext(as: frame.pointee.context),
            blockParamCount: blockParams, blockParam0: context, parent: frame)
        try withUnsafePointer(to: inner) { (pointer) throws(TemplateRenderError) in try render(program, pointer, &out) }
    }

    /// `#each` over an array or an object's members; false when there was nothing to iterate.
    private mutating func iterate(
        _ subject: HandlebarsValue, _ block: HandlebarsBlock, _ frame: UnsafePointer<HandlebarsFrame>, _ out: inout RenderOutput
    ) throws(TemplateRenderError) -> Bool {
        guard case .json(let json) = subject, json.count > 0 else { return false }
        // Refused before the elements are materialized: a record's 500,000-element array would
        // otherwise be built only to stop at the loop limit.
        if json.kind == .array || json.kind == .object, json.count > maxLoopIterations - iterations {
            throw .loopLimit(maxLoopIterations)
        }
        switch json.kind {
        case .array:
            let elements = json.elements
            for (index, element) in elements.enumerated() {
                try iteration(block, frame, value: .json(element), key: .int(Int64(index)), index: index, count: elements.count, &out)
            }
        case .object:
            let members = json.members
            for (index, member) in members.enumerated() {
                try iteration(block, frame, value: .json(member.value), key: .json(member.key), index: index, count: members.count, &out)
            }
        default:
            return false
        }
        return true
    }

    private mutating func iteration(
        _ block: HandlebarsBlock, _ frame: UnsafePointer<HandlebarsFrame>, value: HandlebarsValue, key: HandlebarsValue,
        index: Int, count: Int, _ out: inout RenderOutput
    ) throws(TemplateRenderError) {
        iterations += 1
        if iterations > maxLoopIterations { throw .loopLimit(maxLoopIterations) }
        try spend(1)
        let inner = HandlebarsFrame(
            context: value, ownsContext: true, loop: HandlebarsLoopData(index: index, count: count, key: key),
            blockParamCount: block.blockParamCount, blockParam0: value, blockParam1: key, parent: frame)
        try withUnsafePointer(to: inner) { (pointer) throws(TemplateRenderError) in try render(block.body, pointer, &out) }
    }

    // MARK: Values

    /// `tolerant`: a missing path is a value (conditions, helper arguments that test presence),
    /// not a strict-mode error.
    mutating func evaluate(
        _ expression: HandlebarsExpression, _ frame: UnsafePointer<HandlebarsFrame>, tolerant: Bool
    ) throws(TemplateRenderError) -> HandlebarsValue {
        switch expression {
        case .path(let path):
            if iterations > 0 || partialDepth > 0 { try chargeRepeatedLookup(path, frame) }
            let value = lookup(path, frame)
            if strict && !tolerant && value.isMissing { throw .missingVariable(path.text) }
            return value
        case .literal(let value):
            return value
        case .helper(let helper, let arguments, let hash):
            try spend(TemplateCost.call)
            let value = try call(helper, arguments, hash, frame)
            // What a helper builds stays within the field limit, and every byte of it is a step.
            if case .string(let bytes) = value {
                if bytes.count > maxBytes { throw .outputLimit(maxBytes) }
                try spend(bytes.count)
            }
            return value
        }
    }

    func lookup(_ path: HandlebarsPath, _ frame: UnsafePointer<HandlebarsFrame>) -> HandlebarsValue {
        switch path.base {
        case .context(let depth, let scoped):
            guard let contextFrame = frame.contextFrame(depth: depth) else { return .missing }
            let value = follow(contextFrame.pointee.context, path)
            guard value.isMissing, compat, !scoped, !path.segments.isEmpty,
                  !hasMember(contextFrame.pointee.context, path.segments[0]) else { return value }
            // Mustache / compat: the first name resolves in the nearest context that has it
            // (only the first: `a.b` never mixes `a` from one context with `b` from another).
            var outer = contextFrame.pointee.parent
            while let current = outer {
                if current.pointee.ownsContext, case .json(let json) = current.pointee.context, json.kind == .object,
                   member(json, path.segments[0]) != nil {
                    return follow(current.pointee.context, path)
                }
                outer = current.pointee.parent
            }
            return value
        case .root:
            return follow(root, path)
        case .data(let variable, let depth):
            guard let loop = frame.loopFrame(depth: depth) else { return .missing }
            let value: HandlebarsValue
            switch variable {
            case .index: value = .int(Int64(loop.index))
            case .key: value = loop.key
            case .first: value = .bool(loop.index == 0)
            case .last: value = .bool(loop.index == loop.count - 1)
            case .unknown: return .missing
            }
            return path.segments.isEmpty ? value : follow(value, path)
        case .blockParameter(let scopes, let slot):
            guard let owner = frame.blockParamFrame(scopes: scopes) else { return .missing }
            return follow(slot == 0 ? owner.pointee.blockParam0 : owner.pointee.blockParam1, path)
        }
    }

    /// A lookup scans the members or elements of every container it steps into. Outside loops
    /// and partials each lookup node runs once per render, so that is bounded by the template; in
    /// them it repeats, so it is charged (after the first iteration: flat templates pay nothing).
    private mutating func chargeRepeatedLookup(_ path: HandlebarsPath, _ frame: UnsafePointer<HandlebarsFrame>) throws(TemplateRenderError) {
        let start: HandlebarsValue
        switch path.base {
        case .context(let depth, _): start = frame.contextFrame(depth: depth)?.pointee.context ?? .missing
        case .root: start = root
        case .blockParameter(let scopes, let slot):
            guard let owner = frame.blockParamFrame(scopes: scopes) else { return }
            start = slot == 0 ? owner.pointee.blockParam0 : owner.pointee.blockParam1
        case .data: return
        }
        guard case .json(var json) = start else { return try spend(1) }
        // Counts come from one record line: their sum cannot overflow.
        var cost = 1
        for segment in path.segments {
            cost = cost &+ json.count
            guard let next = member(json, segment) else { break }
            json = next
        }
        try spend(cost)
    }

    private func follow(_ start: HandlebarsValue, _ path: HandlebarsPath) -> HandlebarsValue {
        if path.segments.isEmpty { return start }
        guard case .json(var json) = start else { return .missing }
        if let jsonPath = path.jsonPath {
            return json.value(at: jsonPath).map(HandlebarsValue.json) ?? .missing
        }
        for segment in path.segments {
            guard let next = member(json, segment) else { return .missing }
            json = next
        }
        return .json(json)
    }

    private func hasMember(_ value: HandlebarsValue, _ segment: HandlebarsSegment) -> Bool {
        guard case .json(let json) = value else { return false }
        return member(json, segment) != nil
    }

    private func member(_ json: JSONValue, _ segment: HandlebarsSegment) -> JSONValue? {
        switch json.kind {
        case .array: return segment.index.flatMap { json[$0] }
        case .object: return segment.key.withUnsafeBytes { json.member(utf8: $0) }
        default: return nil
        }
    }

    // MARK: Output

    /// A record value: strings without escapes and numbers go out as their bytes in the record.
    /// Static: the flat program writes record values through it too.
    static func write(json: JSONValue, escaped: Bool, into out: inout RenderOutput) throws(TemplateRenderError) {
        let kind = json.kind
        guard kind == .number || (kind == .string && !json.stringHasEscapes) else {
            return try Self.write(escapedOrOther: .json(json), escaped: escaped, into: &out)
        }
        // The record's own bytes, without a reference to (and a slice of) its buffer array.
        let content = kind == .number ? json.unsafeRawText : json.unsafeRawStringContent
        defer { withExtendedLifetime(json) {} }
        do {
            if escaped && kind == .string {
                try HandlebarsEscaping.write(content, into: &out)
            } else {
                try out.write(content)
            }
        } catch {
            throw TemplateRenderError(error)
        }
    }

    static func write(_ value: HandlebarsValue, escaped: Bool, into out: inout RenderOutput) throws(TemplateRenderError) {
        // A record value: its own bytes where they are the text (`write(json:)`), else below.
        if case .json(let json) = value { return try write(json: json, escaped: escaped, into: &out) }
        try write(escapedOrOther: value, escaped: escaped, into: &out)
    }

    /// A record string with escapes, or any value but a record string or number.
    private static func write(escapedOrOther value: HandlebarsValue, escaped: Bool, into out: inout RenderOutput) throws(TemplateRenderError) {
        do {
            switch value {
            case .json(let json) where json.kind == .string:
                if escaped {
                    try json.withUnescapedString { (text) throws(RenderOutput.LimitExceeded) in try HandlebarsEscaping.write(text, into: &out) }
                } else {
                    try json.withUnescapedString { (text) throws(RenderOutput.LimitExceeded) in try out.write(text) }
                }
            case .missing, .null:
                return
            case .string(let bytes) where !escaped:
                try out.write(bytes)
            default:
                let bytes = value.textBytes
                if escaped {
                    try HandlebarsEscaping.write(bytes: bytes[...], into: &out)
                } else {
                    try out.write(bytes)
                }
            }
        } catch {
            throw TemplateRenderError(error)
        }
    }
}
