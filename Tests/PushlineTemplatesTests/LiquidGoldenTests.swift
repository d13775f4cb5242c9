import Foundation
import PushlineCore
import PushlineTestSupport
import Testing
@testable import PushlineTemplates

/// Runs the golden-liquid conformance suite (shared/testdata/golden-liquid): every case not in
/// `Resources/liquid-skips.txt` (each listed with its reason) must pass. Without `../shared`
/// the test is reported as skipped.
@Suite struct LiquidGoldenTests {
    /// Skipped cases by name, with their reasons.
    static func skips() throws -> [String: String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/liquid-skips.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, !parts[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                Issue.record("liquid-skips.txt: '\(line)' is not `name<TAB>reason`")
                continue
            }
            out[String(parts[0])] = String(parts[1])
        }
        return out
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "golden-liquid needs ../shared/testdata, which is absent"))
    func goldenLiquid() throws {
        let dir = try #require(SharedTestData.directory)
        // The suite is read with the project's own JSON reader: each case's `data` is the record,
        // rendered through the public `render(record:)` path, members in their written order.
        let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent("testdata/golden-liquid/golden_liquid.json")))
        let suite = try JSONDocument(bytes: bytes).root
        let cases = try #require(suite["tests"]).elements
        let emptyRecord = try JSONDocument(parsing: "{}").root
        let skips = try Self.skips()
        var passed = 0, skipped = 0
        var failures: [String] = []
        var seen = Set<String>()

        for testCase in cases {
            let name = testCase["name"]?.stringValue ?? "?"
            #expect(seen.insert(name).inserted, "duplicate case name \(name)")
            if skips[name] != nil { skipped += 1; continue }
            let template = testCase["template"]?.stringValue ?? ""
            var snippets: [String: String] = [:]
            for member in testCase["templates"]?.members ?? [] {
                snippets[member.key.stringValue ?? ""] = member.value.stringValue ?? ""
            }
            let options = TemplateOptions(snippets: snippets)
            let record = testCase["data"] ?? emptyRecord
            var accepted: [String] = []
            if let r = testCase["result"]?.stringValue { accepted.append(r) }
            accepted += testCase["results"]?.elements.compactMap(\.stringValue) ?? []
            let invalid = testCase["invalid"]?.boolValue ?? false

            var outcome: Result<String, any Error>
            do {
                let compiled = try TemplateCompiler.compile(template, dialect: .liquid, options: options)
                var output = RenderOutput(mode: .raw, limit: 1 << 20)
                try compiled.render(record: record, into: &output)
                outcome = .success(String(decoding: output.bytes, as: UTF8.self))
            } catch {
                outcome = .failure(error)
            }
            switch (outcome, invalid) {
            case (.failure, true): passed += 1
            case (.success(let text), false) where accepted.contains(text): passed += 1
            case (.success(let text), _):
                failures.append("\(name): template \(template.debugDescription) gave \(text.debugDescription), want \(invalid ? "an error" : accepted.debugDescription)")
            case (.failure(let error), false):
                failures.append("\(name): template \(template.debugDescription) failed with \(error), want \(accepted.debugDescription)")
            }
        }
        print("golden-liquid: \(passed) passed, \(failures.count) failed, \(skipped) skipped (listed with reasons in liquid-skips.txt), of \(cases.count)")
        for failure in failures { Issue.record("golden-liquid case failed: \(failure)") }
        let unknown = Set(skips.keys).subtracting(seen)
        #expect(unknown.isEmpty, "liquid-skips.txt names cases the suite does not have: \(unknown.sorted())")
        #expect(passed > 0)
    }
}
