import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// The Handlebars spec cases (handlebars-spec, `/work/shared/testdata/handlebars-spec/*.json`).
///
/// Every case runs except those listed, with a reason, in `Resources/handlebars-skips.txt`
/// (JavaScript helpers, decorators, runtime data, compile options Pushline does not offer).
/// A case passes when the output equals `expected`, or when it expects an exception and the
/// template fails to compile or render.
@Suite struct HandlebarsSpecTests {
    static let files = ["basic.json", "blocks.json", "builtins.json", "data.json", "partials.json", "whitespace-control.json"]
    static let requiredPassRate = 0.90

    static func caseID(file: String, _ test: JSONValue) -> String {
        let parts = [file, test["description"]?.stringValue ?? "", test["it"]?.stringValue ?? "", test["number"]?.stringValue ?? "00"]
        return parts.joined(separator: ":")
    }

    static func skips() throws -> [String: String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Resources/handlebars-skips.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", maxSplits: 1)
            guard fields.count == 2 else { continue }
            out[String(fields[0])] = String(fields[1])
        }
        return out
    }

    @Test func handlebarsSpec() throws {
        guard SharedTestData.directory != nil else {
            print("handlebars-spec: skipped, shared test data (../shared) not found")
            return
        }
        let skips = try Self.skips()
        var passed = 0, failed = 0, skipped = 0
        var seen = Set<String>()
        var failures: [String] = []
        for file in Self.files {
            let suite = try #require(HandlebarsHarness.loadSuite("handlebars-spec/\(file)"), "cannot read \(file)")
            for test in suite.root.elements {
                let id = Self.caseID(file: file, test)
                #expect(seen.insert(id).inserted, "duplicate case id \(id)")
                if skips[id] != nil { skipped += 1; continue }
                let template = try #require(test["template"]?.stringValue)
                let data = test["data"] ?? suite.root   // never absent in the suite
                let snippets = HandlebarsHarness.snippets(test["partials"]) ?? [:]
                let options = TemplateOptions(htmlEscape: true, snippets: snippets)
                let compat = test["compileOptions"]?["compat"]?.boolValue ?? false
                let outcome = HandlebarsHarness.run(template, data, options: options, compat: compat)
                let ok: Bool
                if test["exception"] != nil {
                    ok = outcome.text == nil
                } else {
                    ok = outcome.text == test["expected"]?.stringValue
                }
                if ok {
                    passed += 1
                } else {
                    failed += 1
                    failures.append("\(id)\n    template: \(template.debugDescription)\n    expected: \(test["expected"]?.stringValue?.debugDescription ?? "exception")\n    got: \(outcome)")
                }
            }
        }
        let unknownSkips = Set(skips.keys).subtracting(seen)
        #expect(unknownSkips.isEmpty, "skip list names cases that do not exist: \(unknownSkips.sorted())")
        let rate = Double(passed) / Double(max(1, passed + failed))
        print("handlebars-spec: \(passed) passed, \(failed) failed, \(skipped) skipped (pass rate \(String(format: "%.1f", rate * 100))% of cases run)")
        for failure in failures { print("handlebars-spec FAIL \(failure)") }
        #expect(rate >= Self.requiredPassRate, "pass rate \(rate) below \(Self.requiredPassRate)")
    }
}
