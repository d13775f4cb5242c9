public import PushlineCore
import PushlineDelivery

/// Which part of the recipients a run takes (`--shard`, `--shard-count`), as the command line
/// names it.
public typealias AudienceShard = PushlineCore.AudienceShard

extension RunMode {
    /// What one shard of `shard.count` sends at: each provider's rate (and burst) divided by the
    /// shard count, so the shards together keep the campaign's configured rate. Webhook channels
    /// each have their own rate: each is divided too.
    public func sharded(_ shard: AudienceShard) -> RunMode {
        guard case .send(var configurations, let validateOnly) = self, shard.count > 1 else { return self }
        for index in configurations.indices {
            configurations[index].settings.rate = configurations[index].settings.rate.divided(by: shard.count)
            if case .webhooks(var channels) = configurations[index].credentials {
                for channel in channels.indices {
                    channels[channel].settings.rate = channels[channel].settings.rate.divided(by: shard.count)
                }
                configurations[index].credentials = .webhooks(channels)
            }
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
