import PushlineCore
import Testing

/// `JSONValue.unsafeRawStringContent` and `unsafeRawText`: the record's own bytes, read in place.
@Suite("JSON values: raw bytes read in place")
struct JSONValueRawBytesTests {
    @Test func rawBytesAreTheTextAsItStandsInTheLine() throws {
        // The document is a range of a larger buffer: offsets are the range's, not the buffer's.
        let line = #"{"name":"Chlo\u00e9 \"C\"","plain":"São Paulo","n":-12.5e3,"empty":"","list":[1, 2]}"#
        let buffer = Array(("xxxx" + line + "yyyy").utf8)
        let document = try JSONDocument(buffer: buffer, range: 4..<(4 + line.utf8.count))
        let root = document.root
        func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

        let name = try #require(root.member("name"))
        #expect(text(name.unsafeRawStringContent) == #"Chlo\u00e9 \"C\""#, "escapes are not decoded")
        #expect(text(name.unsafeRawText) == #""Chlo\u00e9 \"C\"""#)
        #expect(text(try #require(root.member("plain")).unsafeRawStringContent) == "São Paulo")
        #expect(try #require(root.member("empty")).unsafeRawStringContent.isEmpty)
        let number = try #require(root.member("n"))
        #expect(number.unsafeRawStringContent.isEmpty, "not a string")
        #expect(text(number.unsafeRawText) == "-12.5e3")
        #expect(text(try #require(root.member("list")).unsafeRawText) == "[1, 2]")
        #expect(text(root.unsafeRawText) == line)
    }
}
