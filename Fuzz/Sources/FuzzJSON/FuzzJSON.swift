import FuzzSupport
import PushlineCore

/// The JSON reader (`JSONDocument`) against an independent validator, then every value read back
/// through the lookup API and rewritten with `JSONWriter`, whose output must be strict JSON.
///
/// Input: any bytes, taken as one JSON text (an audience line is read the same way).
/// One tape memory reused from input to input, as an encode worker reuses it from line to line:
/// nothing an earlier input left in it may show in a later document. (libFuzzer calls the target
/// from one thread.)
nonisolated(unsafe) private var reusedTape = JSONTapeStorage()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = KnownFindings.jsonText(FuzzInput.bytes(data, size))
    let maxDepth = 24
    let verdict = StrictJSON.validate(bytes, surrogates: .anyEscape, maxDepth: maxDepth)
    let document: JSONDocument
    do {
        document = try JSONDocument(bytes: bytes, maxDepth: maxDepth)
    } catch {
        do {
            _ = try JSONDocument(buffer: bytes, range: 0..<bytes.count, maxDepth: maxDepth, reusing: &reusedTape)
            finding("a reused tape accepts what a fresh one refuses (\(error))")
        } catch let reusedError {
            check(reusedError == error, "a reused tape refuses with \(reusedError), a fresh one with \(error)")
        }
        check(verdict != nil, "JSONDocument refuses valid JSON (\(error))")
        check(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside a text of \(bytes.count) bytes")
        return 0
    }
    if let verdict { finding("JSONDocument accepts invalid JSON; the oracle says \(verdict)") }

    // The batch reader indexes a line inside a larger buffer: same text, same index.
    let padded = Array("[1,\"x\"]\n".utf8) + bytes + Array("\n{}".utf8)
    do {
        let inner = try JSONDocument(buffer: padded, range: 8..<(8 + bytes.count), maxDepth: maxDepth)
        check(inner.valueCount == document.valueCount, "value count differs inside a larger buffer")
    } catch {
        finding("the same text is refused inside a larger buffer: \(error)")
    }

    // Read every value back and rewrite it; the writer must produce strict JSON (lone surrogate
    // escapes become U+FFFD, invalid UTF-8 cannot occur after validation).
    var writer = JSONWriter(reservingCapacity: bytes.count + 16)
    var numbers = JSONWriter(reservingCapacity: 64)
    numbers.beginArray()
    rewrite(document.root, into: &writer, numbers: &numbers, depth: 0)
    numbers.endArray()
    if let failure = StrictJSON.validate(writer.bytes) {
        finding("JSONWriter's rewrite is not valid JSON (\(failure)): \(escaped(writer.bytes))")
    }
    if let failure = StrictJSON.validate(numbers.bytes) {
        finding("writeInt/writeDouble produced invalid JSON (\(failure)): \(escaped(numbers.bytes))")
    }
    do {
        let reused = try JSONDocument(buffer: bytes, range: 0..<bytes.count, maxDepth: maxDepth, reusing: &reusedTape)
        var reusedWriter = JSONWriter(reservingCapacity: bytes.count + 16)
        var reusedNumbers = JSONWriter(reservingCapacity: 64)
        rewrite(reused.root, into: &reusedWriter, numbers: &reusedNumbers, depth: 0)
        check(reused.valueCount == document.valueCount && reusedWriter.bytes == writer.bytes, "a reused tape reads the text differently")
    } catch {
        finding("a reused tape refuses what a fresh one accepts: \(error)")
    }
    do {
        let again = try JSONDocument(bytes: writer.bytes, maxDepth: maxDepth)
        check(again.valueCount == document.valueCount, "the rewrite has \(again.valueCount) values, the input \(document.valueCount)")
    } catch {
        finding("the reader refuses its own rewrite: \(error)")
    }

    // The text as a path (templates and configuration name record fields this way).
    if bytes.count < 256, let path = try? JSONPath(parsing: String(decoding: bytes, as: UTF8.self)) {
        _ = document.root.value(at: path)
        _ = path.description
    }
    return 0
}

private func rewrite(_ value: JSONValue, into writer: inout JSONWriter, numbers: inout JSONWriter, depth: Int) {
    check(depth <= 64, "rewrite deeper than the reader's limit")
    switch value.kind {
    case .object:
        writer.beginObject()
        var n = 0
        for member in value.members {
            check(member.key.kind == .string, "an object key is not a string")
            member.key.withUnescapedString { key in writer.writeKey(utf8: key) }
            if let name = member.key.stringValue {
                check(value[name] != nil, "member '\(name)' listed but not found by lookup")
            }
            rewrite(member.value, into: &writer, numbers: &numbers, depth: depth + 1)
            n += 1
        }
        check(n == value.count, "object lists \(n) members, count says \(value.count)")
        writer.endObject()
    case .array:
        writer.beginArray()
        let elements = value.elements
        check(elements.count == value.count, "array lists \(elements.count) elements, count says \(value.count)")
        for (k, element) in elements.enumerated() {
            check(value[k]?.byteRange == element.byteRange, "element \(k) differs by subscript")
            rewrite(element, into: &writer, numbers: &numbers, depth: depth + 1)
        }
        writer.endArray()
    case .string:
        let written: Void? = value.withUnescapedString { writer.writeString(utf8: $0) }
        check(written != nil, "a string value has no string content")
        _ = value.stringValue
    case .number:
        value.withRawBytes { writer.writeRawValue($0) }
        if let int = value.int64Value { numbers.writeInt(Int(int)) }
        if let double = value.doubleValue { numbers.writeDouble(double) }
    case .true, .false:
        check(value.boolValue != nil, "a literal has no bool value")
        writer.writeBool(value.boolValue ?? false)
    case .null:
        check(value.isNull, "null is not null")
        writer.writeNull()
    }
}
