// API CONTRACT (stub): the JSON reader helper replaces the bodies; the public surface below is
// what the rest of Pushline codes against. Keep it (additions are fine).

/// The kind of a JSON value.
public enum JSONKind: UInt8, Sendable {
    case object, array, string, number, `true`, `false`, null
}

/// Why a JSON text was refused: `offset` is the byte offset within the text.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// One validated JSON text (RFC 8259, UTF-8) and its structural index.
///
/// The text stays as bytes in `buffer` (shared, not copied, when several documents index one
/// batch buffer); `JSONValue`s are cursors into the index.
public struct JSONDocument: Sendable {
    public let buffer: [UInt8]
    public let range: Range<Int>

    /// Parses `buffer[range]`, which must hold exactly one JSON value (whitespace around it allowed).
    public init(buffer: [UInt8], range: Range<Int>, maxDepth: Int = 128) throws(JSONParseError) {
        fatalError("stub")
    }

    public init(bytes: [UInt8], maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(buffer: bytes, range: 0..<bytes.count, maxDepth: maxDepth)
    }

    public init(parsing text: String, maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    public var root: JSONValue { fatalError("stub") }
}

/// A cursor to one value of a `JSONDocument`. Cheap to copy; reads lazily from the bytes.
public struct JSONValue: Sendable {
    public var kind: JSONKind { fatalError("stub") }
    /// The value's JSON text in `document.buffer` (for strings, including the quotes).
    public var byteRange: Range<Int> { fatalError("stub") }
    public var document: JSONDocument { fatalError("stub") }

    // Strings
    /// Whether the string's content holds escapes (false: the raw content bytes are the value).
    public var stringHasEscapes: Bool { fatalError("stub") }
    /// Calls `body` with the unescaped UTF-8 content of a string (no allocation when it has no
    /// escapes; lone surrogate escapes become U+FFFD). Nil when the value is not a string.
    public func withUnescapedString<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? { fatalError("stub") }
    /// The string value (allocates; not for the hot path). Nil when not a string.
    public var stringValue: String? { fatalError("stub") }
    /// Compares the unescaped string content with `bytes` without allocating.
    public func stringEquals(_ bytes: UnsafeRawBufferPointer) -> Bool { fatalError("stub") }

    // Numbers, booleans, null
    /// The number as an exact integer (no fraction or exponent that leaves one, within Int64).
    public var int64Value: Int64? { fatalError("stub") }
    public var doubleValue: Double? { fatalError("stub") }
    public var boolValue: Bool? { fatalError("stub") }
    public var isNull: Bool { kind == .null }

    // Containers
    /// Number of elements (array) or members (object); 0 for scalars.
    public var count: Int { fatalError("stub") }
    /// The array element at `index` (negative counts from the end), nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? { fatalError("stub") }
    /// The object member named `key` (unescaped comparison; the last duplicate wins, like JavaScript).
    public subscript(key: String) -> JSONValue? { fatalError("stub") }
    public func member(utf8 key: UnsafeRawBufferPointer) -> JSONValue? { fatalError("stub") }
    /// Array elements in order (empty for non-arrays).
    public var elements: [JSONValue] { fatalError("stub") }
    /// Object members in order (empty for non-objects).
    public var members: [(key: JSONValue, value: JSONValue)] { fatalError("stub") }
    /// Follows a path (`customer.tags[0]`, `event["title"]`) from this value.
    public func value(at path: JSONPath) -> JSONValue? { fatalError("stub") }
}

/// A parsed lookup path: `customer.first_name`, `devices[1].token`, `event["title"]`, `a['b c'][-1]`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key([UInt8])
        case index(Int)
    }
    public var components: [Component]
    public init(components: [Component]) { self.components = components }
    public init(parsing text: String) throws(JSONPathError) { fatalError("stub") }
    public var description: String { fatalError("stub") }
}

public struct JSONPathError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
    public var description: String { "bad path at character \(offset + 1): \(message)" }
}
