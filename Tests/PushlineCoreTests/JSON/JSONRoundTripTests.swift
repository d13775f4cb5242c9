import Foundation
import PushlineCore
import Testing

/// A JSON value as the test means it, independent of the reader and the writer.
indirect enum TestValue {
    case null, bool(Bool), int(Int), double(Double), string([UInt8])
    case array([TestValue])
    case object([(key: [UInt8], value: TestValue)])

    static func random(_ g: inout SplitMix64, depth: Int = 0) -> TestValue {
        let pick = Int.random(in: 0..<(depth < 4 ? 8 : 6), using: &g)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &g))
        case 2: return .int(Bool.random(using: &g) ? Int.random(in: -1000...1000, using: &g) : Int(bitPattern: UInt(g.next())))
        case 3: return .double(randomDouble(&g))
        case 4, 5: return .string(randomBytes(&g))
        case 6: return .array((0..<Int.random(in: 0...5, using: &g)).map { _ in random(&g, depth: depth + 1) })
        default:
            // Distinct keys (an index suffix), so Foundation's dictionaries can serve as an oracle.
            return .object((0..<Int.random(in: 0...5, using: &g)).map { n in
                (randomBytes(&g) + Array("#\(n)".utf8), random(&g, depth: depth + 1))
            })
        }
    }

    static func randomDouble(_ g: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<3, using: &g) {
        case 0: Double.random(in: -1e6...1e6, using: &g)
        case 1: Double(bitPattern: g.next() & ~(0x7FF << 52) | (UInt64.random(in: 1...0x7FE, using: &g) << 52))
        default: Double(Int.random(in: -100_000...100_000, using: &g)) / 8
        }
    }

    /// Mostly text with every kind of trouble: quotes, backslashes, controls, multi-byte and
    /// invalid sequences.
    static func randomBytes(_ g: inout SplitMix64) -> [UInt8] {
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("Zoë".utf8), Array("\"".utf8), Array("\\".utf8), [0x00], [0x1F], [0x0A],
            Array("\u{2028}".utf8), Array("😀".utf8), Array("€".utf8), [0xC3], [0xED, 0xA0, 0x80], [0xFF], [0x80],
            Array("\\u0041".utf8), Array("plain words ".utf8),
        ]
        return (0..<Int.random(in: 0...8, using: &g)).flatMap { _ in pieces.randomElement(using: &g)! }
    }

    func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.writeNull()
        case .bool(let b): writer.writeBool(b)
        case .int(let i): writer.writeInt(i)
        case .double(let d): writer.writeDouble(d)
        case .string(let s): writer.writeString(utf8: s)
        case .array(let elements):
            writer.beginArray()
            for element in elements { element.write(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for (key, value) in members {
                key.withUnsafeBytes { writer.writeKey(utf8: $0) }
                value.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// Whether the reader's value is this one (strings compared after U+FFFD substitution).
    func matches(_ value: JSONValue) -> Bool {
        switch self {
        case .null: return value.isNull
        case .bool(let b): return value.boolValue == b
        case .int(let i): return value.int64Value == Int64(i)
        case .double(let d): return value.doubleValue == d
        case .string(let s): return value.withUnescapedString { Array($0) } == Array(String(decoding: s, as: UTF8.self).utf8)
        case .array(let elements):
            return value.kind == .array && value.count == elements.count
                && zip(elements, value.elements).allSatisfy { $0.matches($1) }
        case .object(let members):
            let read = value.members
            return value.kind == .object && read.count == members.count
                && zip(members, read).allSatisfy { expected, actual in
                    actual.key.withUnescapedString { Array($0) } == Array(String(decoding: expected.key, as: UTF8.self).utf8)
                        && expected.value.matches(actual.value)
                }
        }
    }
}

@Suite struct JSONRoundTripTests {
    @Test func randomValuesThroughWriterAndReader() throws {
        var generator = SplitMix64(seed: 20_241_121)
        var writer = JSONWriter()
        var foundationChecked = 0
        for n in 0..<3000 {
            let value = TestValue.random(&generator)
            writer.removeAll()
            value.write(to: &writer)
            let document = try JSONDocument(bytes: writer.bytes)
            #expect(value.matches(document.root), "case \(n): \(String(decoding: writer.bytes, as: UTF8.self))")
            if let object = try? JSONSerialization.jsonObject(with: Data(writer.bytes), options: [.fragmentsAllowed]) {
                #expect(FoundationOracle.matches(document.root, object), "case \(n) differs from JSONSerialization")
                foundationChecked += 1
            } else {
                Issue.record("case \(n): JSONSerialization refused the writer's output")
            }
        }
        print("JSON round trip: 3000 random values, \(foundationChecked) also checked with JSONSerialization")
    }
}
