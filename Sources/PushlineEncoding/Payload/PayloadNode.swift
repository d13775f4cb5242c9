public import PushlineCore
import PushlineTemplates

/// Which personalized text a node holds, for the oversize policy (body is shortened first).
public enum TextRole: Sendable, Equatable {
    case body
    case title
    case other
}

/// A provider payload compiled once per campaign: constant parts pre-serialized to bytes,
/// personalized leaves rendered per recipient.
///
/// Mapping an override property to its wire location happens when the tree is built; encoding a
/// device is then a walk that appends into one `JSONWriter`. Objects whose members are all
/// constant fold into a single byte run, so a typical payload costs a few appends and the renders.
public indirect enum PayloadNode: Sendable {
    /// A complete JSON value, already serialized.
    case constant([UInt8])
    /// A string rendered for each recipient.
    case text(TemplatedValue, role: TextRole)
    /// A value rendered as text, then encoded as a number or boolean.
    case typed(TemplatedValue, RenderedType)
    /// A value copied from the recipient's record (`JSONPath` from the root); omitted when absent.
    case recordValue(JSONPath)
    /// A badge relative to the device's current `badge` field (0 when the device has none):
    /// iOS `badge: "+1"`, `"-1"`, `"auto"` (= +1). A decrement stops at 0; the device's badge and
    /// the result must be within `NotificationSchema.badgeRange` (else a reject naming `field`).
    case relativeBadge(Int, field: String)
    case object([PayloadMember])
    case array([PayloadNode])
    /// A string that the provider sends on as an HTTP header (FCM's `apns.headers`): checked per
    /// recipient by the same rule as a header Pushline writes itself.
    case header(HeaderValue)
    /// A JSON value written as a JSON string (FCM and ADM data hold strings only; the Airship SDK
    /// parses objects such as `com.urbanairship.style` back out of them).
    case jsonText(PayloadNode)

    // MARK: Building

    /// A JSON value carried as a string; a constant value folds to a constant string.
    public static func jsonString(_ node: PayloadNode) -> PayloadNode {
        guard case .constant(let bytes) = node else { return .jsonText(node) }
        var writer = JSONWriter(reservingCapacity: bytes.count + 16)
        writer.writeString(utf8: bytes)
        return .constant(writer.bytes)
    }

    public static func string(_ value: String) -> PayloadNode {
        var writer = JSONWriter(reservingCapacity: value.utf8.count + 2)
        writer.writeString(value)
        return .constant(writer.bytes)
    }

    public static func integer(_ value: Int) -> PayloadNode {
        var writer = JSONWriter(reservingCapacity: 8)
        writer.writeInt(value)
        return .constant(writer.bytes)
    }

    public static func number(_ value: Double) -> PayloadNode {
        var writer = JSONWriter(reservingCapacity: 8)
        writer.writeDouble(value)
        return .constant(writer.bytes)
    }

    public static func bool(_ value: Bool) -> PayloadNode {
        .constant(Array((value ? "true" : "false").utf8))
    }

    /// A header value: constant text (checked when compiled) folds to a constant.
    public static func header(_ header: HeaderValue?) -> PayloadNode? {
        guard let header else { return nil }
        if let text = header.value.constantText { return .string(text) }
        return .header(header)
    }

    /// A templated string: constant text folds to a constant.
    public static func templated(_ value: TemplatedValue, role: TextRole = .other) -> PayloadNode {
        if let text = value.constantText { return .string(text) }
        return .text(value, role: role)
    }

    /// An object; when every member is constant (and none may be omitted) it folds to bytes.
    public static func makeObject(_ members: [PayloadMember]) -> PayloadNode {
        let foldable = members.allSatisfy { member in
            if case .constant = member.value { return !member.omitIfEmpty || !member.value.isEmptyConstant }
            return false
        }
        guard foldable else { return .object(members) }
        var writer = JSONWriter(reservingCapacity: 64)
        writer.beginObject()
        for member in members {
            guard case .constant(let bytes) = member.value else { continue }
            if member.omitIfEmpty && member.value.isEmptyConstant { continue }
            writer.writeKey(member.key)
            bytes.withUnsafeBytes { writer.writeRawValue($0) }
        }
        writer.endObject()
        return .constant(writer.bytes)
    }

    public static func makeArray(_ elements: [PayloadNode]) -> PayloadNode {
        let constants = elements.compactMap { node -> [UInt8]? in
            if case .constant(let bytes) = node { return bytes }
            return nil
        }
        guard constants.count == elements.count else { return .array(elements) }
        var writer = JSONWriter(reservingCapacity: 64)
        writer.beginArray()
        for bytes in constants { bytes.withUnsafeBytes { writer.writeRawValue($0) } }
        writer.endArray()
        return .constant(writer.bytes)
    }

    var isEmptyConstant: Bool {
        guard case .constant(let bytes) = self else { return false }
        return bytes == [0x22, 0x22] || bytes == [0x7B, 0x7D] || bytes == [0x5B, 0x5D]
    }

    /// Whether any part of the tree depends on the recipient.
    public var isPersonalized: Bool {
        switch self {
        case .constant: false
        case .text, .typed, .recordValue, .relativeBadge, .header: true
        case .jsonText(let inner): inner.isPersonalized
        case .object(let members): members.contains { $0.value.isPersonalized }
        case .array(let elements): elements.contains { $0.isPersonalized }
        }
    }

    // MARK: Writing

    /// Appends this value for one recipient. Returns false when nothing was written because the
    /// value came out empty and `omitIfEmpty` allowed dropping it.
    @discardableResult
    public func write(into writer: inout JSONWriter, context: inout EncodeContext, omitIfEmpty: Bool = false) throws(EncodeFailure) -> Bool {
        switch self {
        case .constant(let bytes):
            if omitIfEmpty && isEmptyConstant { return false }
            bytes.withUnsafeBytes { writer.writeRawValue($0) }
            return true

        case .text(let value, let role):
            guard case .template(let template) = value.source else {
                // Constants are folded at build time; a constant here only comes from a test.
                writer.writeString(value.constantText ?? "")
                return true
            }
            return try Self.writeText(template, field: value.field, slot: value.slot, role: role, into: &writer, context: &context, omitIfEmpty: omitIfEmpty)

        case .typed(let value, let type):
            return try Self.writeTyped(value, type, into: &writer, context: &context, omitIfEmpty: omitIfEmpty)

        case .recordValue(let path):
            return Self.writeRecordValue(path, into: &writer, context: &context)

        case .jsonText(let inner):
            // Rare (Airship SDK objects with personalized leaves): serialize aside, then quote.
            var nested = JSONWriter(reservingCapacity: 256)
            try inner.write(into: &nested, context: &context)
            writer.writeString(utf8: nested.bytes)
            return true

        case .header(let header):
            try header.render(context: &context)
            if context.scratch.bytes.isEmpty && omitIfEmpty { return false }
            writer.writeString(utf8: context.scratch.bytes)
            return true

        case .relativeBadge(let delta, let field):
            try Self.writeRelativeBadge(delta, field: field, into: &writer, context: &context)
            return true

        case .object(let members):
            let mark = writer.count
            let hadComma = writer.separatorPending
            writer.beginObject()
            var wrote = 0
            for member in members {
                let keyMark = writer.count
                let keyComma = writer.separatorPending
                writer.writeKey(serialized: member.serializedKey)
                if try member.value.write(into: &writer, context: &context, omitIfEmpty: member.omitIfEmpty) {
                    wrote += 1
                } else {
                    writer.truncate(to: keyMark, needsComma: keyComma)
                }
            }
            writer.endObject()
            if wrote == 0 && omitIfEmpty {
                writer.truncate(to: mark, needsComma: hadComma)
                return false
            }
            return true

        case .array(let elements):
            let mark = writer.count
            let hadComma = writer.separatorPending
            writer.beginArray()
            for element in elements {
                try element.write(into: &writer, context: &context)
            }
            writer.endArray()
            if elements.isEmpty && omitIfEmpty {
                writer.truncate(to: mark, needsComma: hadComma)
                return false
            }
            return true
        }
    }

    static func writeRecordValue(_ path: JSONPath, into writer: inout JSONWriter, context: inout EncodeContext) -> Bool {
        guard let found = context.record.value(at: path), !found.isNull else { return false }
        writer.writeValue(found)
        return true
    }

    static func writeRelativeBadge(_ delta: Int, field: String, into writer: inout JSONWriter, context: inout EncodeContext) throws(EncodeFailure) {
        let range = NotificationSchema.badgeRange
        var current = 0
        if let badge = context.device?.member("badge"), !badge.isNull {
            guard let value = badge.int64Value.flatMap(CheckedMath.integer), range.contains(value) else {
                throw EncodeFailure(field: field, invalid: "the device's badge is \(RecordText.preview(badge)), expected an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            current = value
        }
        guard let sum = CheckedMath.add(current, delta) else {
            throw EncodeFailure(field: field, invalid: "the device's badge \(current) changed by \(delta) is out of range")
        }
        // A decrement stops at 0 (documented); above the range is a reject, as a rendered badge is.
        try IntegerRule.check(max(0, sum), range, field: field, what: "the device's badge \(current) changed by \(delta) gives")
        writer.writeInt(max(0, sum))
    }

    /// Writes one personalized string: rendered straight into the writer (escaped as it goes),
    /// or copied from this recipient's render cache, or shortened under the truncate policy.
    static func writeText(
        _ template: any CompiledTemplate, field: String, slot: Int?, role: TextRole,
        into writer: inout JSONWriter, context: inout EncodeContext, omitIfEmpty: Bool
    ) throws(EncodeFailure) -> Bool {
        if var truncation = context.truncation, let budget = truncation.budget(for: role) {
            // Slow path (oversize policy): the text is rendered and segmented into graphemes on
            // the first encode only; every encode then cuts it from its table.
            context.truncation = nil   // move the tables out while they are updated (no copy)
            let position = truncation.cursor
            truncation.cursor += 1
            if position == truncation.texts.count {
                do {
                    try TemplatedValue(.template(template), field: field).renderRaw(record: context.record, into: &context.scratch)
                } catch {
                    context.truncation = truncation
                    throw error
                }
                truncation.texts.append(TruncatableText(role: role, raw: context.scratch.bytes))
            }
            let (written, shortened) = truncation.texts[position].write(budget: budget, into: &writer, omitIfEmpty: omitIfEmpty)
            if shortened { truncation.didTruncate = true }
            context.truncation = truncation
            return written
        }
        let mark = writer.count
        let hadComma = writer.separatorPending
        var rendered = 0
        if let slot, let hit = context.cachedRender(slot) {
            // Already rendered for this recipient (another device or field): copy the bytes.
            if hit.textCount == 0 && omitIfEmpty { return false }
            context.renderStore.withUnsafeBytes { store in
                writer.writeString(escapedContent: UnsafeRawBufferPointer(rebasing: store[hit.bytes]))
            }
            rendered = hit.textCount
        } else {
            let content: Range<Int>
            do {
                // The record is read in place: a local copy of it was one more retain per render.
                content = try writer.writeString(renderingWithLimit: context.fieldLimit) { (output: inout RenderOutput) throws(TemplateRenderError) in
                    try template.render(record: context.record, into: &output)
                    rendered = output.textCount
                }
            } catch {
                throw EncodeFailure(field: field, error)
            }
            if let slot {
                // In place: `writer.bytes[content]` copied (retained) the array and went through a generic slice.
                writer.withUnsafeBytes { context.storeRender(slot, UnsafeRawBufferPointer(rebasing: $0[content]), textCount: rendered) }
            }
            if rendered == 0 && omitIfEmpty {
                writer.truncate(to: mark, needsComma: hadComma)
                return false
            }
        }
        return true
    }

    static func writeTyped(
        _ value: TemplatedValue, _ type: RenderedType, into writer: inout JSONWriter,
        context: inout EncodeContext, omitIfEmpty: Bool
    ) throws(EncodeFailure) -> Bool {
        try value.renderRaw(record: context.record, into: &context.scratch)
        let text = TypedText.trimmed(context.scratch.bytes)
        if text.isEmpty {
            if omitIfEmpty { return false }
            throw EncodeFailure(field: value.field, invalid: "rendered empty, expected \(type.name)")
        }
        switch type {
        case .string:
            writer.writeString(utf8: Array(text))
        case .integer(let range):
            guard let number = TypedText.integer(text) else {
                throw EncodeFailure(field: value.field, invalid: "rendered \(TypedText.quote(text)), expected an integer")
            }
            try IntegerRule.check(number, range, field: value.field, what: "rendered")
            writer.writeInt(number)
        case .number(let range):
            guard let number = TypedText.number(text) else {
                throw EncodeFailure(field: value.field, invalid: "rendered \(TypedText.quote(text)), expected a number")
            }
            if let range, !range.contains(number) {
                throw EncodeFailure(field: value.field, invalid: "rendered \(number), expected \(range.lowerBound) to \(range.upperBound)")
            }
            writer.writeDouble(number)
        case .boolean:
            guard let flag = TypedText.boolean(text) else {
                throw EncodeFailure(field: value.field, invalid: "rendered \(TypedText.quote(text)), expected true or false")
            }
            writer.writeBool(flag)
        }
        return true
    }
}

/// One member of a payload object.
public struct PayloadMember: Sendable {
    public var key: String {
        didSet { serializedKey = JSONWriter.serializedKey(key) }
    }
    /// `"key":`, escaped once when the campaign compiles.
    public private(set) var serializedKey: [UInt8]
    public var value: PayloadNode
    /// Drop the member when its value renders empty (`""`, `{}` or `[]`) rather than send it empty.
    public var omitIfEmpty: Bool

    public init(_ key: String, _ value: PayloadNode, omitIfEmpty: Bool = true) {
        self.key = key
        self.serializedKey = JSONWriter.serializedKey(key)
        self.value = value
        self.omitIfEmpty = omitIfEmpty
    }
}

/// Per-worker state for encoding one device: the record, a scratch buffer, the field limit.
public struct EncodeContext: Sendable {
    public var record: JSONValue
    /// The device entry being encoded (for device-relative values such as a relative badge).
    public var device: JSONValue?
    public var scratch: RenderOutput
    public var fieldLimit: Int
    /// Set only while re-encoding an oversize payload under the `truncate` policy.
    public var truncation: TruncationBudget?
    /// Payload encodes so far (each size-checked write, truncation retries included): the
    /// truncate policy's cost, which tests bound.
    public internal(set) var payloadEncodes = 0

    /// The payload program's container stack, kept here so its capacity is reused.
    var programFrames: [PayloadProgram.Frame] = []
    /// The line's JSON index and device routes, reused line after line (no allocation per line
    /// once they have grown to the audience's lines).
    var tapeStorage = JSONTapeStorage()
    var routeStorage: [DeviceRoute] = []
    /// What `record` holds between recipients: a value of no audience line.
    private let blankRecord: JSONValue
    /// Escaped renders of the current recipient, by template slot (see `TemplatedValue.slot`).
    private var renderSlots: [(generation: Int, bytes: Range<Int>, textCount: Int)]
    private(set) var renderStore: [UInt8] = []
    private var generation = 1

    public init(record: JSONValue, fieldLimit: Int, templateSlots: Int = 0) {
        self.record = record
        self.blankRecord = record
        self.fieldLimit = fieldLimit
        self.scratch = RenderOutput(mode: .raw, limit: fieldLimit, reservingCapacity: 256)
        self.renderSlots = Array(repeating: (0, 0..<0, 0), count: templateSlots)
        self.renderStore.reserveCapacity(templateSlots * 64)
    }

    /// Starts the next recipient: renders cached for the previous one no longer apply.
    public mutating func begin(record: JSONValue) {
        self.record = record
        device = nil
        generation &+= 1
        renderStore.removeAll(keepingCapacity: true)
    }

    /// Lets go of the previous line (its record, device and routes), so its index and route
    /// storage are no longer shared and the next line reuses them in place.
    mutating func endLine() {
        record = blankRecord
        device = nil
        routeStorage.removeAll(keepingCapacity: true)
    }

    func cachedRender(_ slot: Int) -> (bytes: Range<Int>, textCount: Int)? {
        guard slot < renderSlots.count else { return nil }
        let entry = renderSlots[slot]
        return entry.generation == generation ? (entry.bytes, entry.textCount) : nil
    }

    mutating func storeRender(_ slot: Int, _ bytes: UnsafeRawBufferPointer, textCount: Int) {
        guard slot < renderSlots.count else { return }
        let start = renderStore.count
        renderStore.append(contentsOf: bytes)
        renderSlots[slot] = (generation, start..<renderStore.count, textCount)
    }
}

extension RenderedType {
    var name: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "true or false"
        }
    }
}

/// The one range check for integers produced per recipient (rendered, or relative badges).
enum IntegerRule {
    /// `what` is built only for a reject: an interpolated message per call was a String
    /// allocation per device on every relative badge.
    static func check(_ value: Int, _ range: ClosedRange<Int>?, field: String, what: @autoclosure () -> String) throws(EncodeFailure) {
        if let range, !range.contains(value) {
            throw EncodeFailure(field: field, invalid: "\(what()) \(value), expected \(range.lowerBound) to \(range.upperBound)")
        }
    }
}

/// Record values quoted in reject messages: their JSON text, at most 40 bytes.
enum RecordText {
    static func preview(_ value: JSONValue) -> String {
        var writer = JSONWriter(reservingCapacity: 64)
        writer.writeValue(value)
        let bytes = writer.bytes
        let cut = bytes.count > 40 ? TextTruncation.truncate(bytes, toBytes: 40) : bytes
        return String(decoding: cut, as: UTF8.self)
    }
}

/// Parsing of rendered text for typed fields.
enum TypedText {
    static func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var slice = bytes[...]
        while let first = slice.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { slice.removeLast() }
        return slice
    }

    static func integer(_ text: ArraySlice<UInt8>) -> Int? {
        var slice = text
        var negative = false
        if let first = slice.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            slice.removeFirst()
        }
        guard !slice.isEmpty, slice.count <= 18 else { return nil }
        var value = 0
        for b in slice {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return negative ? -value : value
    }

    static func number(_ text: ArraySlice<UInt8>) -> Double? {
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    static func boolean(_ text: ArraySlice<UInt8>) -> Bool? {
        if text.elementsEqual("true".utf8) { return true }
        if text.elementsEqual("false".utf8) { return false }
        return nil
    }

    static func quote(_ text: ArraySlice<UInt8>) -> String {
        let string = String(decoding: text.prefix(40), as: UTF8.self)
        return "'\(string)\(text.count > 40 ? "…" : "")'"
    }
}
