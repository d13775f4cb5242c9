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
            "mode": "dry_run",
            "status": report.status.rawValue,
            "exit_code": Int(report.status.exitCode),
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
            ] as [String: Any],
            "providers": providerTable(counts),
            "settled_through_line": report.settledThroughLine,
            "reconciled": counts.reconciles && counts.reconcilesByProvider && report.failure == nil,
            "files": Dictionary(uniqueKeysWithValues: report.files.map { ($0.name, $0.bytes) }),
        ]
        if report.seconds > 0 {
            summary["devices_per_second"] = devicesPerSecond(counts.writtenTotal, seconds: report.seconds)
        }
        if let error = report.source.error {
            var entry: [String: Any] = ["code": error.code.rawValue, "message": error.description]
            if let offset = error.compressedOffset { entry["compressed_offset"] = offset }
            summary["input_error"] = entry
        }
        if let failure = report.failure { summary["failure"] = failure }
        var data = try JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(0x0A)
        // Through OutputFile like every result: a unique O_EXCL temporary, renamed only over a
        // regular file.
        var file = try OutputFile(path: path)
        try file.write(data)
        try file.close()
    }

    /// Per provider (and `unrouted`, devices rejected before a provider was known): devices and
    /// each outcome; every row adds up (`devices = written + sent + invalid_token + rejected +
    /// failed + skipped`).
    static func providerTable(_ counts: RunCounts) -> [String: Any] {
        func row(_ c: OutcomeCounts) -> [String: Int] {
            ["devices": c.devices, "written": c.written, "sent": c.sent, "invalid_token": c.invalidToken,
             "rejected": c.rejected, "failed": c.failed, "skipped": c.skipped]
        }
        var table: [String: Any] = [:]
        for (provider, c) in counts.byProvider where !c.isZero { table[provider.rawValue] = row(c) }
        if !counts.unrouted.isZero { table["unrouted"] = row(counts.unrouted) }
        return table
    }
}
