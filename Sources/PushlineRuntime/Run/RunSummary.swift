import PushlineCore
import PushlineEncoding
import Foundation
import PushlineIO

/// `summary.json`: what a run did, in numbers that add up (see docs/output.md).
enum RunSummary {
    static func write(_ report: RunReport, campaign: Campaign, pipelinePath: String, startedAt: Date, to path: String) throws {
        let counts = report.counts
        var summary: [String: Any] = [
            "campaign": campaign.name,
            "pipeline": pipelinePath,
            "mode": report.mode,
            "status": report.status.rawValue,
            "exit_code": Int(report.exit.rawValue),
            "started_at": ISO8601DateFormatter().string(from: startedAt),
            "seconds": (report.seconds * 1000).rounded() / 1000,
            "input": [
                "path": report.source.path,
                "gzip": report.source.isGzip,
                "bytes_read": report.source.compressedBytes,
                "bytes_uncompressed": report.source.uncompressedBytes,
                "physical_lines": report.source.physicalLines,
            ] as [String: Any],
            "lines": [
                "read": counts.lines,
                "blank": counts.blankLines,
                "rejected": counts.linesRejected,
                "routed": counts.lines - counts.linesRejected,
            ],
            "devices": [
                "read": counts.devices,
                "written": counts.writtenTotal,
                "written_by_provider": Dictionary(uniqueKeysWithValues: counts.written.map { ($0.key.rawValue, $0.value) }),
                "rejected": counts.rejectedTotal,
                "rejected_by_reason": counts.rejected,
                "skipped": counts.skippedTotal,
                "skipped_by_reason": counts.skipped,
                "truncated": counts.truncated,
                // Outcomes of sending; zero in a dry run.
                "sent": counts.sentTotal,
                "sent_by_provider": Dictionary(uniqueKeysWithValues: counts.sent.map { ($0.key.rawValue, $0.value) }),
                "invalid_token": counts.invalidTokenTotal,
                "invalid_token_by_reason": counts.invalidTokens,
                "failed": counts.failedTotal,
                "failed_by_reason": counts.failed,
                "possible_duplicates": counts.possibleDuplicates,
                // A stopped run: devices read and not settled with their provider.
                "unsent": counts.unsentTotal,
                "unsent_by_reason": counts.unsent,
                "possibly_delivered": counts.possiblyDelivered,
            ] as [String: Any],
            "providers": providerTable(counts),
            "settled_through_line": report.settledThroughLine,
            "reconciled": report.reconciled,
            "files": Dictionary(uniqueKeysWithValues: report.files.map { ($0.name, $0.bytes) }),
        ]
        if report.seconds > 0 {
            // Devices written (dry run) or sent, per second of the whole run.
            summary["devices_per_second"] = devicesPerSecond(counts.writtenTotal + counts.sentTotal, seconds: report.seconds)
        }
        if report.mode == "send" {
            summary["validate_only"] = report.validateOnly
            summary["delivery"] = deliveryTable(report.delivery, counts: counts)
        }
        if let error = report.source.error {
            var entry: [String: Any] = ["code": error.code.rawValue, "message": error.description]
            if let offset = error.compressedOffset { entry["compressed_offset"] = offset }
            summary["input_error"] = entry
        }
        if let failure = report.failure { summary["failure"] = failure }
        if let resume = report.resume {
            summary["resume"] = [
                "runs": resume.runs, "after_line": resume.afterLine, "horizon_line": resume.horizonLine,
                "settled_from_records": resume.settledFromRecords,
            ]
        }
        if let shard = campaign.shard { summary["shard"] = ShardSummary.entry(shard, counts: counts) }
        if let experiment = campaign.experiment {
            summary["experiment"] = experimentEntry(experiment)
            summary["variants"] = variantTable(experiment, counts: counts)
        }
        if let quietHours = campaign.quietHours { summary["quiet_hours"] = QuietHoursSummary.entry(quietHours, counts: counts) }
        if let stop = report.stop {
            summary["stop"] = [
                "cause": stop.cause,
                "in_flight_cancelled": stop.immediateCause != nil,
                "cancel_cause": stop.immediateCause.map { $0 as Any } ?? NSNull(),
                "input_read_to_end": stop.inputReadToEnd,
                "drain_timeout_seconds": stop.drainTimeoutSeconds.map { $0 as Any } ?? NSNull(),
            ] as [String: Any]
        }
        var data = try JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(0x0A)
        // Through OutputFile like every result: a unique O_EXCL temporary, renamed only over a
        // regular file.
        var file = try OutputFile(path: path)
        try file.write(data)
        try file.close()
    }

    /// Sending runs, per provider: outcomes, the lane's attempts and retries, latency
    /// percentiles, the achieved rate, the lane's final rate and slowdowns, and why it stopped.
    static func deliveryTable(_ delivery: [ProviderDeliveryReport], counts: RunCounts) -> [String: Any] {
        var table: [String: Any] = [:]
        for provider in delivery {
            let lane = provider.lane
            let seconds = Double(provider.sendingTime.components.seconds) + Double(provider.sendingTime.components.attoseconds) / 1e18
            var latency: [String: Any] = ["count": provider.latency.count]
            for (name, p) in [("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99), ("max_ms", 1.0)] {
                if let value = provider.latency.percentileMicroseconds(p) {
                    latency[name] = milliseconds(value)
                } else {
                    latency[name] = NSNull()
                }
            }
            table[provider.provider.rawValue] = [
                "sent": provider.sent,
                "invalid_token": provider.invalidToken,
                "failed": provider.failed,
                "skipped": provider.skipped,
                "unsent": provider.unsent,
                "failed_by_reason": provider.failedByReason,
                "requests": provider.handed,
                "attempts": lane?.attempts ?? 0,
                "retries": lane?.retries ?? 0,
                "possible_duplicates": provider.possibleDuplicates,
                "tokens_replaced": provider.tokensReplaced,
                "latency": latency,
                "sending_seconds": (seconds * 1000).rounded() / 1000,
                "sent_per_second": (provider.sentPerSecond * 10).rounded() / 10,
                "final_rate_per_second": rounded(lane?.finalRatePerSecond ?? 0),
                "slowdowns": lane?.slowdowns ?? 0,
                "pauses": lane?.pauses ?? 0,
                "connections_opened": lane?.connectionsOpened ?? 0,
                "stopped": lane?.stoppedBecause.map { $0 as Any } ?? NSNull(),
            ] as [String: Any]
        }
        return table
    }

    /// Microseconds as milliseconds with three decimals.
    static func milliseconds(_ microseconds: UInt64) -> Double {
        Double(microseconds) / 1000
    }

    private static func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 10).rounded() / 10 : 0
    }

    /// Per provider (and `unrouted`, devices rejected before a provider was known): devices and
    /// each outcome; every row adds up (`devices = written + sent + invalid_token + rejected +
    /// failed + skipped + unsent`).
    static func providerTable(_ counts: RunCounts) -> [String: Any] {
        var table: [String: Any] = [:]
        for (provider, c) in counts.byProvider where !c.isZero { table[provider.rawValue] = row(c) }
        if !counts.unrouted.isZero { table["unrouted"] = row(counts.unrouted) }
        return table
    }

    /// One row of the provider and variant tables: devices and each outcome.
    static func row(_ c: OutcomeCounts) -> [String: Int] {
        ["devices": c.devices, "written": c.written, "sent": c.sent, "invalid_token": c.invalidToken,
         "rejected": c.rejected, "failed": c.failed, "skipped": c.skipped, "unsent": c.unsent]
    }

    /// `experiment`: what decides the split (merge-results refuses shards of different splits).
    static func experimentEntry(_ experiment: ExperimentSplit) -> [String: Any] {
        [
            "id": experiment.id,
            "control_share": experiment.control,
            "weights": Dictionary(uniqueKeysWithValues: experiment.variants.map { ($0.name, $0.weight) }),
        ]
    }

    /// `variants`: each variant's row and the `control`'s (every arm, zeros included), adding
    /// up to the run's devices (with a shard's `other_shard` skips, which no arm holds), and
    /// each arm's `recipients`.
    static func variantTable(_ experiment: ExperimentSplit, counts: RunCounts) -> [String: Any] {
        var table: [String: Any] = [:]
        for (i, name) in experiment.armNames.enumerated() {
            var entry = row(counts.arm(i))
            entry["recipients"] = counts.recipients(arm: i)
            table[name] = entry
        }
        return table
    }
}
