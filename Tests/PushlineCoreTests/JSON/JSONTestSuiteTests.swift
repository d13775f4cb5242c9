import Foundation
import PushlineCore
import PushlineTestSupport
import Testing

/// Nicolas Seriot's JSONTestSuite (test_parsing): `y_` must parse, `n_` must be refused, `i_` may
/// go either way but must not crash. Every file runs; without `../shared` the tests are reported
/// as skipped.
@Suite(.enabled(if: SharedTestData.isAvailable, "JSONTestSuite needs ../shared/testdata, which is absent"))
struct JSONTestSuiteTests {
    static let directory = SharedTestData.directory?.appendingPathComponent("testdata/JSONTestSuite/test_parsing")

    @Test func everyFileOfTheSuite() throws {
        let directory = try #require(Self.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
        #expect(names.count > 300)

        var accepted = 0, rejected = 0
        var implementationAccepted = 0, implementationRejected = 0
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            let result = Result { () throws(JSONParseError) in try JSONDocument(bytes: bytes) }
            switch (name.first, result) {
            case ("y", .success):
                accepted += 1
            case ("y", .failure(let error)):
                Issue.record("\(name) must be accepted: \(error)")
            case ("n", .failure(let error)):
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(name): offset \(error.offset) outside the text")
            case ("n", .success):
                Issue.record("\(name) must be rejected")
            case ("i", .success):
                implementationAccepted += 1
            case ("i", .failure):
                implementationRejected += 1
            default:
                Issue.record("unexpected file name \(name)")
            }
        }
        print("JSONTestSuite: \(accepted) y_ accepted, \(rejected) n_ rejected, i_: \(implementationAccepted) accepted, \(implementationRejected) rejected, of \(names.count) files")
        #expect(accepted == names.filter { $0.hasPrefix("y_") }.count)
        #expect(rejected == names.filter { $0.hasPrefix("n_") }.count)
    }

    /// Every accepted `y_` document agrees with Foundation on its kinds and strings (each file
    /// is compared: one Foundation cannot read is a failure, not a silent skip).
    @Test func acceptedFilesAgreeWithFoundation() throws {
        let directory = try #require(Self.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("y_") }.sorted()
        #expect(!names.isEmpty)
        for name in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            guard let oracle = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
                Issue.record("\(name): JSONSerialization cannot read it, so it cannot be compared")
                continue
            }
            let document = try JSONDocument(bytes: [UInt8](data))
            #expect(FoundationOracle.matches(document.root, oracle), "\(name) differs from JSONSerialization")
        }
        print("JSONTestSuite: \(names.count) y_ files compared with JSONSerialization")
    }
}
