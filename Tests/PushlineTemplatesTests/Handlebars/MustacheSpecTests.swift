import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// The Mustache spec (`../shared/testdata/mustache-spec`), run as Handlebars runs it: HTML
/// escaping on and `compat` name resolution (a name missing from the current context is found in
/// an enclosing one). Every case not in `Resources/mustache-skips.txt` (each listed with its
/// reason) must pass. Without `../shared` the tests are reported as skipped.
@Suite struct MustacheSpecTests {
    static let core = ["interpolation.json", "sections.json", "inverted.json", "comments.json", "partials.json"]

    /// Skipped cases (`file: name`) with their reasons.
    static func skips() throws -> [String: String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Resources/mustache-skips.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", maxSplits: 1)
            guard fields.count == 2, !fields[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                Issue.record("mustache-skips.txt: '\(line)' is not `file: name<TAB>reason`")
                continue
            }
            out[String(fields[0])] = String(fields[1])
        }
        return out
    }

    static func caseID(_ file: String, _ test: JSONValue) -> String {
        "\(file): \(test["name"]?.stringValue ?? "?")"
    }

    /// Whether any case of `file` is outside the skip list (false when the suite is absent).
    static func hasRunnableCases(_ file: String) -> Bool {
        guard let suite = HandlebarsHarness.loadSuite("mustache-spec/\(file)"), let skips = try? skips() else { return false }
        return (suite.root["tests"]?.elements ?? []).contains { skips[caseID(file, $0)] == nil }
    }

    /// Runs every case of `file` not skip-listed; returns the ids seen, and records each failure
    /// by name.
    static func run(_ file: String) throws -> (passed: Int, skipped: Int, failed: Int, seen: Set<String>) {
        let suite = try #require(HandlebarsHarness.loadSuite("mustache-spec/\(file)"), "cannot read \(file)")
        let skips = try skips()
        var passed = 0, skipped = 0, failed = 0
        var seen = Set<String>()
        for test in suite.root["tests"]?.elements ?? [] {
            let id = caseID(file, test)
            #expect(seen.insert(id).inserted, "duplicate case \(id)")
            if skips[id] != nil { skipped += 1; continue }
            let template = try #require(test["template"]?.stringValue)
            let snippets = try #require(HandlebarsHarness.snippets(test["partials"]), "\(id): partials are not strings")
            let options = TemplateOptions(htmlEscape: true, snippets: snippets)
            let data = try #require(test["data"])
            let outcome = HandlebarsHarness.run(template, data, options: options, compat: true)
            if outcome.text == test["expected"]?.stringValue {
                passed += 1
            } else {
                failed += 1
                Issue.record("mustache-spec case failed: \(id)\n    template: \(template.debugDescription)\n    expected: \(test["expected"]?.stringValue?.debugDescription ?? "?")\n    got: \(outcome)")
            }
        }
        print("mustache-spec \(file): \(passed) passed, \(failed) failed, \(skipped) skipped (listed with reasons in mustache-skips.txt)")
        return (passed, skipped, failed, seen)
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "mustache-spec needs ../shared/testdata, which is absent"), arguments: core)
    func coreSpec(file: String) throws {
        let result = try Self.run(file)
        #expect(result.passed > 0)
    }

    /// Set-delimiter tags are optional in Mustache and not offered here: while every case of the
    /// file is skip-listed, this test shows as skipped rather than passing on nothing.
    @Test(.enabled(if: SharedTestData.isAvailable && MustacheSpecTests.hasRunnableCases("delimiters.json"),
                   "every delimiters.json case is in mustache-skips.txt (set-delimiter tags are not supported), or ../shared/testdata is absent"))
    func delimiters() throws {
        _ = try Self.run("delimiters.json")
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "mustache-spec needs ../shared/testdata, which is absent"))
    func skipListNamesRealCases() throws {
        var seen = Set<String>()
        for file in Self.core + ["delimiters.json"] {
            let suite = try #require(HandlebarsHarness.loadSuite("mustache-spec/\(file)"), "cannot read \(file)")
            for test in suite.root["tests"]?.elements ?? [] { seen.insert(Self.caseID(file, test)) }
        }
        let unknown = Set(try Self.skips().keys).subtracting(seen)
        #expect(unknown.isEmpty, "mustache-skips.txt names cases the suite does not have: \(unknown.sorted())")
    }
}
