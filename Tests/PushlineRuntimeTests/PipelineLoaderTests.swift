import PushlineCore
import PushlineRuntime
import Testing

@Suite("Pipeline files")
struct PipelineLoaderTests {
    @Test func yamlPositionsAreOneBasedLineAndColumn() throws {
        let root = try PipelineLoader.parse(yaml: "name: x\nnotification:\n  alert: hi\n", path: "p.yaml")
        let alert = try #require(root["notification"]?["alert"])
        #expect(alert.line == 3 && alert.column == 10)
        #expect(alert.stringValue == "hi")
    }

    @Test func plainScalarsAreTypedQuotedOnesAreStrings() throws {
        let root = try PipelineLoader.parse(yaml: "a: 1\nb: \"1\"\nc: true\nd: 'true'\ne: 0.5\nf: ~\ng: 1.0.2\n", path: "p.yaml")
        #expect(root["a"]?.intValue == 1)
        #expect(root["b"]?.stringValue == "1")
        #expect(root["c"]?.boolValue == true)
        #expect(root["d"]?.stringValue == "true")
        #expect(root["e"]?.numberValue == 0.5)
        #expect(root["f"]?.isNull == true)
        #expect(root["g"]?.stringValue == "1.0.2")
    }

    @Test func brokenYAMLNamesTheLine() {
        do {
            _ = try PipelineLoader.parse(yaml: "name: x\nnotification: [unclosed\n", path: "p.yaml")
            Issue.record("broken YAML accepted")
        } catch {
            #expect(error.description.hasPrefix("p.yaml:"))
            #expect(error.diagnostics.first?.line ?? 0 > 0, "\(error)")
        }
    }
}
