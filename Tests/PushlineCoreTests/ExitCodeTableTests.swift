import Foundation
import PushlineCore
import Testing

/// docs/exit-codes.md is the one table of exit codes; these tests keep it and `PushlineExit`
/// equal, and every code's meaning single.
@Suite struct ExitCodeTableTests {
    static let table = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/exit-codes.md")

    /// The `| Code | Name | Cause |` rows of the table: (code, name without backticks).
    static func documentedRows() throws -> [(code: Int32, name: String)] {
        let text = try String(contentsOf: table, encoding: .utf8)
        var rows: [(Int32, String)] = []
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("|"), cells.count >= 4 else {
                if inTable { break }
                continue
            }
            if cells[1] == "Code" { inTable = true; continue }
            guard inTable, let code = Int32(cells[1]) else { continue }
            rows.append((code, cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`"))))
        }
        return rows
    }

    @Test func theDocumentedTableIsExactlyTheType() throws {
        let rows = try Self.documentedRows()
        #expect(rows.count == PushlineExit.allCases.count, "\(rows.count) rows for \(PushlineExit.allCases.count) cases")
        for row in rows {
            let exit = PushlineExit(rawValue: row.code)
            #expect(exit != nil, "docs/exit-codes.md documents \(row.code), which PushlineExit does not have")
            #expect(exit?.name == row.name, "code \(row.code): documented as \(row.name), named \(exit?.name ?? "nothing")")
        }
        for exit in PushlineExit.allCases {
            #expect(rows.contains { $0.code == exit.rawValue }, "\(exit) is not in docs/exit-codes.md")
        }
    }

    @Test func everyCodeAndNameIsDistinct() throws {
        let rows = try Self.documentedRows()
        #expect(Set(rows.map(\.code)).count == rows.count, "a code documented twice")
        #expect(Set(rows.map(\.name)).count == rows.count, "a name documented twice")
        #expect(Set(PushlineExit.allCases.map(\.name)).count == PushlineExit.allCases.count)
    }

    /// The codes scripts relied on before the type existed keep their meaning.
    @Test func theLongStandingCodesKeepTheirNumbers() {
        #expect(PushlineExit.ok.rawValue == 0)
        #expect(PushlineExit.invalidPipeline.rawValue == 2)
        #expect(PushlineExit.completedWithRejects.rawValue == 3)
        #expect(PushlineExit.inputError.rawValue == 4)
        #expect(PushlineExit.outputError.rawValue == 5)
        #expect(PushlineExit.stopped.rawValue == 6)
        #expect(PushlineExit.usage.rawValue == 64)
        // Shell status: 0...255, and nothing above 125 (126+ mean "not executable", signals).
        #expect(PushlineExit.allCases.allSatisfy { (0...125).contains($0.rawValue) })
    }
}
