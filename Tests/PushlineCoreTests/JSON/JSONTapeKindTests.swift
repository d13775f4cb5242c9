import Foundation
@testable import PushlineCore
import PushlineTestSupport
import Testing

/// A value's kind is kept in its tape entry (`JSONTapeEntry.kind`), beside `aux`. Checked against
/// what the kind is by definition, the value's first byte, on every value and key of every
/// accepted JSONTestSuite file and of random documents; and against `aux`, which shares the word.
@Suite struct JSONTapeKindTests {
    private static func kindOfFirstByte(_ value: JSONValue) -> JSONKind {
        switch value.document.buffer[value.byteRange.lowerBound] {
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "t"): .true
        case UInt8(ascii: "f"): .false
        case UInt8(ascii: "n"): .null
        default: .number
        }
    }

    /// Checks every value of `value`'s subtree (keys included); returns how many there were.
    @discardableResult
    private static func check(_ value: JSONValue, _ label: String) -> Int {
        #expect(value.kind == kindOfFirstByte(value), "\(label): \(String(decoding: value.document.buffer[value.byteRange], as: UTF8.self))")
        var seen = 1
        switch value.kind {
        case .array:
            #expect(value.elements.count == value.count, "\(label)")
            for element in value.elements { seen += check(element, label) }
        case .object:
            #expect(value.members.count == value.count, "\(label)")
            for (key, member) in value.members {
                #expect(key.kind == .string, "\(label)")
                seen += 1 + check(member, label)
            }
        default:
            #expect(value.count == 0, "\(label)")
        }
        return seen
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "needs ../shared/testdata/JSONTestSuite (skipped: no ../shared next to this clone)"))
    func everyValueOfTheSuitesAcceptedFiles() throws {
        let directory = try #require(JSONTestSuiteTests.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("y_") }
        #expect(names.count > 90)
        var values = 0
        for name in names {
            let document = try JSONDocument(bytes: [UInt8](try Data(contentsOf: directory.appendingPathComponent(name))))
            values += Self.check(document.root, name)
            #expect(values > 0)
        }
        #expect(values > names.count)
    }

    @Test func randomDocuments() throws {
        var random = SplitMix64(seed: 0x7A9E_0015)
        func value(_ depth: Int) -> String {
            let choice = depth > 4 ? 2 + random.next(6) : random.next(8)
            switch choice {
            case 0: return "[" + (0..<random.next(6)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            case 1: return "{" + (0..<random.next(6)).map { n in "\"k\(n)\": \(value(depth + 1))" }.joined(separator: ",") + "}"
            case 2: return "\"s\\n\(random.next(100))\""
            case 3: return "-\(random.next(1000)).5e3"
            case 4: return "true"
            case 5: return "false"
            case 6: return "null"
            default: return "\(random.next(1000))"
            }
        }
        for n in 0..<500 {
            let text = value(0)
            Self.check(try JSONDocument(parsing: text).root, "document \(n): \(text)")
        }
    }

    /// A container's count is added to the word that holds its kind: many elements leave it be.
    @Test func largeCountsLeaveTheKind() throws {
        let count = 300_000
        let document = try JSONDocument(parsing: "[" + Array(repeating: "{}", count: count).joined(separator: ",") + "]")
        #expect(document.root.kind == .array)
        #expect(document.root.count == count)
        #expect(document.root[count - 1]?.kind == .object)
    }

    /// The count's 29 bits hold every container of a text up to the limit; a larger text is
    /// refused before a byte of it is read (the pointer here points at nothing).
    @Test func textsPastTheLimitAreRefused() throws {
        #expect(JSONParser.maxTextBytes / 2 + 1 <= Int(JSONTapeEntry.auxMask) + 1)
        let huge = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: 0x1000), count: JSONParser.maxTextBytes + 1)
        #expect(throws: JSONParseError(offset: 0, message: "text larger than 1 GiB")) {
            _ = try JSONParser.index(huge, maxDepth: 128) { _ in preconditionFailure("no tape is needed for a refused text") }
        }
    }
}
