import Foundation
import PushlineCore
@testable import PushlineRuntime
import Testing

/// `template render`'s work, outside the command: the rendered bytes, or a failure with the
/// exit code docs/exit-codes.md gives it.
@Suite("Template trial: render outside a campaign")
struct TemplateTrialTests {
    static func trial(_ source: TemplateTrial.Source, _ input: TemplateTrial.Input, strict: Bool = false) -> TemplateTrial {
        TemplateTrial(source: source, input: input, dialect: .liquid, strict: strict, htmlEscape: false)
    }

    static func failure(_ trial: TemplateTrial) -> TemplateTrial.Failure? {
        do {
            _ = try trial.render()
            return nil
        } catch {
            return error
        }
    }

    @Test func rendersJSONData() throws {
        let bytes = try Self.trial(.text("Hi {{ customer.first_name }}"), .json(#"{"customer":{"first_name":"Zoë"}}"#)).render()
        #expect(String(decoding: bytes, as: UTF8.self) == "Hi Zoë")
    }

    @Test func eachFailureHasItsExitCode() throws {
        let unreadable = Self.failure(Self.trial(.file("/nonexistent/t.liquid"), .json("{}")))
        #expect(unreadable?.exit == .invalidPipeline)
        #expect(unreadable?.description.hasPrefix("cannot read the template:") == true)

        let invalid = Self.failure(Self.trial(.text("{{ x"), .json("{}")))
        #expect(invalid?.exit == .invalidPipeline)
        #expect(invalid?.description == "the template is invalid")
        #expect(invalid?.detail?.hasPrefix("template:1:") == true)

        #expect(Self.failure(Self.trial(.text("x"), .json("{"))).map(\.exit) == .usage)
        #expect(Self.failure(Self.trial(.text("x"), .json("[1]")))?.description == "the data must be one JSON object, like an audience line")
        #expect(Self.failure(Self.trial(.text("{{ missing }}"), .json("{}"), strict: true)).map(\.exit) == .renderFailed)
        #expect(Self.failure(Self.trial(.text("x"), .audienceLine(1, path: "/nonexistent/a.ndjson"))).map(\.exit) == .inputError)
    }

    @Test func readsAnAudienceLine() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trial-\(UUID().uuidString).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{\"id\":\"a\"}\n\n{\"id\":\"c\"}\n".utf8).write(to: URL(fileURLWithPath: path))
        let bytes = try Self.trial(.text("{{ id }}"), .audienceLine(3, path: path)).render()
        #expect(String(decoding: bytes, as: UTF8.self) == "c")
    }
}
