import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// Runs the golden-liquid conformance suite (shared/testdata/golden-liquid) over every case whose
/// tags and filters Pushline's Liquid supports; at least 95% of those must pass.
@Suite struct LiquidGoldenTests {
    /// Tags (golden-liquid's own labels) of the features in Pushline's Liquid.
    static let supported: Set<String> = {
        var s: Set<String> = [
            "if tag", "unless tag", "case tag", "for tag", "break tag", "continue tag", "assign tag",
            "capture tag", "comment tag", "echo tag", "liquid tag", "increment tag", "decrement tag",
            "include tag", "render tag", "# tag",
            // Not tags: literal and mode labels.
            "blank", "empty", "absent", "strict", "strict2", "utc",
        ]
        for f in LiquidFilter.allCases { s.insert("\(f.rawValue) filter") }
        return s
    }()

    static func skips() -> [String: String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/liquid-skips.txt")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { out[String(parts[0])] = String(parts[1]) }
        }
        return out
    }

    @Test func goldenLiquid() throws {
        guard let dir = SharedTestData.directory else {
            print("skipping golden-liquid: shared test data not found beside the project")
            return
        }
        let data = try Data(contentsOf: dir.appendingPathComponent("testdata/golden-liquid/golden_liquid.json"))
        let suite = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cases = try #require(suite["tests"] as? [[String: Any]])
        let skips = Self.skips()
        var passed = 0, failed = 0, skipped = 0, outOfScope = 0
        var failures: [String] = []

        for testCase in cases {
            let name = testCase["name"] as? String ?? "?"
            let tags = testCase["tags"] as? [String] ?? []
            if !tags.allSatisfy(Self.supported.contains) { outOfScope += 1; continue }
            if skips[name] != nil { skipped += 1; continue }
            let template = testCase["template"] as? String ?? ""
            let options = TemplateOptions(snippets: testCase["templates"] as? [String: String] ?? [:])
            let context = LiquidTestJSON.value(testCase["data"] ?? [String: Any]())
            var accepted: [String] = []
            if let r = testCase["result"] as? String { accepted.append(r) }
            if let rs = testCase["results"] as? [String] { accepted += rs }
            let invalid = testCase["invalid"] as? Bool ?? false

            var outcome: Result<String, any Error>
            do {
                let compiled = try LiquidTemplate(compiling: template, options: options)
                var output = RenderOutput(mode: .raw, limit: 1 << 20)
                try compiled.render(root: context, into: &output)
                outcome = .success(String(decoding: output.bytes, as: UTF8.self))
            } catch {
                outcome = .failure(error)
            }
            switch (outcome, invalid) {
            case (.failure, true): passed += 1
            case (.success(let text), false) where accepted.contains(text): passed += 1
            case (.success(let text), _):
                failed += 1
                failures.append("\(name): got \(text.debugDescription), want \(invalid ? "an error" : accepted.debugDescription)")
            case (.failure(let error), false):
                failed += 1
                failures.append("\(name): error \(error), want \(accepted.debugDescription)")
            }
        }
        for f in failures { print("golden-liquid FAIL \(f)") }
        let run = passed + failed
        print("golden-liquid: \(passed) passed, \(failed) failed, \(skipped) skipped on purpose, \(outOfScope) out of scope (tags/filters not in Pushline's Liquid)")
        #expect(run > 0)
        #expect(Double(passed) >= 0.95 * Double(run), "golden-liquid pass rate \(passed)/\(run) is below 95%")
    }
}
