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
///
/// Construction is one validating pass that builds a flat tape (`JSONTapeEntry`, one per value,
/// in document order); lookups then walk the tape, skipping whole subtrees in one step.
public struct JSONDocument: Sendable {
    public let buffer: [UInt8]
    public let range: Range<Int>
    /// The structural index, one entry per value in document order; entry 0 is the root, and its
    /// `next` is the count (a reused tape may hold stale entries after that).
    internal let tape: [JSONTapeEntry]
    /// Whether some string (value or key) holds a lone surrogate escape (`"\ud800"`): then raw
    /// copies of the text are not valid UTF-8 once decoded, and `JSONWriter.writeValue` re-escapes.
    public let hasLoneSurrogates: Bool

    /// Parses `buffer[range]`, which must hold exactly one JSON value (whitespace around it allowed).
    ///
    /// Containers nested deeper than `maxDepth` are refused. Error offsets are relative to
    /// `range.lowerBound`.
    public init(buffer: [UInt8], range: Range<Int>, maxDepth: Int = 128) throws(JSONParseError) {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range outside the buffer")
        self.buffer = buffer
        self.range = range
        let indexed = buffer.withUnsafeBytes { all in
            Result { () throws(JSONParseError) in
                try JSONParser.index(UnsafeRawBufferPointer(rebasing: all[range]), maxDepth: maxDepth)
            }
        }
        (self.tape, self.hasLoneSurrogates) = try indexed.get()
    }

    /// Parses `buffer[range]` into `storage`'s memory: once the worker's previous document is
    /// gone (no value of it kept), indexing the next line allocates nothing.
    public init(buffer: [UInt8], range: Range<Int>, maxDepth: Int = 128, reusing storage: inout JSONTapeStorage) throws(JSONParseError) {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range outside the buffer")
        self.buffer = buffer
        self.range = range
        let lone = buffer.withUnsafeBytes { all in
            Result { () throws(JSONParseError) in
                try JSONParser.index(UnsafeRawBufferPointer(rebasing: all[range]), maxDepth: maxDepth, into: &storage.entries)
            }
        }
        self.hasLoneSurrogates = try lone.get()
        self.tape = storage.entries
    }

    public init(bytes: [UInt8], maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(buffer: bytes, range: 0..<bytes.count, maxDepth: maxDepth)
    }

    public init(parsing text: String, maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    public var root: JSONValue { JSONValue(document: self, index: 0) }

    /// Number of values in the document (tape entries), keys included.
    public var valueCount: Int { Int(tape[0].next) }
}

/// Tape memory one worker reuses from document to document (`JSONDocument.init(…reusing:)`).
public struct JSONTapeStorage: Sendable {
    var entries: [JSONTapeEntry] = []
    public init() {}
    /// Entries the memory holds (for tests of its bound).
    public var capacity: Int { entries.count }
}

/// One value in a document's structural index (16 bytes).
///
/// The kind is not stored: the value's first byte (`{`, `[`, `"`, `t`, `f`, `n`, or a number's
/// first character) already says it. Offsets are 32-bit and relative to the document's range, so
/// a document may be at most 4 GiB while its shared buffer may be larger.
internal struct JSONTapeEntry: Sendable {
    /// Offset of the value's first byte.
    var start: UInt32
    /// Offset just past the value's last byte.
    var end: UInt32
    /// Tape index just past the value's last descendant (own index + 1 for scalars), so skipping
    /// a subtree is one load.
    var next: UInt32
    /// Containers: number of elements or members. Strings: `escaped` when the content holds
    /// escapes, plus `loneSurrogate` when one of them is a lone surrogate.
    /// Numbers: 1 when written as an integer (no fraction, no exponent).
    var aux: UInt32

    static let escaped: UInt32 = 1
    static let loneSurrogate: UInt32 = 2
}
