import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// The Handlebars spec cases (handlebars-spec, `/work/shared/testdata/handlebars-spec/*.json`).
///
/// Every case runs except those listed, with a reason, in `Resources/handlebars-skips.txt`
/// (JavaScript helpers, decorators, runtime data, compile options Pushline does not offer), and
/// every case that runs must pass. A case passes when the output equals `expected`, or when it
/// expects an exception and the template fails to compile or render. Without `../shared` the
/// test is reported as skipped.
@Suite struct HandlebarsSpecTests {
    static let files = ["basic.json", "blocks.json", "builtins.json", "data.json", "partials.json", "whitespace-control.json"]

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
            guard fields.count == 2, !fields[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                Issue.record("handlebars-skips.txt: '\(line)' is not `id<TAB>reason`")
                continue
            }
            out[String(fields[0])] = String(fields[1])
        }
        return out
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "handlebars-spec needs ../shared/testdata, which is absent"))
    func handlebarsSpec() throws {
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
        print("handlebars-spec: \(passed) passed, \(failed) failed, \(skipped) skipped (listed with reasons in handlebars-skips.txt)")
        for failure in failures { Issue.record("handlebars-spec case failed: \(failure)") }
        #expect(passed > 0)
    }
}
