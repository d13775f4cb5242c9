import Foundation
import PushlineCore
import Testing

/// Class 6 of issue 7: a lone surrogate escape is valid JSON but no Unicode text. The reader flags
/// it, decoding turns it into U+FFFD, and `JSONWriter.writeValue` (every raw copy) re-escapes it.
@Suite("Lone surrogate escapes")
struct LoneSurrogateTests {
    /// Each case: JSON string text, and what it must decode to.
    static let cases: [(json: String, decoded: String)] = [
        (#""\ud800""#, "\u{FFFD}"),                      // high alone
        (#""\udc00""#, "\u{FFFD}"),                      // low alone
        (#""a\uDBFFb""#, "a\u{FFFD}b"),                  // high then a plain character
        (#""\ud800\u0041""#, "\u{FFFD}A"),               // high then a non-surrogate escape
        (#""\ud800\ud800""#, "\u{FFFD}\u{FFFD}"),        // two highs
        (#""\udc00\ud800""#, "\u{FFFD}\u{FFFD}"),        // low before high: not a pair
        (#""x\ud83d\n""#, "x\u{FFFD}\n"),                // high then another escape
        (#""\ud83d\ude00\udfff""#, "😀\u{FFFD}"),         // a pair, then a stray low
    ]

    @Test(arguments: cases.indices)
    func decodesToReplacementCharacter(_ i: Int) throws {
        let (text, expected) = Self.cases[i]
        let document = try JSONDocument(parsing: text)
        #expect(document.hasLoneSurrogates)
        #expect(document.root.stringValue == expected)
    }

    @Test(arguments: cases.indices)
    func writeValueReescapes(_ i: Int) throws {
        let (text, expected) = Self.cases[i]
        let document = try JSONDocument(parsing: #"{"k":[1,"#+text+#",true],"#+text+#":"plain"}"#)
        var writer = JSONWriter()
        writer.writeValue(document.root)
        let output = String(decoding: writer.bytes, as: UTF8.self)
        #expect(!output.lowercased().contains(#"\ud8"#) && !output.lowercased().contains(#"\udc"#) && !output.lowercased().contains(#"\udb"#) && !output.lowercased().contains(#"\udf"#), "\(output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
        let array = try #require(object["k"] as? [Any])
        #expect(array.count == 3)
        #expect(array[1] as? String == expected)
        #expect(object[expected] as? String == "plain")
    }

    @Test func validPairsAndPlainEscapesAreNotFlagged() throws {
        for text in [#""\ud83d\ude00""#, #""\u00e9\n""#, #""plain""#, #"{"a":"\uD834\uDD1E"}"#, "[1,2]"] {
            let document = try JSONDocument(parsing: text)
            #expect(!document.hasLoneSurrogates, "\(text)")
            var writer = JSONWriter()
            writer.writeValue(document.root)
            // Without lone surrogates the value is copied byte for byte.
            #expect(writer.bytes == Array(text.utf8))
        }
    }

    @Test func onlyTheFlaggedStringChanges() throws {
        let document = try JSONDocument(parsing: #"{"a":"\u00e9","b":"\ud800","c":"\ud83d\ude00"}"#)
        var writer = JSONWriter()
        writer.writeValue(document.root)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":"\u00e9","b":"\#u{FFFD}","c":"\ud83d\ude00"}"#)
    }

    @Test func writingAValueInsideTheDocument() throws {
        let document = try JSONDocument(parsing: #"{"id":"\udfff-1","other":"\ud800"}"#)
        var writer = JSONWriter()
        writer.beginArray()
        writer.writeValue(try #require(document.root["id"]))
        writer.writeValue(try #require(document.root["id"]))
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\"\u{FFFD}-1\",\"\u{FFFD}-1\"]")
    }
}
