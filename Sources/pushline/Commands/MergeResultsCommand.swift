import ArgumentParser
import Foundation
import PushlineCommandLine
import PushlineRuntime

/// `pushline merge-results DIR…`: one summary for a campaign run as shards.
struct MergeResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-results",
        abstract: "Combine the summaries of a campaign's shards (run with --shard) into one.",
        discussion: """
        Checks that the folders are the finished shards of one campaign (same campaign, mode, \
        input and shard count; every shard once) and that they partition it (each shard's own \
        devices add up to the devices every shard read), then prints the merged summary.json, \
        or writes it to --output. The results files stay in the shards' folders \
        (docs/shards.md). Exit 12 when the folders do not match; a shard that has not finished \
        (stopped, failed, or killed: no summary.json beside its checkpoint.json) is named, with \
        how to resume it.
        """
    )

    @Argument(help: ArgumentHelp("The shards' output folders.", valueName: "dir"))
    var folders: [String]

    @Option(help: ArgumentHelp("Write the merged summary to this file instead of standard output.", valueName: "file"))
    var output: String?

    func run() throws {
        let merged: [String: Any]
        do {
            merged = try ShardMerge.merge(folders: folders)
        } catch {
            Console.fail(error.description)
            throw ExitCode(.shardsDoNotMatch)
        }
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: merged, options: [.prettyPrinted, .sortedKeys]) + Data([0x0A])
        } catch {
            Console.fail("the merged summary could not be encoded: \(error)")
            throw ExitCode(.internalError)
        }
        if let output {
            do {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                Console.fail("\(output): cannot be written: \(error.localizedDescription)")
                throw ExitCode(.outputError)
            }
        } else {
            try Console.bytes(Array(data))
        }
    }
}
