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
    /// The text and the tape behind one reference: a `JSONValue` (this and an index) is copied
    /// with one retain. Two arrays here made every cursor copy two retains, and cursors are
    /// copied on every lookup (measured: retain/release was about a tenth of a dry run).
    /// Unsafe to the checker only: see `JSONDocumentStorage`.
    nonisolated(unsafe) let storage: JSONDocumentStorage

    /// The bytes the document is a range of (shared, not copied).
    public var buffer: [UInt8] { storage.header.buffer }
    public var range: Range<Int> { storage.header.range }
    /// Whether some string (value or key) holds a lone surrogate escape (`"\ud800"`): then raw
    /// copies of the text are not valid UTF-8 once decoded, and `JSONWriter.writeValue` re-escapes.
    public var hasLoneSurrogates: Bool { storage.header.hasLoneSurrogates }

    /// Parses `buffer[range]`, which must hold exactly one JSON value (whitespace around it allowed).
    ///
    /// Containers nested deeper than `maxDepth` are refused. Error offsets are relative to
    /// `range.lowerBound`.
    public init(buffer: [UInt8], range: Range<Int>, maxDepth: Int = 128) throws(JSONParseError) {
        var fresh = JSONTapeStorage()
        try self.init(buffer: buffer, range: range, maxDepth: maxDepth, into: &fresh, exactSize: true)
    }

    /// Parses `buffer[range]` into `storage`'s memory: once the worker's previous document is
    /// gone (no value of it kept), indexing the next line allocates nothing.
    public init(buffer: [UInt8], range: Range<Int>, maxDepth: Int = 128, reusing storage: inout JSONTapeStorage) throws(JSONParseError) {
        try self.init(buffer: buffer, range: range, maxDepth: maxDepth, into: &storage, exactSize: false)
    }

    private init(buffer: [UInt8], range: Range<Int>, maxDepth: Int, into storage: inout JSONTapeStorage, exactSize: Bool) throws(JSONParseError) {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range outside the buffer")
        let indexed = buffer.withUnsafeBytes { all in
            Result { () throws(JSONParseError) in
                try JSONParser.index(UnsafeRawBufferPointer(rebasing: all[range]), maxDepth: maxDepth) { capacity in
                    storage.prepare(capacity: capacity, exactSize: exactSize)
                }
            }
        }
        let lone = try indexed.get()
        let held = storage.document!
        held.withUnsafeMutablePointers { header, tape in
            header.pointee.hold(buffer)
            header.pointee.range = range
            header.pointee.count = Int(tape[0].next)
            header.pointee.hasLoneSurrogates = lone
        }
        self.storage = held
    }

    public init(bytes: [UInt8], maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(buffer: bytes, range: 0..<bytes.count, maxDepth: maxDepth)
    }

    public init(parsing text: String, maxDepth: Int = 128) throws(JSONParseError) {
        try self.init(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    public var root: JSONValue { JSONValue(document: self, index: 0) }

    /// Number of values in the document (tape entries), keys included.
    public var valueCount: Int { storage.header.count }

    /// The tape, read in place.
    @inline(__always)
    func withTape<R>(_ body: (UnsafeBufferPointer<JSONTapeEntry>) -> R) -> R {
        storage.withUnsafeMutablePointers { header, tape in
            body(UnsafeBufferPointer(start: tape, count: header.pointee.count))
        }
    }

    /// The buffer's bytes, where the document starts in it, and the tape.
    @inline(__always)
    func withTextAndTape<R>(_ body: (UnsafeRawBufferPointer, Int, UnsafeBufferPointer<JSONTapeEntry>) -> R) -> R {
        storage.withUnsafeMutablePointers { header, tape in
            body(header.pointee.text, header.pointee.range.lowerBound, UnsafeBufferPointer(start: tape, count: header.pointee.count))
        }
    }

    /// One tape entry.
    @inline(__always)
    func entry(_ index: Int) -> JSONTapeEntry {
        withTape { $0[index] }
    }
}

/// What a document's storage holds besides its tape entries.
struct JSONDocumentHeader {
    /// Holds the text: `text` points at its elements.
    private(set) var buffer: [UInt8]
    /// `buffer`'s bytes, read without touching `buffer`. Reading them through
    /// `buffer.withUnsafeBytes` retained and released the array on every lookup (the array is
    /// read through the header's pointer, which the compiler cannot prove unchanged meanwhile):
    /// one pair per path lookup, member lookup and string read of the hot path. The pointer
    /// stays valid because an array's elements move only when it is written to, and this one
    /// is never written: it is replaced whole, with `text`, by `hold(_:)`, and only while no
    /// document uses the storage.
    private(set) var text: UnsafeRawBufferPointer
    var range: Range<Int>
    /// Entries of the document (`tape[0].next`); entries past it are stale or unwritten.
    var count: Int
    /// Entries the storage has room for.
    let capacity: Int
    var hasLoneSurrogates: Bool

    init(capacity: Int) {
        buffer = []
        text = UnsafeRawBufferPointer(start: nil, count: 0)
        range = 0..<0
        count = 0
        self.capacity = capacity
        hasLoneSurrogates = false
    }

    /// Holds `buffer` as the document's text.
    mutating func hold(_ buffer: [UInt8]) {
        self.buffer = buffer
        text = self.buffer.withUnsafeBytes { $0 }
    }
}

/// A document's text reference and tape in one allocation.
///
/// Shared across threads as safely as an array's storage: it is mutated only by
/// `JSONTapeStorage.prepare` and the document initializer while one storage value holds the only
/// reference (`isKnownUniquelyReferenced`); once a `JSONDocument` holds it, nothing writes to it
/// until that document is gone. (`ManagedBuffer` cannot be declared `Sendable`, so the
/// properties holding it are `nonisolated(unsafe)`.)
final class JSONDocumentStorage: ManagedBuffer<JSONDocumentHeader, JSONTapeEntry> {
    static func make(capacity: Int) -> JSONDocumentStorage {
        let made = create(minimumCapacity: capacity) { _ in
            JSONDocumentHeader(capacity: capacity)
        }
        return unsafeDowncast(made, to: JSONDocumentStorage.self)
    }
}

/// Tape memory one worker reuses from document to document (`JSONDocument.init(…reusing:)`).
public struct JSONTapeStorage: Sendable {
    nonisolated(unsafe) var document: JSONDocumentStorage?

    public init() {}

    /// Entries the memory holds (for tests of its bound).
    public var capacity: Int { document?.header.capacity ?? 0 }

    /// Tape memory for `capacity` entries: the held storage when no document still uses it and
    /// it fits, else a new one. Reused sizes grow to a power of two (a few allocations over a
    /// run) and give back what one long line took once a short one follows, so a worker keeps
    /// at most 1 MiB of tape.
    mutating func prepare(capacity: Int, exactSize: Bool) -> UnsafeMutablePointer<JSONTapeEntry> {
        let largest = 1 << 16
        if isKnownUniquelyReferenced(&document), let held = document {
            let room = held.header.capacity
            if room >= capacity && (room <= largest || capacity > largest) {
                return held.withUnsafeMutablePointerToElements { $0 }
            }
        }
        let size = exactSize || capacity > largest
            ? capacity
            : Swift.max(256, 1 << (Int.bitWidth - (capacity - 1).leadingZeroBitCount))
        let made = JSONDocumentStorage.make(capacity: size)
        document = made
        return made.withUnsafeMutablePointerToElements { $0 }
    }
}

/// One value in a document's structural index (16 bytes).
///
/// The kind is kept in the top three bits of the last word, so asking a value's kind reads the
/// entry alone, not the text (it was a load through the buffer for every `kind`, about 2 % of a
/// dry run: routing asks it of every record, device, token and lookup). Offsets are 32-bit and
/// relative to the document's range; a document is at most 1 GiB (`JSONParser.maxTextBytes`),
/// so a container's count (at most half its bytes) fits the 29 bits left to `aux`.
internal struct JSONTapeEntry: Sendable {
    /// Offset of the value's first byte.
    var start: UInt32
    /// Offset just past the value's last byte.
    var end: UInt32
    /// Tape index just past the value's last descendant (own index + 1 for scalars), so skipping
    /// a subtree is one load.
    var next: UInt32
    /// `JSONKind.rawValue` in the top 3 bits, `aux` below. The parser counts a container's
    /// elements by adding 1 to the whole word, which never carries into the kind.
    var kindAndAux: UInt32

    init(start: UInt32, end: UInt32, next: UInt32, kind: JSONKind, aux: UInt32) {
        self.start = start
        self.end = end
        self.next = next
        self.kindAndAux = UInt32(kind.rawValue) << Self.kindShift | aux
    }

    static let kindShift: UInt32 = 29
    static let auxMask: UInt32 = (1 << kindShift) - 1

    var kind: JSONKind {
        // Every entry is written with a valid kind (the initializer above), so the bits are one.
        unsafeBitCast(UInt8(truncatingIfNeeded: kindAndAux >> Self.kindShift), to: JSONKind.self)
    }

    /// Containers: number of elements or members. Strings: `escaped` when the content holds
    /// escapes, plus `loneSurrogate` when one of them is a lone surrogate; `lineSeparator` when
    /// it holds U+2028 or U+2029 as they are. A string with none of these is content that
    /// `JSONEscaper` copies unchanged (the parser refused everything else it escapes).
    /// Numbers: 1 when written as an integer (no fraction, no exponent).
    var aux: UInt32 { kindAndAux & Self.auxMask }

    static let escaped: UInt32 = 1
    static let loneSurrogate: UInt32 = 2
    static let lineSeparator: UInt32 = 4
}
