import ArgumentParser
import Foundation
import PushlineRuntime

/// `--shard I/N` or `--shard-count N`: one process of several that run one campaign
/// (docs/shards.md).
struct ShardOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Take only shard INDEX of COUNT (from 0) of the recipients, by a stable hash of their id; each provider's rate is divided by COUNT.", valueName: "index/count"))
    var shard: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Run as one of COUNT shards, the index taken from JOB_COMPLETION_INDEX (Kubernetes), AWS_BATCH_JOB_ARRAY_INDEX or SLURM_ARRAY_TASK_ID.", valueName: "count"))
    var shardCount: Int?

    func validate() throws {
        _ = try resolved()
    }

    /// The shard this process runs (the scheduler's index from this process's environment).
    func resolved() throws -> AudienceShard? {
        try resolved(environment: ProcessInfo.processInfo.environment)
    }

    /// The shard this process runs, or nil for the whole campaign.
    func resolved(environment: [String: String]) throws -> AudienceShard? {
        if shard != nil, shardCount != nil {
            throw ValidationError("--shard and --shard-count cannot both be given: --shard names the index itself")
        }
        do throws(AudienceShard.Invalid) {
            if let shard { return try AudienceShard(parsing: shard) }
            if let shardCount { return try AudienceShard(count: shardCount, environment: environment) }
            return nil
        } catch {
            throw ValidationError(error.description)
        }
    }
}
