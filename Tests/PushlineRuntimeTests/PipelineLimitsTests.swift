import Foundation
import PushlineCore
import PushlineRuntime
import Testing

/// The "billion laughs" shape: level 0 holds nine scalars, each later level nine aliases of the one before.
func aliasBomb(levels: Int) -> String {
    let names = (0..<levels).map { String(UnicodeScalar(UInt8(ascii: "a") + UInt8($0))) }
    var lines = ["a: &a [x,x,x,x,x,x,x,x,x]"]
    for index in 1..<levels {
        lines.append("\(names[index]): &\(names[index]) [" + Array(repeating: "*" + names[index - 1], count: 9).joined(separator: ",") + "]")
    }
    return lines.joined(separator: "\n") + "\n"
}

/// The single diagnostic `yaml` fails with.
func loadFailure(_ yaml: String, limits: ConfigLimits = .standard, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigDiagnostic? {
    do {
        _ = try PipelineLoader.parse(yaml: yaml, path: "p.yaml", limits: limits)
        Issue.record("accepted: \(yaml.prefix(80))", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(error.diagnostics.count == 1, sourceLocation: sourceLocation)
        return error.diagnostics.first
    }
}

@Suite("Pipeline file limits")
struct PipelineLimitsTests {
    @Test func aliasBombStopsAtTheExpandedSizeWithItsPosition() throws {
        // Expanded sizes (1 per node or key + scalar bytes): a = 1 + 9·2 = 19, b = 1 + 9·19 = 172,
        // c = 1549, d = 13942, e = 125479, f = 1129312. Before g: root 1 + six keys of 2 + those
        // = 1270486; key g and g's list bring 1270489, and each *f adds 1129312: the third
        // (g[2], line 7, column 14) passes 4 << 20.
        let bomb = aliasBomb(levels: 9)
        #expect(bomb.utf8.count < 400)
        let diagnostic = try #require(loadFailure(bomb))
        #expect(diagnostic.message.contains("too large once its aliases are expanded"))
        #expect(diagnostic.path == "g[2]")
        #expect(diagnostic.line == 7 && diagnostic.column == 14)
    }

    @Test func aliasCountIsLimited() throws {
        let yaml = "base: &b 1\nlist: [" + Array(repeating: "*b", count: 11).joined(separator: ", ") + "]\n"
        let diagnostic = try #require(loadFailure(yaml, limits: ConfigLimits(maxAliases: 10)))
        #expect(diagnostic.message.contains("more than 10 aliases"))
        #expect(diagnostic.path == "list[10]")
        // "list: [" is 7 characters; each "*b, " 4 more: the eleventh starts at column 8 + 40.
        #expect(diagnostic.line == 2 && diagnostic.column == 48)
    }

    @Test func aliasesWithinTheLimitsStillWork() throws {
        let root = try PipelineLoader.parse(yaml: "ios: &s { sound: default }\nandroid: *s\n", path: "p.yaml")
        #expect(root["android"]?["sound"]?.stringValue == "default")
        #expect(root["android"]?.line == 2)
    }

    @Test func undefinedAndSelfReferringAliasesAreErrors() throws {
        let undefined = try #require(loadFailure("a: *nothing\n"))
        #expect(undefined.message.contains("*nothing names no anchor"))
        #expect(undefined.line == 1 && undefined.column == 4)
        let selfReferring = try #require(loadFailure("a: &x [1, *x]\n"))
        #expect(selfReferring.message.contains("*x names no anchor"))
        #expect(selfReferring.path == "a[1]")
    }

    @Test(arguments: [
        ("flow lists", "x: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "\n"),
        ("flow mappings", "x: " + String(repeating: "{a: ", count: 100_000) + "1" + String(repeating: "}", count: 100_000) + "\n"),
        ("block mappings", (0..<70).map { String(repeating: " ", count: $0) + "a:" }.joined(separator: "\n") + " 1\n"),
        ("block lists", (0..<70).map { String(repeating: " ", count: $0 * 2) + "-" }.joined(separator: "\n") + " 1\n"),
    ])
    func deepNestingIsADiagnosticNotAStackOverflow(name: String, yaml: String) throws {
        let diagnostic = try #require(loadFailure(yaml))
        #expect(diagnostic.message.contains("nested more than 64 levels deep"), "\(name)")
        #expect(diagnostic.line >= 1 && diagnostic.column >= 1, "\(name)")
    }

    @Test func nestingAtTheLimitIsAccepted() throws {
        // The root mapping is level 1; 63 more flow lists make 64.
        let yaml = "x: " + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "\n"
        _ = try PipelineLoader.parse(yaml: yaml, path: "p.yaml")
        let over = "x: " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "\n"
        let diagnostic = try #require(loadFailure(over))
        // The 64th '[' is character 3 + 64 = 67.
        #expect(diagnostic.line == 1 && diagnostic.column == 67)
    }

    @Test func fileSizeIsLimited() throws {
        let yaml = "name: " + String(repeating: "x", count: 100) + "\n"
        let diagnostic = try #require(loadFailure(yaml, limits: ConfigLimits(maxFileBytes: 64)))
        #expect(diagnostic.message == "the pipeline file is larger than 64 bytes")
    }

    @Test func endlessFilesAreReadOnlyUpToTheLimit() throws {
        do {
            _ = try PipelineLoader.load(path: "/dev/zero", now: 0)
            Issue.record("/dev/zero loaded")
        } catch {
            #expect(error.description == "/dev/zero: error: the pipeline file is larger than 1048576 bytes")
        }
    }

    @Test(arguments: [
        // (yaml, message fragment, path, line, column)
        ("name: a\nname: b\n", "the key 'name' appears twice", "name", 2, 1),
        ("notification:\n  ios: { sound: a, sound: b }\n", "the key 'sound' appears twice", "notification.ios.sound", 2, 20),
        ("? [a]\n: b\n", "keys must be plain strings; found a list as a key", "", 1, 3),
        ("{ {a: 1}: b }\n", "keys must be plain strings; found a mapping as a key", "", 1, 3),
        ("k: &k v\n*k : x\n", "aliases cannot be keys", "", 2, 1),
        ("&k name: x\n", "anchors on keys are not supported", "", 1, 1),
        ("name: !foo bar\n", "YAML tags are not supported (found !foo)", "name", 1, 7),
        ("!!binary name: x\n", "keys must be plain strings; found the tag tag:yaml.org,2002:binary", "", 1, 1),
        ("a: !custom [1]\n", "YAML tags are not supported (found !custom)", "a", 1, 4),
        ("a: 1\n---\nb: 2\n", "one YAML document", "", 2, 1),
        ("expiry: 99999999999999999999\n", "the integer 99999999999999999999 is out of range", "expiry", 1, 9),
        ("badge: -9223372036854775809\n", "is out of range", "badge", 1, 8),
        ("ttl: 1e999\n", "the number 1e999 is out of range", "ttl", 1, 6),
    ])
    func yamlErrorsAreOneLineDiagnosticsWithPosition(yaml: String, fragment: String, path: String, line: Int, column: Int) throws {
        let diagnostic = try #require(loadFailure(yaml))
        #expect(diagnostic.message.contains(fragment), "\(diagnostic)")
        #expect(diagnostic.path == path)
        #expect(diagnostic.line == line && diagnostic.column == column, "\(diagnostic)")
        #expect(!diagnostic.description.contains("\n"))
    }

    @Test func longTextInADiagnosticIsCut() throws {
        let key = String(repeating: "k", count: 10_000)
        // Explicit keys: YAML limits implicit ones to 1024 characters.
        let diagnostic = try #require(loadFailure("? \(key)\n: 1\n? \(key)\n: 2\n"))
        let cut = String(repeating: "k", count: 80) + "…"
        #expect(diagnostic.message == "the key '\(cut)' appears twice in the same mapping")
        #expect(diagnostic.path == cut)
    }

    @Test func coreTagsAreHonoured() throws {
        let root = try PipelineLoader.parse(yaml: "a: !!str 12\nb: !!int 7\nc: !!seq [1]\n", path: "p.yaml")
        #expect(root["a"]?.stringValue == "12")
        #expect(root["b"]?.intValue == 7)
        #expect(root["c"]?.sequenceElements?.count == 1)
    }

    @Test func invalidUTF8IsADiagnosticWithTheByteOffset() throws {
        let scratch = try Scratch()
        let path = scratch.file("bad.yaml")
        // "name: " is 6 bytes: the invalid byte is at offset 6.
        try Data(Array("name: ".utf8) + [0xFF, 0x0A]).write(to: URL(fileURLWithPath: path))
        do {
            _ = try PipelineLoader.load(path: path, now: 0)
            Issue.record("invalid UTF-8 accepted")
        } catch {
            let diagnostic = try #require(error.diagnostics.first)
            #expect(diagnostic.message.hasPrefix("not valid YAML: invalid leading UTF-8 octet"), "\(diagnostic)")
            #expect(diagnostic.message.hasSuffix("(at byte 6)"))
        }
    }
}
