import Foundation
import PushlineCore
import Testing

/// Parses `text` or records why not.
private func parse(_ text: String, maxDepth: Int = 128) throws -> JSONValue {
    try JSONDocument(parsing: text, maxDepth: maxDepth).root
}

/// The error `text` is refused with (nil when it parses).
private func refusal(_ text: [UInt8], maxDepth: Int = 128) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try JSONDocument(bytes: text, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

private func refusal(_ text: String) -> JSONParseError? { refusal(Array(text.utf8)) }

private func unescaped(_ value: JSONValue?) -> [UInt8]? {
    value?.withUnescapedString { Array($0) }
}

@Suite struct JSONDepthTests {
    @Test func hundredThousandOpeningArraysAreRefusedNotACrash() {
        let text = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let error = refusal(text)
        // The 129th '[' (offset 128) is the first one beyond the default bound of 128.
        #expect(error?.offset == 128)
        #expect(error?.message.contains("deeper than 128") == true)
    }

    @Test func boundIsExact() throws {
        let inside = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        #expect(try parse(inside).count == 1)
        #expect(refusal("[" + inside + "]")?.offset == 128)
        #expect(refusal(Array("[[1]]".utf8), maxDepth: 1)?.offset == 1)
        #expect(try parse("7", maxDepth: 0).int64Value == 7)
    }

    /// Invalid texts can open more values than the tape bound of n/2 + 1 (which holds for
    /// valid ones) before the bad byte is reached: each is refused as invalid, never a trap.
    @Test(arguments: ["[[x", "[[[[[[x", "[[[[[[", "[[[[[[\"", "{\"a\":[[[[[", "[1,[[[[[[[[[[[[[[[[[[[[[[", "[[1,[[2,[[3"])
    func textsOpeningMoreValuesThanTheBoundAreInvalid(_ text: String) {
        let error = refusal(text)
        #expect(error != nil)
        // Foundation agrees the text is not JSON.
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) == nil)
    }

    /// Long runs of openers (past the small-text bound and the large-text estimate) too.
    @Test func longRunsOfOpenersAreInvalid() {
        for count in [70_000, 200_000] {
            let text = [UInt8](repeating: UInt8(ascii: "["), count: count) + Array("x".utf8)
            #expect(refusal(text, maxDepth: 1_000_000) != nil)
        }
    }

    /// The parser keeps its own stack, so a generous bound does not turn into deep recursion.
    @Test func deepDocumentWithinALargeBound() throws {
        let depth = 100_000
        let text = [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
        let root = try JSONDocument(bytes: text, maxDepth: depth).root
        #expect(root.count == 1)
        #expect(root.byteRange == 0..<(2 * depth))
        var innermost = root
        for _ in 1..<depth { innermost = try #require(innermost[0]) }
        #expect(innermost.count == 0)
        #expect(innermost.byteRange == (depth - 1)..<(depth + 1))
    }
}

@Suite struct JSONGrammarTests {
    @Test(arguments: [
        ("", 0), ("   ", 3), ("[1,]", 3), ("{\"a\" 1}", 5), ("{\"a\":1,}", 7), ("\"abc", 0),
        ("[1] x", 4), ("01", 1), ("-", 1), ("1.", 2), (".5", 0), ("1e", 2), ("1e+", 3), ("[1 2]", 3),
        ("\"\\x\"", 1), ("\"\\u12G4\"", 1), ("\"a\tb\"", 2), ("tru", 0), ("nul", 0), ("[true false]", 6),
        ("{1:2}", 1), ("{\"a\":1 \"b\":2}", 7), ("]", 0), ("[", 1), ("{\"a\":", 5), ("\u{FEFF}{}", 0),
    ])
    func refusedAtTheRightByte(text: String, offset: Int) {
        #expect(refusal(text)?.offset == offset, "\(text.debugDescription)")
    }

    @Test func invalidUTF8InAString() {
        #expect(refusal([0x22, 0x61, 0xC3, 0x28, 0x22])?.offset == 2)    // C3 needs a continuation
        #expect(refusal([0x22, 0xED, 0xA0, 0x80, 0x22])?.offset == 1)    // UTF-8 encoded surrogate
        #expect(refusal([0x22, 0xC0, 0xAF, 0x22])?.offset == 1)          // overlong '/'
        #expect(refusal([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22])?.offset == 1)
        #expect(refusal([0x22, 0xE2, 0x82])?.offset == 1)                // truncated at the end
        #expect(refusal([0x5B, 0xC3, 0xA9, 0x5D])?.offset == 1)          // non-ASCII outside a string
        #expect(refusal([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == nil)
    }

    @Test func errorDescriptionNamesTheByte() {
        let error = refusal("{\"a\":1,}")
        #expect(error?.description == "invalid JSON at byte 7: expected a string key")
    }

    @Test func scalarsAndWhitespaceAtTheRoot() throws {
        #expect(try parse(" \t\r\n true \n").kind == .true)
        #expect(try parse("null").isNull)
        #expect(try parse("\"\"").stringValue == "")
        #expect(try parse("-0").int64Value == 0)
        #expect(try parse("[ ]").count == 0)
        #expect(try parse("{ }").count == 0)
    }

    /// Dense texts beyond the small-text size exceed the tape estimate and are indexed again.
    @Test func denseLargeDocumentOutgrowsTheEstimate() throws {
        let count = 100_000
        let text = "[" + Array(repeating: "7", count: count).joined(separator: ",") + "]"
        let document = try JSONDocument(parsing: text)
        #expect(document.valueCount == count + 1)
        #expect(document.root.count == count)
        #expect(document.root[-1]?.int64Value == 7)
        #expect(document.root[-1]?.byteRange == (text.utf8.count - 2)..<(text.utf8.count - 1))
    }
}

@Suite struct JSONLookupTests {
    static let text = #"""
    {"id":"c-42","customer":{"first_name":"Ana","points":120,"tags":["a","b","c"],"nested":{"x":[[],{}]}},
     "devices":[{"platform":"ios","token":"t1"},{"platform":"web","token":"t2"}],"ok":true,"no":false,"none":null,
     "a":{"b c":1,"x":2}}
    """#

    @Test func kindsCountsAndMembers() throws {
        let root = try parse(Self.text)
        #expect(root.kind == .object)
        #expect(root.count == 7)
        #expect(root.members.map { $0.key.stringValue } == ["id", "customer", "devices", "ok", "no", "none", "a"])
        let customer = try #require(root["customer"])
        #expect(customer.kind == .object)
        #expect(customer["first_name"]?.stringValue == "Ana")
        #expect(customer["points"]?.int64Value == 120)
        #expect(customer["tags"]?.elements.compactMap(\.stringValue) == ["a", "b", "c"])
        #expect(customer["nested"]?["x"]?.elements.map(\.kind) == [.array, .object])
        #expect(root["ok"]?.boolValue == true)
        #expect(root["no"]?.boolValue == false)
        #expect(root["none"]?.isNull == true)
        #expect(root["none"]?.boolValue == nil)
        #expect(root["missing"] == nil)
        #expect(root["id"]?["x"] == nil)           // a member of a string
        #expect(root["devices"]?["platform"] == nil)
        #expect(root[0] == nil)                    // an element of an object
        #expect(root["id"]?.count == 0)
    }

    @Test func arrayIndexesSkipSubtrees() throws {
        let devices = try #require(try parse(Self.text)["devices"])
        #expect(devices.count == 2)
        #expect(devices[1]?["token"]?.stringValue == "t2")
        #expect(devices[-1]?["token"]?.stringValue == "t2")
        #expect(devices[-2]?["token"]?.stringValue == "t1")
        #expect(devices[2] == nil)
        #expect(devices[-3] == nil)
    }

    @Test func byteRangesAreTheValuesText() throws {
        let document = try JSONDocument(parsing: #"{"a" : [1, {"b":"x\ny"}] , "c":-1.5e3}"#)
        func text(_ value: JSONValue?) -> String? {
            value.map { String(decoding: document.buffer[$0.byteRange], as: UTF8.self) }
        }
        #expect(text(document.root["a"]) == #"[1, {"b":"x\ny"}]"#)
        #expect(text(document.root["a"]?[1]?["b"]) == #""x\ny""#)
        #expect(text(document.root["c"]) == "-1.5e3")
        #expect(document.root["a"]?[1]?["b"]?.withRawBytes { $0.count } == 6)
    }

    @Test func lastDuplicateWins() throws {
        let root = try parse(#"{"a":1,"b":0,"a":2,"\u0061":3,"ab":4}"#)
        #expect(root["a"]?.int64Value == 3)     // "\u0061" is "a" once unescaped
        #expect(root.count == 5)
        #expect(root.members.compactMap { $0.value.int64Value } == [1, 0, 2, 3, 4])
    }

    @Test func subRangeDocumentsShareOneBuffer() throws {
        let buffer = Array(#"xx{"a":1}"#.utf8) + [0x0A] + Array(#"  ["q", 2] "#.utf8) + [0x0A] + Array(#"{"a":}"#.utf8)
        let first = try JSONDocument(buffer: buffer, range: 2..<9)
        #expect(first.root["a"]?.int64Value == 1)
        #expect(first.root["a"]?.byteRange == 7..<8)       // absolute, within the shared buffer
        let second = try JSONDocument(buffer: buffer, range: 10..<21)
        #expect(second.root[0]?.stringValue == "q")
        #expect(second.root.byteRange == 12..<20)
        // The third line's error offset counts from its own start.
        #expect(throws: JSONParseError(offset: 5, message: "unexpected '}', expected a value")) {
            try JSONDocument(buffer: buffer, range: 22..<buffer.count)
        }
        // A document is not allowed to run past its range, although the buffer goes on.
        #expect(throws: JSONParseError.self) { try JSONDocument(buffer: buffer, range: 2..<8) }
    }
}

@Suite struct JSONStringTests {
    @Test func everyEscape() throws {
        let value = try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u00C9\u20ac\ud83d\ude00""#)
        #expect(value.stringHasEscapes)
        let expected: [UInt8] = [0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09, 0x41, 0xC3, 0xA9, 0xC3, 0x89,
                                 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80]
        #expect(unescaped(value) == expected)
        #expect(expected.withUnsafeBytes { value.stringEquals($0) })
    }

    @Test(arguments: [
        (#""\ud800""#, [0xEF, 0xBF, 0xBD]),
        (#""\udc00x""#, [0xEF, 0xBF, 0xBD, 0x78]),
        (#""\ud800\u0041""#, [0xEF, 0xBF, 0xBD, 0x41]),
        (#""\ud83d\ude00\ud83d""#, [0xF0, 0x9F, 0x98, 0x80, 0xEF, 0xBF, 0xBD]),
        (#""\ude00\ud83d""#, [0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD]),
        (#""\uD83D\uDE00""#, [0xF0, 0x9F, 0x98, 0x80]),
        (#""\ud800\n""#, [0xEF, 0xBF, 0xBD, 0x0A]),
        (#""\ud800\ud800\udc00""#, [0xEF, 0xBF, 0xBD, 0xF0, 0x90, 0x80, 0x80]),
        (#""\u0000""#, [0x00]),
    ] as [(String, [UInt8])])
    func surrogates(text: String, expected: [UInt8]) throws {
        let value = try parse(text)
        #expect(unescaped(value) == expected)
        #expect(expected.withUnsafeBytes { value.stringEquals($0) })
    }

    @Test func unescapedStringsAreTheBufferItself() throws {
        let document = try JSONDocument(parsing: #"{"name":"José"}"#)
        let name = try #require(document.root["name"])
        #expect(!name.stringHasEscapes)
        let pointsIntoBuffer = name.withUnescapedString { content in
            document.buffer.withUnsafeBytes { $0.baseAddress! + 9 == content.baseAddress! && content.count == 5 }
        }
        #expect(pointsIntoBuffer == true)
    }

    @Test func stringEquality() throws {
        let plain = try parse(#""Ana""#)
        let escaped = try parse(#""A\u006ea""#)
        for value in [plain, escaped] {
            #expect(value.stringEquals("Ana"))
            #expect(!value.stringEquals("An"))
            #expect(!value.stringEquals("Anaa"))
            #expect(!value.stringEquals("Anb"))
            #expect(!value.stringEquals(""))
        }
        #expect(try parse(#""a long value past eight bytes""#).stringEquals("a long value past eight bytes"))
        #expect(!(try parse(#""a long value past eight bytes""#).stringEquals("a long value past eight byteS")))
        #expect(!(try parse("1").stringEquals("1")))
        #expect(try parse("1").stringValue == nil)
        #expect(try parse("1").withUnescapedString { $0.count } == nil)
    }

    @Test func escapedMemberNames() throws {
        let root = try parse(#"{"first\u005fname":"Ana","tab\there":1,"\ud83d\ude00":2}"#)
        #expect(root["first_name"]?.stringValue == "Ana")
        #expect(root["tab\there"]?.int64Value == 1)
        #expect(root["😀"]?.int64Value == 2)
        #expect(root["first_nam"] == nil)
    }
}

@Suite struct JSONNumberTests {
    @Test(arguments: [
        ("0", 0), ("-0", 0), ("42", 42), ("-17", -17),
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
    ] as [(String, Int64)])
    func exactIntegers(text: String, expected: Int64) throws {
        #expect(try parse(text).int64Value == expected)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "1.0", "1e2", "-0.0", "100000000000000000000"])
    func notExactIntegers(text: String) throws {
        #expect(try parse(text).int64Value == nil)
    }

    @Test(arguments: [
        ("1.5", 1.5), ("-0.25e2", -25), ("0.1", 0.1), ("1E2", 100), ("1e-2", 0.01),
        ("123456789012345678", 123456789012345678.0), ("5e-324", .leastNonzeroMagnitude),
        ("1.7976931348623157e308", .greatestFiniteMagnitude), ("1e-400", 0), ("-9223372036854775808", -9223372036854775808.0),
    ] as [(String, Double)])
    func doubles(text: String, expected: Double) throws {
        #expect(try parse(text).doubleValue == expected)
    }

    @Test func outOfRangeAndNotNumbers() throws {
        #expect(try parse("1e400").doubleValue == nil)
        #expect(try parse("-1e400").doubleValue == nil)
        #expect(try parse("\"1\"").doubleValue == nil)
        #expect(try parse("true").int64Value == nil)
    }
}

@Suite struct JSONPathTests {
    @Test(arguments: [
        ("a", [.key(Array("a".utf8))]),
        ("a.b", [.key(Array("a".utf8)), .key(Array("b".utf8))]),
        ("a[0]", [.key(Array("a".utf8)), .index(0)]),
        ("a[-1]", [.key(Array("a".utf8)), .index(-1)]),
        (#"a["b c"]"#, [.key(Array("a".utf8)), .key(Array("b c".utf8))]),
        ("a['x']", [.key(Array("a".utf8)), .key(Array("x".utf8))]),
        ("a.b[2].c", [.key(Array("a".utf8)), .key(Array("b".utf8)), .index(2), .key(Array("c".utf8))]),
        (#"["q\"d"][0][1]"#, [.key(Array(#"q"d"#.utf8)), .index(0), .index(1)]),
        (#"a[""]"#, [.key(Array("a".utf8)), .key([])]),
        ("first_name.é-1.0", [.key(Array("first_name".utf8)), .key(Array("é-1".utf8)), .key(Array("0".utf8))]),
    ] as [(String, [JSONPath.Component])])
    func parses(text: String, components: [JSONPath.Component]) throws {
        let path = try JSONPath(parsing: text)
        #expect(path.components == components)
        #expect(try JSONPath(parsing: path.description) == path)
    }

    @Test func descriptionPrintsItBack() throws {
        #expect(try JSONPath(parsing: "a.b[2].c").description == "a.b[2].c")
        #expect(try JSONPath(parsing: "a['b c'][-1]").description == #"a["b c"][-1]"#)
        #expect(try JSONPath(parsing: #"["a\\b"]"#).description == #"a\b"#)
        #expect(try JSONPath(parsing: #"x["a\"b"]"#).description == #"x["a\"b"]"#)
        #expect(JSONPath(components: [.index(3), .key(Array("x".utf8))]).description == "[3].x")
    }

    @Test(arguments: [
        ("", 0, "empty path"),
        ("a.", 2, "empty key after '.'"),
        (".a", 0, "empty key at the start"),
        ("a..b", 2, "empty key after '.'"),
        ("a[]", 1, "empty brackets"),
        ("a[0", 1, "unclosed '['"),
        ("a[x]", 2, "expected an index or a quoted key"),
        ("a b", 1, "must be bracketed"),
        (#"a["x]"#, 1, "unterminated quoted key"),
        ("a]", 1, "without a matching '['"),
        ("a[99999999999999999999]", 2, "index out of range"),
        ("a[1]b", 4, "expected '.' or '['"),
    ] as [(String, Int, String)])
    func refuses(text: String, offset: Int, message: String) {
        do throws(JSONPathError) {
            let path = try JSONPath(parsing: text)
            Issue.record("\(text.debugDescription) parsed as \(path)")
        } catch {
            #expect(error.offset == offset, "\(text.debugDescription): \(error)")
            #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
        }
    }

    @Test func followsPaths() throws {
        let root = try parse(JSONLookupTests.text)
        func string(_ path: String) throws -> String? { root.value(at: try JSONPath(parsing: path))?.stringValue }
        #expect(try string("customer.first_name") == "Ana")
        #expect(try string("devices[-1].token") == "t2")
        #expect(try string("customer.tags[1]") == "b")
        #expect(try string(#"customer["first_name"]"#) == "Ana")
        #expect(root.value(at: try JSONPath(parsing: #"a["b c"]"#))?.int64Value == 1)
        #expect(root.value(at: try JSONPath(parsing: "a['x']"))?.int64Value == 2)
        #expect(try string("devices[2].token") == nil)
        #expect(try string("customer.first_name.x") == nil)
        #expect(try string("devices.0") == nil)     // `.0` is a key, and an array has none
        #expect(root.value(at: JSONPath(components: []))?.kind == .object)
    }

    /// Lookups walk the path's encoded steps, which follow its components when they change.
    @Test func followsChangedComponents() throws {
        let root = try parse(JSONLookupTests.text)
        var path = try JSONPath(parsing: "customer.first_name")
        path.components[1] = .key(Array("tags".utf8))
        path.components.append(.index(-1))
        #expect(root.value(at: path)?.stringValue == "c")
        #expect(path == (try JSONPath(parsing: "customer.tags[-1]")))
        path.components = [.key(Array("devices".utf8)), .index(Int.min)]
        #expect(root.value(at: path) == nil)
        path.components = [.key(Array("a".utf8)), .key(Array("b c".utf8))]
        #expect(root.value(at: path)?.int64Value == 1)
        path.components = [.key([]), .index(0)]
        #expect(root.value(at: path) == nil)
        #expect(try parse(#"{"":[7]}"#).value(at: path)?.int64Value == 7)
    }
}
