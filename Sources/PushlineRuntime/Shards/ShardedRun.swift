public import PushlineCore
import PushlineDelivery

extension RunMode {
    /// What one shard of `shard.count` sends at: each provider's rate (and burst) divided by the
    /// shard count, so the shards together keep the campaign's configured rate.
    public func sharded(_ shard: AudienceShard) -> RunMode {
        guard case .send(var configurations, let validateOnly) = self, shard.count > 1 else { return self }
        for index in configurations.indices {
            configurations[index].settings.rate = configurations[index].settings.rate.divided(by: shard.count)
        }
        return .send(configurations, validateOnly: validateOnly)
    }
}

enum ShardSummary {
    /// `summary.json`'s `shard`: which part of the campaign this run took.
    static func entry(_ shard: AudienceShard, counts: RunCounts) -> [String: Any] {
        [
            "index": shard.index,
            "count": shard.count,
            "hash": "fnv1a64(recipient id) mod count",
            "lines_other_shard": counts.linesOtherShard,
        ]
    }
}
