/// Appends JSON into one growable byte buffer, with no intermediate `String` or `Data`.
///
/// Reuse one writer for many payloads: `removeAll()` keeps the capacity, so in steady state
/// encoding allocates nothing. Separators are tracked with one flag (a value just ended, so the
/// next key or element needs a comma), which is enough for any nesting because containers are
/// themselves values. Every string goes through `JSONEscaper` (rendered text it would leave as it
/// is may skip the scan: `RenderOutput.write(_:verbatim:)`), so the output is valid UTF-8 and valid
/// JSON whatever the input bytes hold.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public internal(set) var bytes: [UInt8]
    @usableFromInline
    internal var needsComma = false

    public init(reservingCapacity capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    /// Makes room for at least `capacity` bytes in total.
    public mutating func reserveCapacity(_ capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Empties the writer, keeping its capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// Cuts the output back to `count` bytes (used to drop a member that turned out empty).
    public mutating func truncate(to count: Int, needsComma: Bool) {
        bytes.removeSubrange(count...)
        self.needsComma = needsComma
    }

    /// Whether the next key or element will be preceded by a comma.
    public var separatorPending: Bool { needsComma }

    // MARK: Structure

    public mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":` for a key known at compile time (our own wire names: plain ASCII).
    public mutating func writeKey(_ key: StaticString) {
        assert(UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount).allSatisfy { (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C },
               "a static key must need no escaping")
        separator()
        bytes.append(UInt8(ascii: "\""))
        appendStatic(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes `"key":` for a key from configuration or input, escaping it. Disfavoured, so a
    /// literal key (`writeKey("line")`) takes the `StaticString` path above and is copied, not
    /// scanned for escapes on every line written: that scan was most of a result line's cost.
    @_disfavoredOverload
    public mutating func writeKey(_ key: String) {
        separator()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a key already serialized as `"key":` (see `JSONWriter.serializedKey`): the
    /// encoders pre-escape their member names once per campaign.
    public mutating func writeKey(serialized key: [UInt8]) {
        separator()
        bytes.append(contentsOf: key)
        needsComma = false
    }

    /// `"key":` escaped, for `writeKey(serialized:)`.
    public static func serializedKey(_ key: String) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: key.utf8.count + 3)
        writer.writeKey(key)
        return writer.bytes
    }

    public mutating func writeKey(utf8 key: UnsafeRawBufferPointer) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        JSONEscaper.appendEscaped(key, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Scalars

    public mutating func writeString(_ value: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        JSONEscaper.appendEscaped(UnsafeRawBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount), to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func writeString(_ value: String) {
        separator()
        appendQuoted(value)
        needsComma = true
    }

    public mutating func writeString(utf8 value: UnsafeRawBufferPointer) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        JSONEscaper.appendEscaped(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func writeString(utf8 value: [UInt8]) {
        value.withUnsafeBytes { writeString(utf8: $0) }
    }

    /// Writes a string value whose content is rendered in place (escaped as it is written).
    ///
    /// The buffer is moved into a `RenderOutput` and back, so nothing is copied. If `body` throws,
    /// the output is left as it was before the call. Returns where the escaped content landed in
    /// `bytes` (between the quotes), so a caller can reuse it.
    @discardableResult
    public mutating func writeString<E: Error>(
        renderingWithLimit limit: Int,
        _ body: (inout RenderOutput) throws(E) -> Void
    ) throws(E) -> Range<Int> {
        let mark = bytes.count
        let hadComma = needsComma
        separator()
        bytes.append(UInt8(ascii: "\""))
        var output = RenderOutput(mode: .jsonStringContent, limit: limit, adopting: takeBytes())
        do {
            try body(&output)
        } catch {
            bytes = output.takeStorage()
            truncate(to: mark, needsComma: hadComma)
            throw error
        }
        let written = output.escapedCount
        bytes = output.takeStorage()
        let content = (bytes.count - written)..<bytes.count
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
        return content
    }

    /// Writes a string whose content is already escaped JSON (a copy of an earlier render), in
    /// one reservation with its separator and quotes.
    public mutating func writeString(escapedContent content: UnsafeRawBufferPointer) {
        let comma = needsComma
        appendReserved(atMost: content.count &+ 3) { out in
            if comma { out.append(byte: UInt8(ascii: ",")) }
            out.append(byte: UInt8(ascii: "\""))
            out.append(content)
            out.append(byte: UInt8(ascii: "\""))
        }
        needsComma = true
    }

    /// The bytes written so far, read in place (a `bytes` copy would retain the array).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    public mutating func writeInt(_ value: Int) {
        separator()
        appendDecimal(value)
        needsComma = true
    }

    /// Writes a finite double in the shortest form that reads back exactly.
    /// Non-finite values have no JSON form; they are written as `null` (callers validate first).
    public mutating func writeDouble(_ value: Double) {
        separator()
        if !value.isFinite {
            appendStatic("null")
        } else if value == value.rounded(.towardZero), abs(value) < 1e15 {
            appendDecimal(Int(value))
        } else {
            var text = value.description
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        needsComma = true
    }

    public mutating func writeBool(_ value: Bool) {
        separator()
        appendStatic(value ? "true" : "false")
        needsComma = true
    }

    public mutating func writeNull() {
        separator()
        appendStatic("null")
        needsComma = true
    }

    /// Writes a value that is already valid JSON (for example a range of a validated input line).
    public mutating func writeRawValue(_ json: UnsafeRawBufferPointer) {
        separator()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    public mutating func writeRawValue(_ json: ArraySlice<UInt8>) {
        separator()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Appends bytes with no separator or escaping: for framing such as the newline after a line.
    public mutating func appendRaw(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    public mutating func appendRaw(_ raw: StaticString) {
        appendStatic(raw)
    }

    public mutating func appendRaw(byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends a run of ready JSON (a compiled payload's constant members, or a `"key":`) after
    /// the separator it needs, in one reservation: two appends paid the array's uniqueness
    /// check and growth test twice, several times per request. `separated`: a comma goes first
    /// when a value precedes (false for a run that is part of a value already begun).
    /// `endsValue`: the run completes a value (a comma is due before the next one); false for a
    /// key, whose value follows.
    public mutating func appendRawRun(_ raw: UnsafeRawBufferPointer, separated: Bool, endsValue: Bool) {
        let comma = separated && needsComma
        appendReserved(atMost: raw.count &+ 1) { out in
            if comma { out.append(byte: UInt8(ascii: ",")) }
            out.append(raw)
        }
        needsComma = endsValue
    }

    /// Opens a value the caller assembles from raw pieces (`appendRaw`); `endRawValue` closes it.
    /// The caller guarantees the pieces form one valid JSON value.
    public mutating func beginRawValue() {
        separator()
    }

    public mutating func endRawValue() {
        needsComma = true
    }

    /// Starts a new top-level value (after framing such as a newline between NDJSON lines).
    public mutating func resetSeparator() {
        needsComma = false
    }

    // MARK: Internals

    @inline(__always)
    internal mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    @inline(__always)
    internal mutating func appendStatic(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    internal mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { JSONEscaper.appendEscaped(UnsafeRawBufferPointer($0), to: &bytes) }
        bytes.append(UInt8(ascii: "\""))
    }

    internal mutating func takeBytes() -> [UInt8] {
        var out: [UInt8] = []
        swap(&out, &bytes)
        return out
    }

    internal mutating func appendDecimal(_ value: Int) {
        Self.withDecimalText(value) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with `value` in decimal (at most 20 bytes), built on the stack: no String.
    @inline(__always)
    static func withDecimalText(_ value: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes ≥ 20 digits + sign
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var position = buffer.count
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                position -= 1
                buffer[position] = UInt8(ascii: "-")
            }
            body(UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }
}
