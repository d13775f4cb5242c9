import Foundation
import PushlineCore
import Testing

/// Hostile string content: each case's bytes go through the writer and must come back, through a
/// strict reader and through Foundation, as the Unicode "maximal subpart" decoding of the input.
struct HostileString: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    var testDescription: String { name }

    init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }

    init(_ name: String, _ text: String) {
        self.init(name, Array(text.utf8))
    }

    /// What a decoder that replaces each maximal invalid subpart with U+FFFD yields.
    var expected: [UInt8] { Array(String(decoding: bytes, as: UTF8.self).utf8) }

    static let all: [HostileString] = [
        .init("quotes and backslashes", #"say "hi" \ to C:\path\ and \"escaped\" \u0041"#),
        .init("every control character", (0x00...0x1F).map { UInt8($0) } + Array("end".utf8)),
        .init("DEL and printable ASCII", (0x20...0x7F).map { UInt8($0) }),
        .init("line and paragraph separators", "a\u{2028}b\u{2029}c\u{2028}"),
        .init("emoji ZWJ sequences", "👩‍👩‍👧‍👦 🏳️‍🌈 🇵🇹 e\u{301} 👍🏽"),
        .init("non-BMP and BMP edges", "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFD}\u{FFFF}\u{10000}\u{10FFFF}"),
        .init("text that looks like escapes", #"\ud800 \n \u2028"#),
        .init("truncated 2-byte at the end", [0x61, 0xC3]),
        .init("truncated 3-byte", [0xE2, 0x82, 0x61]),
        .init("truncated 4-byte at the end", [0xF0, 0x9F, 0x98]),
        .init("overlong 2-byte", [0xC0, 0xAF, 0xC1, 0xBF]),
        .init("overlong 3-byte", [0xE0, 0x80, 0xAF]),
        .init("overlong 4-byte", [0xF0, 0x80, 0x80, 0xAF]),
        .init("UTF-8 encoded surrogates", [0xED, 0xA0, 0x80, 0xED, 0xBF, 0xBF, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]),
        .init("bytes from F5 up", [0xF5, 0x80, 0x80, 0x80, 0xF8, 0xFC, 0xFE, 0xFF]),
        .init("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        .init("lone continuation bytes", [0x80, 0xBF, 0x61, 0x9F]),
        .init("mixed", Array("ok ".utf8) + [0xE2, 0x28, 0xA1] + Array("\"\u{2029}\\".utf8) + [0xF0, 0x9F, 0x92, 0xA9, 0x00, 0xF0, 0x9F, 0x92] + Array("é".utf8)),
        .init("empty", []),
    ]
}

/// Parses a writer's output with the reader (strictly) and with JSONSerialization, and returns
/// the decoded string of the first element of the array it must hold.
private func decodeBothWays(_ json: [UInt8]) throws -> (reader: [UInt8], foundation: [UInt8]) {
    let document = try JSONDocument(bytes: json)
    let element = try #require(document.root[0])
    let reader = try #require(element.withUnescapedString { Array($0) })
    let array = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [Any])
    let string = try #require(array.first as? String)
    return (reader, Array(string.utf8))
}

@Suite struct JSONWriterStringTests {
    @Test(arguments: HostileString.all)
    func writeString(_ hostile: HostileString) throws {
        var writer = JSONWriter()
        writer.beginArray()
        writer.writeString(utf8: hostile.bytes)
        writer.endArray()
        let decoded = try decodeBothWays(writer.bytes)
        #expect(decoded.reader == hostile.expected)
        #expect(decoded.foundation == hostile.expected)
        #expect(writer.bytes.withUnsafeBytes { UTF8Validation.isValid($0) })
        // U+2028 and U+2029 never leave the writer raw: JavaScript string literals end there.
        #expect(!contains(writer.bytes, [0xE2, 0x80, 0xA8]) && !contains(writer.bytes, [0xE2, 0x80, 0xA9]))
    }

    @Test(arguments: HostileString.all)
    func renderOutputJSONStringContent(_ hostile: HostileString) throws {
        var output = RenderOutput(mode: .jsonStringContent)
        // Written in two pieces split mid-sequence: escaping works per write, so a sequence cut in
        // two becomes replacement characters on both sides, never invalid output.
        let half = hostile.bytes.count / 2
        try output.write(hostile.bytes[..<half])
        try output.write(hostile.bytes[half...])
        #expect(output.textCount == hostile.bytes.count)
        let json = Array("[\"".utf8) + output.bytes + Array("\"]".utf8)
        let decoded = try decodeBothWays(json)
        let expected = Array(String(decoding: hostile.bytes[..<half], as: UTF8.self).utf8)
            + Array(String(decoding: hostile.bytes[half...], as: UTF8.self).utf8)
        #expect(decoded.reader == expected)
        #expect(decoded.foundation == expected)
    }

    @Test(arguments: HostileString.all)
    func hostileKeys(_ hostile: HostileString) throws {
        var writer = JSONWriter()
        writer.beginObject()
        hostile.bytes.withUnsafeBytes { writer.writeKey(utf8: $0) }
        writer.writeInt(1)
        writer.endObject()
        let root = try JSONDocument(bytes: writer.bytes).root
        #expect(root.members.first?.key.withUnescapedString { Array($0) } == hostile.expected)
        #expect(hostile.expected.withUnsafeBytes { root.member(utf8: $0) }?.int64Value == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
        #expect(object.keys.map { Array($0.utf8) } == [hostile.expected])
    }

    @Test func swiftStringsAndControlEscapes() throws {
        var writer = JSONWriter()
        writer.writeString("a\"b\\c\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{2028}")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""a\"b\\c\n\r\t\b\f\u0000\u001f\u2028""#)
    }

    /// Lone surrogate escapes in input text decode to U+FFFD, which then writes out as valid UTF-8.
    @Test func loneSurrogatesFromTheReaderWriteBackValid() throws {
        let input = try JSONDocument(parsing: #""\ud800x\udc00\ud83d\ude00""#).root
        var writer = JSONWriter()
        writer.beginArray()
        input.withUnescapedString { writer.writeString(utf8: $0) }
        writer.endArray()
        let decoded = try decodeBothWays(writer.bytes)
        let expected = Array("\u{FFFD}x\u{FFFD}😀".utf8)
        #expect(decoded.reader == expected)
        #expect(decoded.foundation == expected)
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.indices.contains { haystack[$0...].starts(with: needle) }
    }
}

@Suite struct JSONWriterStructureTests {
    @Test func nestedContainersAndCommas() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("a")
        writer.beginArray()
        writer.writeInt(1)
        writer.writeInt(-2)
        writer.beginObject()
        writer.writeKey("b")
        writer.writeNull()
        writer.writeKey("c")
        writer.writeBool(true)
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.endArray()
        writer.writeKey("d")
        writer.beginObject()
        writer.endObject()
        writer.writeKey(String("é\"k"))
        writer.writeBool(false)
        writer.writeKey("raw")
        writer.writeRawValue(Array(#"{"x":[1]}"#.utf8)[...])
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self)
            == #"{"a":[1,-2,{"b":null,"c":true},[]],"d":{},"é\"k":false,"raw":{"x":[1]}}"#)
    }

    @Test func integers() throws {
        var writer = JSONWriter()
        writer.beginArray()
        for value in [Int.min, Int.max, 0, -1, 10, 1_000_000] { writer.writeInt(value) }
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self)
            == "[-9223372036854775808,9223372036854775807,0,-1,10,1000000]")
        let root = try JSONDocument(bytes: writer.bytes).root
        #expect(root.elements.compactMap(\.int64Value) == [.min, .max, 0, -1, 10, 1_000_000])
    }

    @Test(arguments: [
        (0.1, "0.1"), (-2.5, "-2.5"), (123.0, "123"), (-0.0, "0"), (1e15, "1000000000000000.0"), (1e16, "1e+16"),
        (.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (.nan, "null"), (.infinity, "null"),
        (123456789.125, "123456789.125"), (-1e-7, "-1e-07"),
    ] as [(Double, String)])
    func doubles(value: Double, text: String) throws {
        var writer = JSONWriter()
        writer.writeDouble(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == text)
        let root = try JSONDocument(bytes: writer.bytes).root
        if value.isFinite {
            #expect(root.doubleValue == value)
        } else {
            #expect(root.isNull)
        }
    }

    @Test func renderingInPlace() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("body")
        try writer.writeString(renderingWithLimit: 64) { output throws(RenderOutput.LimitExceeded) in
            try output.write("Hi ")
            try output.write([0x4A, 0x6F, 0x73, 0xC3, 0xA9])
            try output.write("\n\"")
        }
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"body":"Hi José\n\""}"#)
    }

    @Test func renderingErrorRestoresTheBuffer() throws {
        var writer = JSONWriter()
        writer.beginArray()
        writer.writeInt(1)
        let overflow = #expect(throws: RenderOutput.LimitExceeded.self) {
            try writer.writeString(renderingWithLimit: 5) { output throws(RenderOutput.LimitExceeded) in
                try output.write("abc")
                try output.write("def")   // 6 bytes > 5
            }
        }
        #expect(overflow?.limit == 5)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[1")
        writer.writeInt(2)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[1,2]")

        // Same for the first element of a container: no comma is left pending.
        var first = JSONWriter()
        first.beginArray()
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try first.writeString(renderingWithLimit: 100) { output throws(Refused) in
                try? output.write("partial")
                throw Refused()
            }
        }
        first.writeInt(7)
        first.endArray()
        #expect(String(decoding: first.bytes, as: UTF8.self) == "[7]")
    }

    @Test func reuseKeepsNothingOfThePreviousPayload() {
        var writer = JSONWriter(reservingCapacity: 16)
        writer.writeInt(1)
        writer.removeAll()
        writer.writeInt(2)
        #expect(writer.bytes == Array("2".utf8))
    }
}

@Suite("Escaped length")
struct EscapedLengthTests {
    /// `escapedLength` predicts `appendEscaped` exactly, for every byte pattern the escaper treats
    /// specially (the truncate policy relies on it).
    @Test func matchesTheEscaper() {
        var rng = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [
            [0x22], [0x5C], [0x0A], [0x0D], [0x09], [0x08], [0x0C], [0x00], [0x1F], [0x7F], [0x41],
            Array("é😀".utf8), [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80, 0xA7],
            [0xFF], [0xC3], [0xE0, 0xA0], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98],
        ]
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) { bytes += pieces.randomElement(using: &rng)! }
            var out: [UInt8] = []
            bytes.withUnsafeBytes { JSONEscaper.appendEscaped($0, to: &out) }
            let predicted = bytes.withUnsafeBytes { JSONEscaper.escapedLength($0) }
            #expect(predicted == out.count, "\(bytes)")
        }
    }
}

@Suite("Escaping against an independent oracle")
struct EscaperOracleTests {
    /// The escaping rules written out over Swift's own UTF-8 decoding (which replaces each maximal
    /// invalid subpart with one U+FFFD, as the escaper must): short escapes, `\u00XX` for other
    /// controls, `\u2028` and `\u2029`, every other character as its UTF-8.
    static func oracle(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar.value {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case 0x00..<0x20, 0x2028, 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: out += Array(String(scalar).utf8)
            }
        }
        return out
    }

    /// Text of every shape the fast path meets: long ASCII runs (the eight-byte scan), names
    /// with accents and emoji (valid sequences kept in the run), sequences cut at the end, and
    /// every byte the escaper treats specially, at every alignment.
    @Test func appendEscapedMatchesTheOracle() {
        var rng = SplitMix64(seed: 20_261_128)
        let pieces: [[UInt8]] = [
            Array("Hi ".utf8), Array("François".utf8), Array("São Paulo".utf8), Array("Concert tickets 🎫".utf8),
            Array("abcdefghijklmnopq".utf8), Array("東京".utf8), [0x22], [0x5C], [0x0A], [0x1F], [0x00], [0x7F],
            [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80, 0xA7], [0xFF], [0xC3], [0xE0, 0xA0],
            [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98], [0x80], [0xC0, 0xAF],
        ]
        var checked = 0
        for _ in 0..<3000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 14) { bytes += pieces[Int(rng.next() % UInt64(pieces.count))] }
            var out: [UInt8] = []
            bytes.withUnsafeBytes { JSONEscaper.appendEscaped($0, to: &out) }
            #expect(out == Self.oracle(bytes), "\(bytes)")
            checked += bytes.isEmpty ? 0 : 1
        }
        #expect(checked > 2000)
    }
}
