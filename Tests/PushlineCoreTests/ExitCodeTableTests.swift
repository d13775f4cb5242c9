import Foundation
import PushlineCore
import PushlineTestSupport
import Testing

/// `PushlineExit` is the one table of exit codes (each code's name and one-line `meaning`); these
/// tests keep docs/exit-codes.md, README.md's "Exit codes" list and `pushline --help` equal to it,
/// and every code's meaning single.
@Suite struct ExitCodeTableTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let table = root.appendingPathComponent("docs/exit-codes.md")
    static let binary = root.appendingPathComponent(".build/debug/pushline").path

    /// The `| Code | Name | Meaning | Cause |` rows of the table: (code, name without backticks,
    /// meaning).
    static func documentedRows() throws -> [(code: Int32, name: String, meaning: String)] {
        let text = try String(contentsOf: table, encoding: .utf8)
        var rows: [(Int32, String, String)] = []
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("|"), cells.count >= 5 else {
                if inTable { break }
                continue
            }
            if cells[1] == "Code" { inTable = true; continue }
            guard inTable, let code = Int32(cells[1]) else { continue }
            rows.append((code, cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[3]))
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
            #expect(exit?.meaning == row.meaning, "code \(row.code): docs/exit-codes.md means '\(row.meaning)', the code '\(exit?.meaning ?? "nothing")'")
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

    // MARK: README.md and --help

    /// `0 done, 1 internal error (a bug), …` back into (code, meaning) pairs: `text` from its first
    /// `0 ` to the end, split before every `, <digits> `. Whitespace (a wrapped line) counts as
    /// one space.
    static func parseList(_ text: String) -> [(code: Int32, meaning: String)] {
        let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.split(separator: /, (?=[0-9]+ )/).compactMap { item in
            guard let match = item.wholeMatch(of: /([0-9]+) (.+)/), let code = Int32(match.1) else { return nil }
            return (code, String(match.2))
        }
    }

    static func expectEqualToTheType(_ listed: [(code: Int32, meaning: String)], _ source: String) {
        let type = PushlineExit.allCases.map { ($0.rawValue, $0.meaning) }
        #expect(listed.map(\.code) == type.map(\.0), "\(source) lists \(listed.map(\.code)), PushlineExit has \(type.map(\.0))")
        for (code, meaning) in listed {
            let exit = PushlineExit(rawValue: code)
            #expect(exit?.meaning == meaning, "\(source): \(code) '\(meaning)', PushlineExit says '\(exit?.meaning ?? "no such code")'")
        }
    }

    /// The list is `PushlineExit.summary` and splits back into every case, in order.
    @Test func theSummaryListsEveryCase() {
        Self.expectEqualToTheType(Self.parseList(PushlineExit.summary), "PushlineExit.summary")
        #expect(PushlineExit.allCases.allSatisfy { $0.meaning.firstMatch(of: /, [0-9]/) == nil && !$0.meaning.contains("\n") && !$0.meaning.contains(".") })
    }

    /// README.md, "### Exit codes": the list after "(a test keeps it equal to the code): ", up to
    /// the paragraph's end.
    @Test func theReadmeListsTheTypesCodes() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.firstRange(of: "### Exit codes").map { readme[$0.upperBound...] })
        let paragraphs = section.split(separator: "\n\n", omittingEmptySubsequences: true)
        let paragraph = try #require(paragraphs.first { $0.contains("0 done") }, "README's Exit codes section lists the codes")
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let rest = try #require(paragraph.firstRange(of: "equal to the code): ").map { paragraph[$0.upperBound...] }, "\(paragraph)")
        // The list is one sentence: no meaning holds a full stop.
        let list = try #require(rest.split(separator: ".", maxSplits: 1).first)
        Self.expectEqualToTheType(Self.parseList(String(list)), "README.md")
    }

    /// The built binary's `pushline --help` (argument-parser wraps the discussion: lines joined).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: binary), "needs .build/debug/pushline (swift build --build-tests)"))
    func helpListsTheTypesCodes() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--help"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (data, _) = ChildProcess.readToEnd(output, errors)
        #expect(process.waitForExit().code == 0)
        let help = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let start = try #require(help.firstRange(of: "Exit codes (one cause each; docs/exit-codes.md): "), "\(help)")
        let end = try #require(help[start.upperBound...].firstRange(of: ". Every failure prints"), "\(help)")
        Self.expectEqualToTheType(Self.parseList(String(help[start.upperBound..<end.lowerBound])), "pushline --help")
    }
}
