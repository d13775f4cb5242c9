import Foundation
import PushlineCore
import PushlineTestSupport
import Testing

/// `JSONValue.stringIsVerbatimJSON` and `JSONEscaper.leavesUnchanged` let text skip the escaping
/// pass. Both claims are checked against the escaper itself: a string the parser marks verbatim
/// must come out of `appendEscaped` byte for byte as it went in, and every string that does
/// must be marked (the flag is exact, not merely safe).
@Suite struct VerbatimStringTests {
    private static func escaped(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        bytes.withUnsafeBytes { JSONEscaper.appendEscaped($0, to: &out) }
        return out
    }

    private static func content(_ value: JSONValue) -> [UInt8] {
        let range = value.byteRange
        return Array(value.document.buffer[(range.lowerBound + 1)..<(range.upperBound - 1)])
    }

    /// Every string value and key of `value`, depth first.
    private static func strings(_ value: JSONValue, into found: inout [JSONValue]) {
        switch value.kind {
        case .string: found.append(value)
        case .array: for element in value.elements { strings(element, into: &found) }
        case .object:
            for (key, member) in value.members {
                found.append(key)
                strings(member, into: &found)
            }
        default: break
        }
    }

    /// Checks the flag of every string in `json` against the escaper; returns how many were verbatim.
    @discardableResult
    private static func checkFlags(_ json: [UInt8], _ label: String) throws -> Int {
        let document = try JSONDocument(bytes: json)
        var found: [JSONValue] = []
        strings(document.root, into: &found)
        var verbatim = 0
        for value in found {
            let raw = content(value)
            let unchanged = !value.stringHasEscapes && escaped(raw) == raw
            #expect(value.stringIsVerbatimJSON == unchanged, "\(label): \(String(decoding: raw, as: UTF8.self).debugDescription)")
            if value.stringIsVerbatimJSON { verbatim += 1 }
        }
        return verbatim
    }

    @Test func theParserMarksExactlyTheStringsEscapingLeavesAlone() throws {
        let samples = [
            #"{"plain":"François","emoji":"🎫 ok","cjk":"東京","del":"a\#u{7F}b","c1":"x\#u{85}y"}"#,
            #"{"line":"a\#u{2028}b","paragraph":"\#u{2029}","near":"\#u{2027}\#u{202A}","both":"x\#u{2028}\#u{2029}"}"#,
            #"{"quote":"say \"hi\"","slash":"a\/b","tab":"a\tb","u":"\u00e9","lone":"\ud800","ls":"\u2028"}"#,
            #"{"k\#u{2028}ey":1,"plain key":["", "a", "\#u{2028}", "é\u0041"]}"#,
        ]
        var verbatim = 0
        for json in samples { verbatim += try Self.checkFlags(Array(json.utf8), json) }
        // plain, emoji, cjk, del, c1, near, plain key, "", "a", and the keys with no escapes.
        #expect(verbatim >= 9)
        let document = try JSONDocument(parsing: samples[1])
        let line = try #require(document.root.member("line"))
        #expect(!line.stringIsVerbatimJSON && !line.stringHasEscapes, "U+2028 as it is: no escape, but the writer escapes it")
        #expect(line.withUnescapedString { Array($0) } == Array("a\u{2028}b".utf8), "its value is still the raw content")
    }

    /// Random strings over an alphabet of the bytes and sequences that matter (quotes, escapes,
    /// U+2028/2029 as they are and escaped, multi-byte characters), each parsed and checked.
    @Test func randomStringsAgreeWithTheEscaper() throws {
        let pieces = ["a", " ", "é", "東", "🎫", "\u{2028}", "\u{2029}", "\u{2027}", "\\\"", "\\\\", "\\n", "\\u2028",
                      "\\ud83d\\ude00", "\\ud800", "\u{7F}", "\u{85}", "\u{FEFF}", "/", "\\/"]
        var random = SplitMix64(seed: 0x5EED_2028)
        for _ in 0..<2000 {
            var text = ""
            for _ in 0..<random.next(8) { text += pieces[random.next(pieces.count)] }
            try Self.checkFlags(Array("[\"\(text)\"]".utf8), text)
        }
    }

    /// Every string of every file the JSONTestSuite says must parse.
    @Test(.enabled(if: SharedTestData.isAvailable, "JSONTestSuite needs ../shared/testdata, which is absent"))
    func everyAcceptedFileOfTheJSONTestSuiteAgrees() throws {
        let directory = try #require(SharedTestData.directory?.appendingPathComponent("testdata/JSONTestSuite/test_parsing"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("y_") }
        #expect(names.count > 90)
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            try Self.checkFlags(bytes, name)
        }
    }

    @Test func leavesUnchangedIsExactlyWhenTheEscaperCopies() {
        var random = SplitMix64(seed: 0x00E5_CA9E)
        // Bytes weighted towards the interesting ones: ASCII, controls, lead and continuation
        // bytes, and the E2 80 A8/A9 of U+2028/2029.
        let interesting: [UInt8] = [0x41, 0x20, 0x22, 0x5C, 0x0A, 0x00, 0x1F, 0x7F, 0x80, 0xA8, 0xA9, 0xBF, 0xC2, 0xC3, 0xE2, 0xE2, 0x80, 0x80,
                                    0xED, 0xA0, 0xF0, 0x9F, 0xF4, 0x90, 0xFF, 0xC0]
        var unchangedSeen = 0
        for _ in 0..<20000 {
            let bytes = (0..<random.next(7)).map { _ in interesting[random.next(interesting.count)] }
            let unchanged = Self.escaped(bytes) == bytes
            if unchanged { unchangedSeen += 1 }
            #expect(bytes.withUnsafeBytes { JSONEscaper.leavesUnchanged($0) } == unchanged, "\(bytes)")
        }
        #expect(unchangedSeen > 1000, "the sample held enough text the escaper leaves alone")
        #expect(Array("Hi ".utf8).withUnsafeBytes { JSONEscaper.leavesUnchanged($0) })
        #expect(!Array("a\u{2028}".utf8).withUnsafeBytes { JSONEscaper.leavesUnchanged($0) })
    }
}
