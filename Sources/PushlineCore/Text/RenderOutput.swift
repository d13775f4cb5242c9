/// Where rendered template text lands.
///
/// A template never builds a `String`: it appends byte runs here. In `.jsonStringContent` mode the
/// bytes are JSON-escaped as they are written (the caller has opened the string and will close it),
/// so a rendered value goes straight into the request body. In `.raw` mode the bytes are kept as
/// they are, for values that are post-processed (typed fields, truncation, header values).
///
/// The byte limit bounds what one render may produce (counted before escaping), so a runaway loop
/// or a huge record value cannot blow up a payload buffer.
public struct RenderOutput: Sendable {
    public enum Mode: Sendable, Equatable {
        case jsonStringContent
        case raw
    }

    /// Thrown when a render would exceed `limit` bytes of text.
    public struct LimitExceeded: Error, Sendable, Equatable {
        public let limit: Int
    }

    public let mode: Mode
    public let limit: Int
    /// Bytes of text written so far (before escaping).
    public private(set) var textCount: Int = 0
    internal var storage: [UInt8]
    /// Bytes the storage already held when it was adopted (not part of this render).
    internal let adoptedCount: Int

    public init(mode: Mode, limit: Int = 8192, reservingCapacity capacity: Int = 256) {
        self.mode = mode
        self.limit = limit
        self.storage = []
        self.storage.reserveCapacity(capacity)
        self.adoptedCount = 0
    }

    /// Wraps an existing buffer (moved in, not copied); `JSONWriter` uses this to render in place.
    internal init(mode: Mode, limit: Int, adopting storage: consuming [UInt8]) {
        self.mode = mode
        self.limit = limit
        self.storage = storage
        self.adoptedCount = self.storage.count
    }

    /// Bytes this render appended (after escaping, in `.jsonStringContent` mode).
    internal var escapedCount: Int { storage.count - adoptedCount }

    internal mutating func takeStorage() -> [UInt8] {
        var out: [UInt8] = []
        swap(&out, &storage)
        return out
    }

    /// The bytes written, in raw mode the rendered text itself.
    public var bytes: [UInt8] { storage }

    /// Empties the output, keeping its capacity, so one output serves many renders.
    public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        textCount = 0
    }

    /// Appends text bytes (expected to be UTF-8; invalid sequences become U+FFFD when escaping).
    ///
    /// `verbatim`: the caller knows JSON escaping leaves the text as it is
    /// (`JSONEscaper.leavesUnchanged`): a record string the parser vouched for
    /// (`JSONValue.stringIsVerbatimJSON`), template text checked at compile time, or a filter's
    /// output built from such text. It is counted and limited the same, and copied without the
    /// escaping scan. Debug builds check the claim.
    public mutating func write(_ text: UnsafeRawBufferPointer, verbatim: Bool = false) throws(LimitExceeded) {
        try reserveText(text.count)
        append(text, verbatim: verbatim)
    }

    public mutating func write(_ text: StaticString) throws(LimitExceeded) {
        try write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func write(_ text: [UInt8]) throws(LimitExceeded) {
        try reserveText(text.count)
        text.withUnsafeBytes { append($0) }
    }

    public mutating func write(_ text: ArraySlice<UInt8>, verbatim: Bool = false) throws(LimitExceeded) {
        try reserveText(text.count)
        text.withUnsafeBytes { append($0, verbatim: verbatim) }
    }

    public mutating func write(_ text: String) throws(LimitExceeded) {
        var text = text
        try reserveText(text.utf8.count)
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    public mutating func write(byte: UInt8) throws(LimitExceeded) {
        try reserveText(1)
        withUnsafeBytes(of: byte) { append($0) }
    }

    private mutating func append(_ text: UnsafeRawBufferPointer, verbatim: Bool = false) {
        // Checked in both modes: the claim is about the text, whichever output it reaches.
        assert(!verbatim || JSONEscaper.leavesUnchanged(text), "text written verbatim that JSON escaping changes")
        if mode == .raw || verbatim {
            storage.append(contentsOf: text)
        } else {
            JSONEscaper.appendEscaped(text, to: &storage)
        }
    }

    internal mutating func reserveText(_ count: Int) throws(LimitExceeded) {
        let next = textCount &+ count
        guard next <= limit else { throw LimitExceeded(limit: limit) }
        textCount = next
    }
}
