import Foundation
import Testing

/// The scheduler files in pipelines/deploy/ only use `pushline run` options that exist, and each
/// runs as many shards as its array has tasks.
@Suite("Shards: the deploy manifests", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct DeployManifestTests {
    static let folder = PushlineBinary.root.appendingPathComponent("pipelines/deploy").path

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
    }

    /// The `--name` tokens of the `pushline run` invocation in `file`.
    static func runOptions(_ file: String) throws -> Set<String> {
        let text = try Self.text(file)
        let invocation: String
        switch file {
        case "kubernetes-indexed-job.yaml":
            // The container's `args:` list items.
            invocation = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- --") }.joined(separator: " ")
        case "aws-batch-job-definition.json":
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let command = try #require((json["containerProperties"] as? [String: Any])?["command"] as? [String])
            invocation = try #require(command.last?.components(separatedBy: "pushline run").last)
        default:
            // From `exec pushline run` to the end of its continued lines.
            let lines = text.split(separator: "\n").drop { !$0.contains("pushline run") }
            var taken: [Substring] = []
            for line in lines {
                taken.append(line)
                if !line.hasSuffix("\\") { break }
            }
            invocation = taken.joined(separator: " ")
        }
        var options = Set<String>()
        let spaced = invocation.replacingOccurrences(of: "=", with: " ").replacingOccurrences(of: "\"", with: " ")
        for token in spaced.split(whereSeparator: { $0 == " " || $0 == "\n" }) where token.hasPrefix("--") && token.count > 2 {
            options.insert(String(token))
        }
        return options
    }

    @Test(arguments: ["kubernetes-indexed-job.yaml", "aws-batch-job-definition.json", "slurm-array.sh"])
    func usesOnlyOptionsPushlineRunHas(file: String) throws {
        let help = try PushlineBinary.run(["run", "--help"]).stdout
        let ours = try Self.runOptions(file)
        #expect(ours.isSuperset(of: ["--shard-count", "--output", "--audience"]), "\(ours)")
        for option in ours {
            #expect(help.contains(option + " "), "\(file) uses \(option), which pushline run does not have")
        }
    }

    @Test func eachArrayRunsAsManyShardsAsItHasTasks() throws {
        let kubernetes = try Self.text("kubernetes-indexed-job.yaml")
        #expect(kubernetes.contains("completions: 8") && kubernetes.contains("--shard-count=8"))
        let batch = try #require(try JSONSerialization.jsonObject(with: Data(Self.text("aws-batch-job-definition.json").utf8)) as? [String: Any])
        let parameters = try #require(batch["parameters"] as? [String: String])
        #expect(parameters["shards"] == "8")
        #expect((batch["_submit"] as? String)?.contains("size=8") == true)
        let slurm = try Self.text("slurm-array.sh")
        #expect(slurm.contains("#SBATCH --array=0-7") && slurm.contains("shards=8"))
    }
}
