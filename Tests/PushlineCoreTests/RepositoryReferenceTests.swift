import Foundation
import Testing

/// Every file of this repository that the deploy files (pipelines/deploy/*), the docs
/// (docs/**/*.md) and README.md name exists: a path from a top folder (`pipelines/winback.yaml`,
/// `scripts/slurm-check`, `docs/resume.md`, `Sources/…`) or a relative Markdown link
/// (`[resume.md](resume.md)`). The deploy files once ran a pipeline that was not shipped
/// (issue 36); an operator following a doc to a missing file trips the same way.
@Suite struct RepositoryReferenceTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The top folders a repository path starts with.
    static let topFolders = ["pipelines", "docs", "scripts", "Sources", "Tests", "Benchmarks", "Fuzz"]

    /// The files read, relative to the root: every file in pipelines/deploy/, every Markdown file
    /// under docs/, and README.md.
    static func referencingFiles() throws -> [String] {
        let manager = FileManager.default
        let deploy = try manager.contentsOfDirectory(atPath: root.appendingPathComponent("pipelines/deploy").path)
            .filter { !$0.hasPrefix(".") }.map { "pipelines/deploy/" + $0 }
        var docs: [String] = []
        let docsFolder = root.appendingPathComponent("docs").path
        for case let relative as String in manager.enumerator(atPath: docsFolder)! where relative.hasSuffix(".md") {
            docs.append("docs/" + relative)
        }
        return (deploy + docs.sorted() + ["README.md"]).filter { !$0.isEmpty }
    }

    /// Paths starting at a top folder, not inside a longer path or word
    /// (`/shared/campaigns/pipelines/winback.yaml` is not this repository's), ending on a letter
    /// or digit (a sentence's full stop is not part of the path).
    static func repositoryPaths(in text: String) -> [String] {
        let folders = topFolders.joined(separator: "|")
        let pattern = try! Regex("(?:^|[^\\w./-])((?:\(folders))/[\\w./-]*\\w)")
        return text.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
    }

    /// Relative Markdown link targets (`[x](resume.md#anchor)` → `resume.md`); URLs and
    /// in-page anchors are not files.
    static func linkTargets(in text: String) -> [String] {
        text.matches(of: /\]\(([^)\s#]+)(?:#[^)]*)?\)/).map { String($0.output.1) }
            .filter { !$0.contains("://") && !$0.hasPrefix("mailto:") }
    }

    @Test func thePatternsFindPathsAndNothingElse() {
        #expect(Self.repositoryPaths(in: "run `pipelines/winback.yaml`, see docs/shards.md.") == ["pipelines/winback.yaml", "docs/shards.md"])
        #expect(Self.repositoryPaths(in: "PUSHLINE_PIPELINE=/shared/campaigns/pipelines/winback.yaml") == [])
        #expect(Self.repositoryPaths(in: "pipelines/deploy/ has three files") == ["pipelines/deploy"])
        #expect(Self.linkTargets(in: "[a](resume.md#x), [b](https://example.com/a.md), [c](../README.md)") == ["resume.md", "../README.md"])
    }

    @Test func everyReferencedRepositoryFileExists() throws {
        let files = try Self.referencingFiles()
        #expect(files.contains("pipelines/deploy/kubernetes-indexed-job.yaml") && files.contains("docs/shards.md"), "\(files)")
        var checked = 0
        for file in files {
            let url = Self.root.appendingPathComponent(file)
            // A binary file (none today) names no paths.
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            for path in Self.repositoryPaths(in: text) {
                checked += 1
                #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path), "\(file) names \(path), which does not exist")
            }
            guard file.hasSuffix(".md") else { continue }
            let folder = url.deletingLastPathComponent()
            for target in Self.linkTargets(in: text) {
                checked += 1
                let resolved = folder.appendingPathComponent(target).standardizedFileURL.path
                #expect(FileManager.default.fileExists(atPath: resolved), "\(file) links to \(target), which does not exist")
            }
        }
        #expect(checked > 50, "only \(checked) references found: the patterns no longer match the files")
    }

    /// The campaign the three scheduler files run is shipped.
    @Test func theDeployFilesCampaignIsShipped() throws {
        for file in ["kubernetes-indexed-job.yaml", "aws-batch-job-definition.json", "slurm-array.sh"] {
            let text = try String(contentsOf: Self.root.appendingPathComponent("pipelines/deploy/" + file), encoding: .utf8)
            #expect(Self.repositoryPaths(in: text).contains("pipelines/winback.yaml"), "\(file) names the campaign it runs")
        }
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("pipelines/winback.yaml").path))
    }
}
