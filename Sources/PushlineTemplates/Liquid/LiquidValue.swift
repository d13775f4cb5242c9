import PushlineCore

/// A value during a Liquid render.
///
/// Record values stay `.json` cursors (lazy, zero-copy); only literals, filters, `assign`,
/// `capture` and loops build owned values. Strings are UTF-8 bytes, never Swift `String`s.
enum LiquidValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string([UInt8])
    case array([LiquidValue])
    case object(LiquidObject)
    /// An inclusive integer range, `(1..n)`; only built when its count fits in an Int.
    case range(Int, Int)
    case json(JSONValue)
    /// The `empty` and `blank` literals, which only mean something in comparisons.
    case empty
    case blank
    /// The `forloop` object of the loop at this depth of `LiquidRenderState.loops`; its fields are
    /// read from the loop frame, so a loop builds nothing per iteration.
    case forloop(Int)

    static let emptyString = LiquidValue.string([])

    init(_ text: String) { self = .string(Array(text.utf8)) }
}

/// An object built by a render (or by tests): insertion-ordered, small, linear lookup.
struct LiquidObject: Sendable {
    var keys: [[UInt8]] = []
    var values: [LiquidValue] = []

    subscript(key: [UInt8]) -> LiquidValue? {
        get {
            // The last duplicate wins, like the JSON reader.
            guard let i = keys.lastIndex(of: key) else { return nil }
            return values[i]
        }
        set {
            if let i = keys.lastIndex(of: key) {
                if let newValue { values[i] = newValue } else { keys.remove(at: i); values.remove(at: i) }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    func value(utf8 key: UnsafeRawBufferPointer) -> LiquidValue? {
        for i in keys.indices.reversed() where keys[i].elementsEqual(key) { return values[i] }
        return nil
    }
}

// MARK: Kinds and truth

extension LiquidValue {
    /// Liquid truth: only `false` and `nil` are false.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let b): b
        case .json(let j): j.kind != .null && j.kind != .false
        default: true
        }
    }

    var isNil: Bool {
        switch self {
        case .null: true
        case .json(let j): j.kind == .null
        default: false
        }
    }

    /// Converts scalar `.json` cursors into owned values (strings copy); containers stay lazy.
    var normalized: LiquidValue {
        guard case .json(let j) = self else { return self }
        switch j.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .number:
            if let i = j.int64Value { return .int(Int(i)) }
            return .double(j.doubleValue ?? 0)
        case .string:
            return .string(j.withUnescapedString { Array($0) } ?? [])
        case .array, .object:
            return self
        }
    }

    /// Elements when the value is a sequence (array, range, JSON array), else nil.
    var arrayElements: [LiquidValue]? {
        switch self {
        case .array(let a): return a
        case .range(let lo, let hi): return lo <= hi ? (lo...hi).map { .int($0) } : []
        case .json(let j) where j.kind == .array: return j.elements.map { .json($0) }
        default: return nil
        }
    }

    /// Whether `arrayElements` is non-nil, without building the elements.
    var isSequence: Bool {
        switch self {
        case .array, .range: true
        case .json(let j): j.kind == .array
        default: false
        }
    }

    var isObject: Bool {
        switch self {
        case .object: true
        case .json(let j): j.kind == .object
        default: false
        }
    }

    /// Elements for `for` loops and array filters: sequences as they are, objects as `[key, value]`
    /// pairs (like Ruby's Hash#each), nil as nothing, and any other scalar as a one-element list.
    var iterationElements: [LiquidValue] {
        if let a = arrayElements { return a }
        switch self {
        case .object(let o): return zip(o.keys, o.values).map { .array([.string($0), $1]) }
        case .json(let j) where j.kind == .object:
            return j.members.map { .array([LiquidValue.json($0.key).normalized, .json($0.value)]) }
        default: return isNil ? [] : [self]
        }
    }

    /// Number of characters (strings), elements or members; nil for other values.
    var size: Int? {
        switch self {
        case .string(let s): return LiquidText.characterCount(s)
        case .array(let a): return a.count
        case .object(let o): return o.keys.count
        case .range(let lo, let hi): return lo <= hi ? hi &- lo &+ 1 : 0  // fits: see TemplateMath.rangeCount
        case .json(let j):
            switch j.kind {
            case .array, .object: return j.count
            case .string: return j.withUnescapedString { LiquidText.characterCount($0) }
            default: return nil
            }
        default: return nil
        }
    }
}

// MARK: Lookups

extension LiquidValue {
    /// `value.key` / `value["key"]`, including the special `size`, `first` and `last`.
    func property(_ key: [UInt8], state: borrowing LiquidRenderState) -> LiquidValue? {
        key.withUnsafeBytes { property(utf8: $0, state: state) }
    }

    func property(utf8 key: UnsafeRawBufferPointer, state: borrowing LiquidRenderState) -> LiquidValue? {
        switch self {
        case .json(let j):
            if j.kind == .object {
                if let v = j.member(utf8: key) { return .json(v) }
                if LiquidText.equals(key, "size") { return .int(j.count) }
                return nil
            }
            if j.kind == .array { return sequenceProperty(key) }
            if j.kind == .string, LiquidText.equals(key, "size") { return size.map { .int($0) } }
            return nil
        case .object(let o):
            if let v = o.value(utf8: key) { return v }
            if LiquidText.equals(key, "size") { return .int(o.keys.count) }
            return nil
        case .array, .range:
            return sequenceProperty(key)
        case .string:
            if LiquidText.equals(key, "size") { return size.map { .int($0) } }
            return nil
        case .forloop(let depth):
            return state.forloopProperty(depth: depth, key: key)
        default:
            return nil
        }
    }

    private func sequenceProperty(_ key: UnsafeRawBufferPointer) -> LiquidValue? {
        if LiquidText.equals(key, "size") { return size.map { .int($0) } }
        if LiquidText.equals(key, "first") { return element(at: 0) }
        if LiquidText.equals(key, "last") { return element(at: -1) }
        return nil
    }

    /// `value[index]`; negative indexes count from the end.
    func element(at index: Int) -> LiquidValue? {
        switch self {
        case .json(let j) where j.kind == .array:
            return j[index].map { .json($0) }
        case .array(let a):
            let i = index < 0 ? a.count + index : index
            return a.indices.contains(i) ? a[i] : nil
        case .range(let lo, let hi):
            // Ranges are only built when their count fits in an Int (TemplateMath.rangeCount).
            let count = lo <= hi ? hi &- lo &+ 1 : 0
            let i = index < 0 ? count + index : index
            return i >= 0 && i < count ? .int(lo + i) : nil
        default:
            return nil
        }
    }
}

// MARK: Cost

extension LiquidValue {
    /// Steps one element costs: an element materialized from a range or a JSON container takes
    /// about this many bytes, so charging it keeps memory within a small multiple of the budget.
    static let elementCost = 16

    /// An upper bound of the work (and memory) it takes to read the value as text or elements:
    /// bytes for strings and record values, `elementCost` per element. Saturates at Int.max.
    var workSize: Int {
        switch self {
        case .null, .bool, .int, .double, .empty, .blank, .forloop: return 1
        case .string(let s): return s.count &+ 1
        case .range(let lo, let hi):
            // Ranges are built with a count that fits in an Int (TemplateMath.rangeCount).
            let count = lo <= hi ? hi &- lo &+ 1 : 0
            return LiquidValue.weigh(count)
        case .json(let j):
            switch j.kind {
            case .array, .object: return LiquidValue.saturating(LiquidValue.weigh(j.count), j.byteRange.count)
            default: return j.byteRange.count &+ 1
            }
        case .array(let a):
            // Built arrays nest only a few levels (pairs of objects, record arrays): this recursion
            // is bounded by the record's depth limit.
            var total = LiquidValue.weigh(a.count)
            for e in a { total = LiquidValue.saturating(total, e.workSize) }
            return total
        case .object(let o):
            var total = LiquidValue.weigh(o.keys.count)
            for (k, v) in zip(o.keys, o.values) { total = LiquidValue.saturating(LiquidValue.saturating(total, k.count), v.workSize) }
            return total
        }
    }

    /// What one property or index step into the value may scan.
    var lookupCost: Int {
        switch self {
        case .json(let j):
            switch j.kind {
            case .array, .object: return j.count &+ 1
            case .string: return j.byteRange.count
            default: return 1
            }
        case .string(let s): return s.count &+ 1
        default: return 1
        }
    }

    private static func saturating(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    private static func weigh(_ count: Int) -> Int {
        let (cost, overflow) = count.multipliedReportingOverflow(by: elementCost)
        return overflow ? .max : cost
    }
}
