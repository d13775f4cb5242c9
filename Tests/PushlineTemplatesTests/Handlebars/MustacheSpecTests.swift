import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// The Mustache core spec (`/work/shared/testdata/mustache-spec`), run as Handlebars runs it:
/// HTML escaping on and `compat` name resolution (a name missing from the current context is
/// found in an enclosing one).
@Suite struct MustacheSpecTests {
    /// Files whose every case must pass.
    static let required = ["interpolation.json", "sections.json", "inverted.json", "comments.json", "partials.json"]

    static func run(_ file: String) throws -> (passed: Int, failed: [String], skipped: [String])? {
        guard let suite = HandlebarsHarness.loadSuite("mustache-spec/\(file)") else { return nil }
        var passed = 0
        var failed: [String] = []
        var skipped: [String] = []
        for test in suite.root["tests"]?.elements ?? [] {
            let name = test["name"]?.stringValue ?? "?"
            let template = try #require(test["template"]?.stringValue)
            // Set-delimiter tags are optional in Pushline (not a campaign feature).
            if template.contains("{{=") || (HandlebarsHarness.snippets(test["partials"])?.values.contains { $0.contains("{{=") } ?? false) {
                skipped.append("\(file): \(name) — set-delimiter tags are not supported")
                continue
            }
            let options = TemplateOptions(htmlEscape: true, snippets: HandlebarsHarness.snippets(test["partials"]) ?? [:])
            let data = try #require(test["data"])
            let outcome = HandlebarsHarness.run(template, data, options: options, compat: true)
            if outcome.text == test["expected"]?.stringValue {
                passed += 1
            } else {
                failed.append("\(file): \(name)\n    template: \(template.debugDescription)\n    expected: \(test["expected"]?.stringValue?.debugDescription ?? "?")\n    got: \(outcome)")
            }
        }
        return (passed, failed, skipped)
    }

    @Test(arguments: required)
    func coreSpec(file: String) throws {
        guard SharedTestData.directory != nil else {
            print("mustache-spec: skipped, shared test data (../shared) not found")
            return
        }
        let result = try #require(try Self.run(file), "cannot read \(file)")
        print("mustache-spec \(file): \(result.passed) passed, \(result.failed.count) failed, \(result.skipped.count) skipped")
        for failure in result.failed { print("mustache-spec FAIL \(failure)") }
        #expect(result.failed.isEmpty)
        #expect(result.skipped.isEmpty)
    }

    /// Set delimiters are optional: run what does not use them and report the rest.
    @Test func delimiters() throws {
        guard SharedTestData.directory != nil else {
            print("mustache-spec: skipped, shared test data (../shared) not found")
            return
        }
        let result = try #require(try Self.run("delimiters.json"), "cannot read delimiters.json")
        print("mustache-spec delimiters.json: \(result.passed) passed, \(result.failed.count) failed, \(result.skipped.count) skipped")
        for skip in result.skipped { print("mustache-spec SKIP \(skip)") }
        for failure in result.failed { print("mustache-spec FAIL \(failure)") }
        #expect(result.failed.isEmpty)
    }
}
