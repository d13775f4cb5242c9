public import PushlineCore
import PushlineTemplates

/// A `PayloadNode` tree flattened into plain-data instructions over one byte pool.
///
/// Encoding walks this once per device. Instructions hold only integers and flags, so the walk
/// copies no references (walking the tree retained and released every member it passed), and
/// constant runs — keys with their values, pre-serialized subtrees — are single appends. Objects
/// that may be dropped when they come out empty use an explicit stack instead of recursion.
public struct PayloadProgram: Sendable {
    enum Op: Sendable {
        /// Pool bytes appended as they are (after a separator when `separated`).
        // Offsets are Int, not Int32: a pool over 2 GiB (a huge configuration) must not trap.
        case constant(start: Int, count: Int, separated: Bool)
        /// A member name `"key":` from the pool; the value op follows.
        case key(start: Int, count: Int)
        case text(Int, omitIfEmpty: Bool)
        /// Anything rare (typed renders, record values, badges, nested JSON text): the tree's own writer.
        case node(Int, omitIfEmpty: Bool)
        case beginObject(omitIfEmpty: Bool)
        case endObject
        case beginArray
        case endArray
    }

    /// One personalized string leaf, kept apart so the hot loop borrows it in place.
    struct TextLeaf: Sendable {
        let template: any CompiledTemplate
        let field: String
        let slot: Int?
        let role: TextRole
    }

    private(set) var ops: [Op] = []
    private(set) var pool: [UInt8] = []
    private(set) var texts: [TextLeaf] = []
    private(set) var nodes: [PayloadNode] = []
    /// A whole-value program whose value is known empty and omitted (writes nothing, reports false).
    private var omittedAtCompile = false

    /// Compiles a value (written with its braces). With `omitIfEmpty`, a value that comes out
    /// empty writes nothing and `write` returns false, as `PayloadNode.write` does.
    public init(_ root: PayloadNode, omitIfEmpty: Bool = false) {
        emit(root, omitIfEmpty: omitIfEmpty)
        omittedAtCompile = ops.isEmpty
    }

    /// Compiles object members only, for an object whose braces and first member the encoder
    /// writes itself (FCM's `message`, whose `token` comes first).
    public init(members: [PayloadMember]) {
        for member in members { emitMember(member) }
    }

    // MARK: Compiling

    private mutating func emit(_ node: PayloadNode, omitIfEmpty: Bool) {
        switch node {
        case .constant(let bytes):
            if omitIfEmpty && node.isEmptyConstant { return }
            appendConstant(bytes, separated: true)
        case .text(let value, let role):
            guard case .template(let template) = value.source else {
                emit(.string(value.constantText ?? ""), omitIfEmpty: omitIfEmpty)
                return
            }
            texts.append(TextLeaf(template: template, field: value.field, slot: value.slot, role: role))
            ops.append(.text(texts.count - 1, omitIfEmpty: omitIfEmpty))
        case .typed, .recordValue, .relativeBadge, .jsonText, .header:
            nodes.append(node)
            ops.append(.node(nodes.count - 1, omitIfEmpty: omitIfEmpty))
        case .object(let members):
            ops.append(.beginObject(omitIfEmpty: omitIfEmpty))
            for member in members { emitMember(member) }
            ops.append(.endObject)
        case .array(let elements):
            ops.append(.beginArray)
            for element in elements { emit(element, omitIfEmpty: false) }
            ops.append(.endArray)
        }
    }

    private mutating func emitMember(_ member: PayloadMember) {
        if case .constant(let bytes) = member.value {
            if member.omitIfEmpty && member.value.isEmptyConstant { return }
            // Key and value are both constant: one run.
            appendConstant(member.serializedKey + bytes, separated: true)
            return
        }
        let start = pool.count
        pool.append(contentsOf: member.serializedKey)
        ops.append(.key(start: start, count: member.serializedKey.count))
        emit(member.value, omitIfEmpty: member.omitIfEmpty)
    }

    private mutating func appendConstant(_ bytes: [UInt8], separated: Bool) {
        // Merge with a directly preceding constant run (its separator logic already applied).
        if case .constant(let start, let count, let wasSeparated)? = ops.last, start + count == pool.count {
            pool.append(UInt8(ascii: ","))
            pool.append(contentsOf: bytes)
            ops[ops.count - 1] = .constant(start: start, count: count + 1 + bytes.count, separated: wasSeparated)
            return
        }
        let start = pool.count
        pool.append(contentsOf: bytes)
        ops.append(.constant(start: start, count: bytes.count, separated: separated))
    }

    // MARK: Running

    /// State of one open container while the program runs.
    struct Frame: Sendable {
        /// Where the container (with its key, if it is a member value) began, to drop it whole.
        var mark: Int
        var hadComma: Bool
        var omitIfEmpty: Bool
        var written: Int
    }

    /// Appends the value for one recipient. Returns false when the whole value was dropped as empty.
    @discardableResult
    public func write(into writer: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) -> Bool {
        var failure: EncodeFailure?
        var frames = context.takeFrames()
        let wrote: Bool = ops.withUnsafeBufferPointer { ops in
            pool.withUnsafeBytes { pool in
                texts.withUnsafeBufferPointer { texts in
                    do throws(EncodeFailure) {
                        return try run(ops, pool, texts, &frames, into: &writer, context: &context)
                    } catch {
                        failure = error
                        return false
                    }
                }
            }
        }
        context.returnFrames(&frames)
        if let failure { throw failure }
        return wrote
    }

    private func run(
        _ ops: UnsafeBufferPointer<Op>, _ pool: UnsafeRawBufferPointer, _ texts: UnsafeBufferPointer<TextLeaf>,
        _ frames: inout [Frame], into w: inout JSONWriter, context: inout EncodeContext
    ) throws(EncodeFailure) -> Bool {
        frames.removeAll(keepingCapacity: true)
        // Where the current member began (its key), so an omitted value takes its key with it.
        var memberMark = -1
        var memberComma = false
        var rootWritten = false

        @inline(__always) func valueDone(_ written: Bool, _ frames: inout [Frame], _ w: inout JSONWriter) {
            if written {
                if frames.isEmpty { rootWritten = true } else { frames[frames.count - 1].written &+= 1 }
            } else if memberMark >= 0 {
                w.truncate(to: memberMark, needsComma: memberComma)
            }
            memberMark = -1
        }

        for op in ops {
            switch op {
            case .constant(let start, let count, let separated):
                w.appendRawRun(UnsafeRawBufferPointer(rebasing: pool[start..<(start + count)]), separated: separated, endsValue: true)
                // A constant run may hold several members: count it once, it is never empty.
                valueDone(true, &frames, &w)

            case .key(let start, let count):
                memberMark = w.count
                memberComma = w.separatorPending
                w.appendRawRun(UnsafeRawBufferPointer(rebasing: pool[start..<(start + count)]), separated: true, endsValue: false)

            case .text(let index, let omitIfEmpty):
                // Fields read in place through the buffer: binding the leaf would copy (retain) it.
                let i = index
                let written = try PayloadNode.writeText(
                    texts[i].template, field: texts[i].field, slot: texts[i].slot, role: texts[i].role,
                    into: &w, context: &context, omitIfEmpty: omitIfEmpty)
                valueDone(written, &frames, &w)

            case .node(let index, let omitIfEmpty):
                let written = try nodes[index].write(into: &w, context: &context, omitIfEmpty: omitIfEmpty)
                valueDone(written, &frames, &w)

            case .beginObject(let omitIfEmpty):
                let mark = memberMark >= 0 ? memberMark : w.count
                let comma = memberMark >= 0 ? memberComma : w.separatorPending
                frames.append(Frame(mark: mark, hadComma: comma, omitIfEmpty: omitIfEmpty, written: 0))
                memberMark = -1
                w.beginObject()

            case .beginArray:
                let mark = memberMark >= 0 ? memberMark : w.count
                let comma = memberMark >= 0 ? memberComma : w.separatorPending
                frames.append(Frame(mark: mark, hadComma: comma, omitIfEmpty: false, written: 1))
                memberMark = -1
                w.beginArray()

            case .endObject, .endArray:
                let frame = frames.removeLast()
                if case .endObject = op { w.endObject() } else { w.endArray() }
                if frame.written == 0 && frame.omitIfEmpty {
                    w.truncate(to: frame.mark, needsComma: frame.hadComma)
                } else if frames.isEmpty {
                    rootWritten = true
                } else {
                    frames[frames.count - 1].written &+= 1
                }
            }
        }
        return rootWritten || (ops.isEmpty && !omittedAtCompile)
    }
}

extension EncodeContext {
    mutating func takeFrames() -> [PayloadProgram.Frame] {
        var frames: [PayloadProgram.Frame] = []
        swap(&frames, &programFrames)
        return frames
    }

    /// Swapped back, not assigned: an assignment retained the frames and released the empty
    /// array on every program run (several per request).
    mutating func returnFrames(_ frames: inout [PayloadProgram.Frame]) {
        swap(&frames, &programFrames)
    }
}
