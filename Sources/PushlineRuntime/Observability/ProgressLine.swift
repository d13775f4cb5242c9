public import PushlineCore
public import Logging
import Foundation

/// What the progress line and the progress log line say, computed from one reading: a pure
/// function of the counts, the input position and the elapsed time (tests give it all three).
///
/// Percent and ETA come from compressed bytes read against the audience file's size: the
/// reader's offset moves as it reads, whatever the lines hold. Standard input (or a size that is
/// unknown) has neither, and the line says so.
public struct ProgressLine: Sendable {
    public var counts: RunCounts
    public var compressedBytesRead: Int
    public var audienceBytes: Int?
    public var seconds: Double
    public var sending: Bool
    /// Sending: requests in the lanes (queued, retrying or in flight) and waiting for a retry.
    public var inLanes = 0
    public var retrying = 0

    public init(counts: RunCounts, compressedBytesRead: Int, audienceBytes: Int?, seconds: Double, sending: Bool) {
        self.counts = counts
        self.compressedBytesRead = compressedBytesRead
        self.audienceBytes = audienceBytes
        self.seconds = seconds
        self.sending = sending
    }

    /// Read so far, 0 to 100; nil without a size.
    public var percent: Double? {
        guard let total = audienceBytes, total > 0 else { return nil }
        return min(100, max(0, Double(compressedBytesRead) / Double(total) * 100))
    }

    /// Seconds left at the rate so far; nil without a size or before anything was read.
    public var etaSeconds: Double? {
        guard let total = audienceBytes, total > 0, compressedBytesRead > 0, seconds > 0 else { return nil }
        let left = Double(max(0, total - compressedBytesRead))
        let eta = seconds * left / Double(compressedBytesRead)
        return eta.isFinite ? eta : nil
    }

    /// The outcomes shown per provider: the run's main one first.
    private var kinds: [(String, DeliveryOutcome.Kind)] {
        [(sending ? "sent" : "written", sending ? .sent : .written), ("invalid", .invalidToken), ("rejected", .rejected),
         ("failed", .failed), ("skipped", .skipped), ("unsent", .unsent)]
    }

    /// A provider's outcomes worth showing: those that happened, and the main one while it can.
    private func shown(_ row: OutcomeCounts) -> [(String, DeliveryOutcome.Kind)] {
        kinds.filter { title, kind in row[kind] > 0 || (kind == kinds[0].1 && row.devices > row.skipped) }
    }

    private func rate(_ count: Int) -> String {
        SummaryTable.group(devicesPerSecond(count, seconds: seconds))
    }

    /// The terminal line: `42.1% ETA 0:31 | 1:02 | 120,000 devices 9,800/s | apns sent 60,000 4,900/s failed 2 | …`.
    public var text: String {
        var parts: [String] = []
        if let percent {
            parts.append(String(format: "%.1f%%", percent) + (etaSeconds.map { " ETA " + Self.clock($0) } ?? ""))
        } else {
            parts.append("size unknown (\(audienceBytes == nil ? "not a regular file" : "empty")): no percent or ETA")
        }
        parts.append(Self.clock(seconds))
        parts.append("\(SummaryTable.group(counts.devices)) devices \(rate(counts.settledTotal))/s")
        for (provider, row) in counts.byProvider.sorted(by: { $0.key < $1.key }) where row.devices > 0 {
            var text = provider.rawValue
            for (title, kind) in shown(row) {
                text += " \(title) \(SummaryTable.group(row[kind])) \(rate(row[kind]))/s"
            }
            parts.append(text)
        }
        let unroutedRejects = counts.unrouted.rejected
        let lineRejects = counts.linesRejected
        if unroutedRejects + lineRejects > 0 {
            parts.append("rejected lines \(SummaryTable.group(lineRejects)), unrouted devices \(SummaryTable.group(unroutedRejects))")
        }
        if sending, inLanes > 0 { parts.append("in lanes \(SummaryTable.group(inLanes)), retrying \(SummaryTable.group(retrying))") }
        return parts.joined(separator: " | ")
    }

    /// The same as log metadata (the line a run logs every `--progress-interval` without a terminal).
    public var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "lines": "\(counts.lines)", "devices": "\(counts.devices)",
            "devices_per_second": "\(devicesPerSecond(counts.settledTotal, seconds: seconds))",
            "bytes_read": "\(compressedBytesRead)", "seconds": "\(String(format: "%.1f", seconds))",
        ]
        if let percent {
            metadata["percent"] = "\(String(format: "%.1f", percent))"
            if let eta = etaSeconds { metadata["eta_seconds"] = "\(Int(eta.rounded()))" }
        } else {
            metadata["percent"] = "unknown"
        }
        for (provider, row) in counts.byProvider where row.devices > 0 {
            for (_, kind) in shown(row) {
                let name = kind.rawValue
                metadata["\(provider.rawValue)_\(name)"] = "\(row[kind])"
                metadata["\(provider.rawValue)_\(name)_per_second"] = "\(devicesPerSecond(row[kind], seconds: seconds))"
            }
        }
        if counts.linesRejected > 0 { metadata["lines_rejected"] = "\(counts.linesRejected)" }
        if counts.unrouted.rejected > 0 { metadata["unrouted_rejected"] = "\(counts.unrouted.rejected)" }
        if sending {
            metadata["in_lanes"] = "\(inLanes)"
            metadata["retrying"] = "\(retrying)"
        }
        return metadata
    }

    /// "0:42", "12:03", "1:02:03".
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        let whole = Int(min(seconds.rounded(), 1e12))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
