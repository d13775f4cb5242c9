import Foundation
import PushlineCore
import PushlineTestSupport
import Testing

/// Nicolas Seriot's JSONTestSuite (test_parsing): `y_` must parse, `n_` must be refused, `i_` may
/// go either way but must not crash.
@Suite struct JSONTestSuiteTests {
    static let directory = SharedTestData.directory?.appendingPathComponent("testdata/JSONTestSuite/test_parsing")

    @Test func everyFileOfTheSuite() throws {
        guard let directory = Self.directory else {
            print("JSONTestSuite: skipped, no shared test data (../shared/testdata) beside the project")
            return
        }
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

    /// Every accepted `y_` document agrees with Foundation on its kinds and strings.
    @Test func acceptedFilesAgreeWithFoundation() throws {
        guard let directory = Self.directory else {
            print("JSONTestSuite: skipped, no shared test data (../shared/testdata) beside the project")
            return
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("y_") }
        var compared = 0
        for name in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            guard let oracle = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { continue }
            let document = try JSONDocument(bytes: [UInt8](data))
            #expect(FoundationOracle.matches(document.root, oracle), "\(name) differs from JSONSerialization")
            compared += 1
        }
        print("JSONTestSuite: \(compared) of \(names.count) y_ files compared with JSONSerialization")
        #expect(compared > 80)
    }
}
