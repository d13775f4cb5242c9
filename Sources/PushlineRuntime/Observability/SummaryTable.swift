import PushlineCore
import Foundation

/// The table a run prints on standard error when it ends (never on standard output, which
/// belongs to commands that print results): outcomes per provider, rates, wall time and the most
/// frequent reject, invalid-token and failure reasons. The same numbers as `summary.json`.
public enum SummaryTable {
    /// Reasons listed per outcome.
    public static let topReasons = 5

    /// The table's lines, without trailing newlines.
    public static func render(_ report: RunReport) -> [String] {
        let counts = report.counts
        let sending = report.mode == "send"
        var lines: [String] = []
        let mode = sending ? (report.validateOnly ? "send, validate only" : "send") : "dry run"
        lines.append("pushline: run \(report.status.rawValue) in \(duration(report.seconds)) (\(mode)): \(group(counts.lines)) lines, \(group(counts.devices)) devices")

        // Columns that are zero in every row are left out, except the run's main outcome.
        let kinds: [(title: String, kind: DeliveryOutcome.Kind)] = [
            ("written", .written), ("sent", .sent), ("invalid", .invalidToken), ("rejected", .rejected),
            ("failed", .failed), ("skipped", .skipped), ("unsent", .unsent),
        ]
        var rows: [(name: String, counts: OutcomeCounts)] = counts.byProvider
            .filter { !$0.value.isZero }
            .sorted { $0.key < $1.key }
            .map { ($0.key.rawValue, $0.value) }
        if !counts.unrouted.isZero { rows.append(("unrouted", counts.unrouted)) }
        var total = OutcomeCounts()
        for row in rows { total.add(row.counts) }
        let main: DeliveryOutcome.Kind = sending ? .sent : .written
        let shown = kinds.filter { column in column.kind == main || rows.contains { $0.counts[column.kind] > 0 } }

        var header = ["provider", "devices"] + shown.map(\.title) + ["devices/s"]
        if sending { header.append("sent/s") }
        var table: [[String]] = [header]
        func cells(_ name: String, _ c: OutcomeCounts, sentPerSecond: Double?) -> [String] {
            var row = [name, group(c.devices)] + shown.map { group(c[$0.kind]) }
            row.append(group(devicesPerSecond(c.devices, seconds: report.seconds)))
            if sending { row.append(sentPerSecond.map { group(Int($0.rounded())) } ?? "") }
            return row
        }
        for row in rows {
            let provider = Provider(rawValue: row.name)
            let sentRate = provider.flatMap { p in report.delivery.first { $0.provider == p } }?.sentPerSecond
            table.append(cells(row.name, row.counts, sentPerSecond: sentRate))
        }
        if rows.count != 1 { table.append(cells("total", total, sentPerSecond: nil)) }
        lines.append(contentsOf: align(table))
        if let arms = report.experimentArms { lines.append(contentsOf: variantRows(arms, counts: counts, kinds: shown)) }

        if counts.linesRejected > 0 { lines.append("lines rejected whole: \(group(counts.linesRejected))") }
        for (title, tally) in [("top rejects", counts.rejected), ("top invalid tokens", counts.invalidTokens), ("top failures", counts.failed)] {
            let top = topReasons(tally)
            guard !top.isEmpty else { continue }
            lines.append("\(title): " + top.map { "\($0.reason) \(group($0.count))" }.joined(separator: ", "))
        }
        for provider in report.delivery {
            guard let lane = provider.lane else { continue }
            var parts = ["\(group(lane.attempts)) attempts", "\(group(lane.retries)) retries"]
            if lane.slowdowns > 0 { parts.append("\(lane.slowdowns) slowdowns") }
            if lane.pauses > 0 { parts.append("\(lane.pauses) pauses") }
            parts.append("\(lane.connectionsOpened) connections")
            if let p99 = provider.latency.percentileMicroseconds(0.99) { parts.append("p99 \(milliseconds(p99))") }
            lines.append("\(provider.provider.rawValue): " + parts.joined(separator: ", "))
        }
        return lines
    }

    /// An experiment's arms (the variants, then the control), with the provider table's
    /// outcome columns: they add up to its devices (with a shard's `other_shard` skips).
    static func variantRows(_ arms: [String], counts: RunCounts, kinds: [(title: String, kind: DeliveryOutcome.Kind)]) -> [String] {
        var table: [[String]] = [["variant", "recipients", "devices"] + kinds.map(\.title)]
        for (i, name) in arms.enumerated() {
            let c = counts.arm(i)
            table.append([name, group(counts.recipients(arm: i)), group(c.devices)] + kinds.map { group(c[$0.kind]) })
        }
        return align(table)
    }

    /// The `limit` largest reasons, largest first; ties by name, so the order is the same every run.
    public static func topReasons(_ tally: [String: Int], limit: Int = topReasons) -> [(reason: String, count: Int)] {
        tally.filter { $0.value > 0 }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(limit)
            .map { ($0.key, $0.value) }
    }

    /// Columns padded to their widest cell: the first left-aligned, numbers right-aligned.
    static func align(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { i, cell in
                let padding = String(repeating: " ", count: widths[i] - cell.count)
                return i == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
    }

    /// 1234567 → "1,234,567".
    public static func group(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, character) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// "0.42 s", "12.3 s", "1:02:03".
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        if seconds < 10 { return String(format: "%.2f s", seconds) }
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        let whole = Int(min(seconds, 1e12))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    static func milliseconds(_ microseconds: UInt64) -> String {
        String(format: "%.1f ms", Double(microseconds) / 1000)
    }

    /// Whether the run got as far as reading its audience: a run refused before that (a busy
    /// folder, an unreadable audience, a sender that could not start) ends with its one error
    /// line and no table.
    public static func applies(to report: RunReport) -> Bool {
        report.counts.lines + report.counts.blankLines > 0 || report.source.physicalLines > 0
            || report.status == .completed || report.status == .stopped
    }
}
