/// A cursor to one value of a `JSONDocument`. Cheap to copy; reads lazily from the bytes.
public struct JSONValue: Sendable {
    /// The document this value belongs to.
    public let document: JSONDocument
    /// The value's position in the document's tape.
    internal let index: Int

    internal init(document: JSONDocument, index: Int) {
        self.document = document
        self.index = index
    }

    private var entry: JSONTapeEntry { document.entry(index) }

    public var kind: JSONKind { entry.kind }

    /// The value's JSON text in `document.buffer` (for strings, including the quotes).
    public var byteRange: Range<Int> {
        document.withTextAndTape { _, base, tape in
            let e = tape[index]
            return (base &+ Int(e.start))..<(base &+ Int(e.end))
        }
    }

    /// Calls `body` with the value's JSON text (for strings, including the quotes).
    public func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(unsafeRawText)
    }

    // MARK: Strings

    /// Whether the string's content holds escapes (false: the raw content bytes are the value).
    public var stringHasEscapes: Bool { kind == .string && entry.aux & JSONTapeEntry.escaped != 0 }

    /// Whether this is a string whose raw content is its value and is also valid JSON string
    /// content that `JSONEscaper` leaves as it is: no escapes, no U+2028 or U+2029 (the parser
    /// refused quotes, control characters and invalid UTF-8). Such content can be copied into a
    /// JSON string without an escaping pass (`RenderOutput.write(_:verbatim:)`).
    public var stringIsVerbatimJSON: Bool { kind == .string && entry.aux == 0 }

    /// Calls `body` with the unescaped UTF-8 content of a string (no allocation when it has no
    /// escapes; lone surrogate escapes become U+FFFD). Nil when the value is not a string.
    ///
    /// Escaped content is decoded into a temporary buffer as long as the content (decoding never
    /// lengthens it), on the stack when small.
    public func withUnescapedString<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        guard kind == .string else { return nil }
        let content = unsafeRawStringContent
        guard entry.aux & JSONTapeEntry.escaped != 0 else { return try body(content) }
        // The standard library's closures are not typed-throws yet, hence the Result.
        let result = withUnsafeTemporaryAllocation(byteCount: content.count, alignment: 1) { scratch -> Result<R, E> in
            let length = JSONStringDecoding.unescape(content, into: scratch)
            return Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: scratch[..<length])) }
        }
        return try result.get()
    }

    /// The bytes between a string's quotes as they stand in the text (escapes not decoded);
    /// empty for other kinds. They point into the document's text, so they are valid only while
    /// this value, which holds the document, is alive (`withExtendedLifetime`). For hot paths
    /// that copy them once: `withUnescapedString` is generic (and cross-module, not specialized),
    /// and a slice of `document.buffer` retains the array.
    public var unsafeRawStringContent: UnsafeRawBufferPointer {
        guard kind == .string else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let text = unsafeRawText
        return UnsafeRawBufferPointer(rebasing: text[(text.startIndex &+ 1)..<(text.endIndex &- 1)])
    }

    /// The value's JSON text (for strings, with the quotes and escapes), valid only while this
    /// value is alive, as `unsafeRawStringContent` is.
    public var unsafeRawText: UnsafeRawBufferPointer {
        document.withTextAndTape { all, base, tape in
            let e = tape[index]
            return UnsafeRawBufferPointer(rebasing: all[(base &+ Int(e.start))..<(base &+ Int(e.end))])
        }
    }

    /// The string value (allocates; not for the hot path). Nil when not a string.
    public var stringValue: String? {
        withUnescapedString { String(decoding: $0, as: UTF8.self) }
    }

    /// Compares the unescaped string content with `bytes` without allocating.
    /// False when the value is not a string.
    public func stringEquals(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard kind == .string else { return false }
        return Self.contentEquals(unsafeRawStringContent, escaped: stringHasEscapes, bytes)
    }

    public func stringEquals(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { stringEquals(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    private static func contentEquals(_ content: UnsafeRawBufferPointer, escaped: Bool, _ bytes: UnsafeRawBufferPointer) -> Bool {
        escaped
            ? JSONStringDecoding.decodedEquals(content, bytes)
            : JSONStringDecoding.bytesEqual(content, bytes)
    }

    // MARK: Numbers, booleans, null

    /// The number as an exact integer: only numbers written without fraction or exponent
    /// (`"1.0"` and `"1e2"` are nil, although integral) and within Int64. Nil otherwise.
    public var int64Value: Int64? {
        let e = entry
        guard e.aux == 1, kind == .number else { return nil }
        return withRawBytes { text -> Int64? in
            var k = 0
            let negative = text[0] == UInt8(ascii: "-")
            if negative { k = 1 }
            // Accumulated as a negative number so that Int64.min fits.
            var value: Int64 = 0
            while k < text.count {
                let digit = Int64(text[k] &- UInt8(ascii: "0"))
                let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = shifted.subtractingReportingOverflow(digit)
                if o1 || o2 { return nil }
                value = next
                k &+= 1
            }
            if negative { return value }
            return value == .min ? nil : -value
        }
    }

    /// The number as the nearest Double; nil when not a number or beyond Double's range.
    public var doubleValue: Double? {
        guard kind == .number else { return nil }
        // Up to 15 digits an integer is exact in a Double: no text conversion needed.
        if entry.aux == 1, byteRange.count <= 15, let integer = int64Value {
            return Double(integer)
        }
        // Swift's parser (strtod underneath) rounds correctly; numbers of up to 15 bytes fit in a
        // small String, so this allocates only for long numbers.
        let value = withRawBytes { Double(String(decoding: $0, as: UTF8.self)) }
        guard let value, value.isFinite else { return nil }
        return value
    }

    public var boolValue: Bool? {
        switch kind {
        case .true: true
        case .false: false
        default: nil
        }
    }

    public var isNull: Bool { kind == .null }

    // MARK: Containers

    /// Number of elements (array) or members (object); 0 for scalars.
    public var count: Int {
        switch kind {
        case .object, .array: Int(entry.aux)
        default: 0
        }
    }

    /// The array element at `index` (negative counts from the end), nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard kind == .array else { return nil }
        let n = Int(entry.aux)
        let position = index < 0 ? n &+ index : index
        guard position >= 0 && position < n else { return nil }
        return document.withTape { tape in
            var k = self.index &+ 1
            for _ in 0..<position { k = Int(tape[k].next) }
            return JSONValue(document: document, index: k)
        }
    }

    /// The object member named `key` (unescaped comparison; the last duplicate wins, like JavaScript).
    public subscript(key: String) -> JSONValue? {
        var key = key
        return key.withUTF8 { member(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// The object member whose unescaped name is `key` (the last duplicate wins); no allocation.
    public func member(utf8 key: UnsafeRawBufferPointer) -> JSONValue? {
        guard kind == .object else { return nil }
        let found = document.withTextAndTape { all, base, tape in
            Self.memberIndex(of: index, named: key, all, base, tape)
        }
        return found.map { JSONValue(document: document, index: $0) }
    }

    /// The tape index of the value of the member of object `object` named `key` (the last
    /// duplicate wins); nil when there is none.
    @inline(__always)
    private static func memberIndex(
        of object: Int, named key: UnsafeRawBufferPointer,
        _ all: UnsafeRawBufferPointer, _ base: Int, _ tape: UnsafeBufferPointer<JSONTapeEntry>
    ) -> Int? {
        var found: Int? = nil
        var k = object &+ 1
        let end = Int(tape[object].next)
        while k < end {
            let name = tape[k]
            let content = UnsafeRawBufferPointer(rebasing: all[(base &+ Int(name.start) &+ 1)..<(base &+ Int(name.end) &- 1)])
            if contentEquals(content, escaped: name.aux & JSONTapeEntry.escaped != 0, key) { found = k &+ 1 }
            k = Int(tape[k &+ 1].next)
        }
        return found
    }

    /// Array elements in order (empty for non-arrays).
    public var elements: [JSONValue] {
        guard kind == .array else { return [] }
        var result: [JSONValue] = []
        result.reserveCapacity(Int(entry.aux))
        forEachChild { result.append(JSONValue(document: document, index: $0)) }
        return result
    }

    /// Object members in order (empty for non-objects), duplicates included.
    public var members: [(key: JSONValue, value: JSONValue)] {
        guard kind == .object else { return [] }
        var result: [(key: JSONValue, value: JSONValue)] = []
        result.reserveCapacity(Int(entry.aux))
        forEachChild {
            result.append((JSONValue(document: document, index: $0), JSONValue(document: document, index: $0 &+ 1)))
        }
        return result
    }

    /// Calls `body` with each array element and its position, without building an array.
    public func forEachElement(_ body: (Int, JSONValue) -> Void) {
        guard kind == .array else { return }
        var position = 0
        forEachChild { index in
            body(position, JSONValue(document: document, index: index))
            position &+= 1
        }
    }

    /// Calls `body` with the tape index of each element (arrays) or member key (objects).
    private func forEachChild(_ body: (Int) -> Void) {
        let isObject = kind == .object
        document.withTape { tape in
            var k = index &+ 1
            let end = Int(tape[index].next)
            while k < end {
                body(k)
                k = Int(tape[isObject ? k &+ 1 : k].next)
            }
        }
    }

    /// Follows a path (`customer.tags[0]`, `event["title"]`) from this value.
    ///
    /// Walks tape indices inside one buffer access and builds a `JSONValue` only for the result:
    /// templates call this for every lookup, so intermediate cursors (and their retains) add up.
    public func value(at path: JSONPath) -> JSONValue? {
        let found: Int? = path.steps.withUnsafeBytes { steps in
            document.withTextAndTape { all, base, tape in
                var current = index
                var at = 0
                while at < steps.count {
                    let kind = tape[current].kind
                    if steps[at] == JSONPath.keyStep {
                        let length = Int(steps.loadUnaligned(fromByteOffset: at &+ 1, as: UInt32.self))
                        let name = UnsafeRawBufferPointer(rebasing: steps[(at &+ 5)..<(at &+ 5 &+ length)])
                        at &+= 5 &+ length
                        guard kind == .object, let hit = Self.memberIndex(of: current, named: name, all, base, tape) else { return nil }
                        current = hit
                    } else {
                        let position = steps.loadUnaligned(fromByteOffset: at &+ 1, as: Int.self)
                        at &+= 1 &+ MemoryLayout<Int>.size
                        guard kind == .array else { return nil }
                        let n = Int(tape[current].aux)
                        let target = position < 0 ? n &+ position : position
                        guard target >= 0 && target < n else { return nil }
                        var k = current &+ 1
                        for _ in 0..<target { k = Int(tape[k].next) }
                        current = k
                    }
                }
                return current
            }
        }
        return found.map { JSONValue(document: document, index: $0) }
    }
}

extension JSONValue {
    /// Calls `body` with a string's content bytes, unescaped; does nothing for other kinds.
    /// A non-generic shortcut for hot paths that only copy the bytes somewhere.
    public func withStringContent(_ body: (UnsafeRawBufferPointer) -> Void) {
        _ = withUnescapedString { (bytes) -> Void in body(bytes) }
    }

    /// The member named by a compile-time key (no String bridging on the hot path).
    public func member(_ key: StaticString) -> JSONValue? {
        member(utf8: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }
}
