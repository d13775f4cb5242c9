import Foundation
import PushlineCore
import PushlineEncoding
import PushlineRuntime
import PushlineTemplates
import Testing

/// The flat `PayloadProgram` must write exactly what the recursive `PayloadNode` walk writes:
/// the walk is simple enough to be the specification, the program is what runs per device.
@Suite("Payload programs")
struct PayloadProgramTests {
    static let record = try! JSONDocument(parsing: #"{"name":"Ana \"A\" Ø","empty":"","n":7,"tags":["x"],"device":{"badge":2}}"#).root

    static func template(_ text: String) -> TemplatedValue {
        TemplatedValue(.template(try! TemplateCompiler.compile(text, dialect: .liquid)), field: "f")
    }

    /// A random tree: constants, texts that render empty or not, typed and record values, and
    /// objects/arrays whose members may be dropped when empty.
    static func randomNode(_ rng: inout SplitMix64, depth: Int) -> PayloadNode {
        switch depth > 3 ? rng.next(4) : rng.next(7) {
        case 0: return .string(["", "x", "é\"q"][rng.next(3)])
        case 1: return .text(template(["{{ name }}", "{{ empty }}", "{{ missing }}", "a{{ n }}"][rng.next(4)]), role: .body)
        case 2: return .integer(rng.next(100))
        case 3: return [PayloadNode.recordValue(try! JSONPath(parsing: "tags")), .relativeBadge(1, field: "b"), .typed(template("{{ n }}"), .integer(nil))][rng.next(3)]
        case 4, 5:
            let members = (0..<rng.next(4)).map { i in
                PayloadMember("k\(i)", randomNode(&rng, depth: depth + 1), omitIfEmpty: rng.next(2) == 0)
            }
            return rng.next(3) == 0 ? .makeObject(members) : .object(members)
        default:
            return .array((0..<(1 + rng.next(3))).map { _ in randomNode(&rng, depth: depth + 1) })
        }
    }

    @Test func programWritesWhatTheTreeWrites() throws {
        var rng = SplitMix64(seed: 99)
        for round in 0..<2000 {
            let root = Self.randomNode(&rng, depth: 0)
            let omitRoot = rng.next(2) == 0
            var context = EncodeContext(record: Self.record, fieldLimit: 8192)
            context.device = Self.record.member("device")

            var tree = JSONWriter()
            tree.beginObject()
            tree.writeKey("v")
            let treeWrote = try root.write(into: &tree, context: &context, omitIfEmpty: omitRoot)
            tree.endObject()

            var program = JSONWriter()
            program.beginObject()
            program.writeKey("v")
            let programWrote = try PayloadProgram(root, omitIfEmpty: omitRoot).write(into: &program, context: &context)
            program.endObject()

            #expect(programWrote == treeWrote, "round \(round)")
            if treeWrote {
                #expect(String(decoding: program.bytes, as: UTF8.self) == String(decoding: tree.bytes, as: UTF8.self), "round \(round): \(root)")
                _ = try JSONDocument(bytes: program.bytes)   // and it is valid JSON
            }
        }
    }

    @Test func membersProgramMatchesObjectMembers() throws {
        var rng = SplitMix64(seed: 7)
        for round in 0..<500 {
            let members = (0..<(1 + rng.next(4))).map { i in
                PayloadMember("m\(i)", Self.randomNode(&rng, depth: 1), omitIfEmpty: rng.next(2) == 0)
            }
            var context = EncodeContext(record: Self.record, fieldLimit: 8192)
            var tree = JSONWriter()
            tree.beginObject()
            tree.writeKey("token")
            tree.writeString("t")
            for member in members {
                let mark = tree.count
                let comma = tree.separatorPending
                tree.writeKey(member.key)
                if try !member.value.write(into: &tree, context: &context, omitIfEmpty: member.omitIfEmpty) {
                    tree.truncate(to: mark, needsComma: comma)
                }
            }
            tree.endObject()

            var program = JSONWriter()
            program.beginObject()
            program.writeKey("token")
            program.writeString("t")
            try PayloadProgram(members: members).write(into: &program, context: &context)
            program.endObject()
            #expect(String(decoding: program.bytes, as: UTF8.self) == String(decoding: tree.bytes, as: UTF8.self), "round \(round)")
        }
    }
}
