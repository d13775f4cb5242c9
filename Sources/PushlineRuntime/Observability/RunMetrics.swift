public import PushlineCore
public import PushlineDelivery
public import PushlineIO
public import CoreMetrics
import Prometheus
import Synchronization

/// A run's metrics, kept in a Prometheus registry of the run's own (never the process-wide
/// `MetricsSystem`, so runs in one process do not mix) and written as a Prometheus text file for
/// node_exporter's textfile collector (docs/observability.md).
///
/// Every family has `# HELP` and `# TYPE` (`families`), and every series carries `campaign` (the
/// pipeline's `name`) and, in a shard, `shard` (`I/N`), so the files of several campaigns and
/// shards on one node's collector never hold the same series. Counters follow the run's counts:
/// every export adds what each count grew by since the last one, so after the final export they
/// equal `summary.json`. Label values are bounded: providers and outcomes are enums, and reasons
/// pass `MetricReasons.label` (a fixed vocabulary, else `other`); the campaign's name comes from
/// the pipeline and is escaped by the registry (backslash, quote, line feed). Request latency is
/// recorded by the delivery sink through swift-metrics' `Timer` as requests settle (one
/// uncontended lock, no allocation).
public final class RunMetrics: Sendable {
    public static let latencyMetric = "pushline_request_duration_seconds"
    /// Latency buckets: HTTP/2 push answers take milliseconds; retries and timeouts seconds.
    public static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    /// A metric family: its type and its `# HELP` text. The help names nothing of a campaign or
    /// shard: node_exporter refuses families whose help differs between two files.
    public struct Family: Sendable {
        public enum Kind: String, Sendable { case counter, gauge, histogram }
        public let kind: Kind
        /// The labels besides `campaign` and `shard`.
        public let labels: [String]
        public let help: String
    }

    /// Every family a run may write (docs/observability.md lists the same).
    public static let families: [String: Family] = [
        "pushline_devices_total": Family(kind: .counter, labels: ["provider", "outcome"], help: "Devices by provider (or unrouted) and outcome, as in summary.json's providers rows."),
        "pushline_device_reasons_total": Family(kind: .counter, labels: ["outcome", "reason"], help: "Devices by outcome and reason, as in summary.json's *_by_reason counts (unknown reasons as other)."),
        "pushline_variant_devices_total": Family(kind: .counter, labels: ["variant", "outcome"], help: "Devices of an experiment's recipients by variant (or control) and outcome, as in summary.json's variants rows."),
        "pushline_devices_read_total": Family(kind: .counter, labels: [], help: "Devices found in routed audience lines."),
        "pushline_lines_total": Family(kind: .counter, labels: ["kind"], help: "Audience lines by kind: read, blank, rejected."),
        "pushline_possible_duplicates_total": Family(kind: .counter, labels: [], help: "Sent requests resent after an attempt that may have arrived."),
        "pushline_requests_attempted_total": Family(kind: .counter, labels: ["provider"], help: "Requests put on the wire, retries included."),
        "pushline_requests_retried_total": Family(kind: .counter, labels: ["provider"], help: "Requests retried."),
        "pushline_rate_slowdowns_total": Family(kind: .counter, labels: ["provider"], help: "Throttling answers that halved the provider's rate."),
        "pushline_rate_pauses_total": Family(kind: .counter, labels: ["provider"], help: "Pauses the provider asked for (Retry-After)."),
        "pushline_connections_opened_total": Family(kind: .counter, labels: ["provider"], help: "Connections opened to the provider."),
        "pushline_rate_per_second": Family(kind: .gauge, labels: ["provider"], help: "The provider's rate limit now, in requests per second."),
        "pushline_requests_in_flight": Family(kind: .gauge, labels: ["provider"], help: "Requests on the wire to the provider."),
        "pushline_provider_stopped": Family(kind: .gauge, labels: ["provider"], help: "1 once a configuration error stopped sending to the provider."),
        "pushline_requests_in_lanes": Family(kind: .gauge, labels: [], help: "Requests handed to the sending lanes and not settled yet."),
        "pushline_requests_retrying": Family(kind: .gauge, labels: [], help: "Requests waiting for a retry."),
        latencyMetric: Family(kind: .histogram, labels: ["provider"], help: "Request latency in seconds, from the first submission to the final answer."),
        "pushline_audience_bytes_read": Family(kind: .gauge, labels: [], help: "Audience bytes read so far (compressed bytes for a gzip file)."),
        "pushline_audience_bytes": Family(kind: .gauge, labels: [], help: "The audience file's size in bytes (absent for standard input)."),
        "pushline_run_seconds": Family(kind: .gauge, labels: [], help: "Seconds since the run started."),
        "pushline_run_finished": Family(kind: .gauge, labels: [], help: "1 once the run has ended and this is its final report."),
        "pushline_run_exit_code": Family(kind: .gauge, labels: [], help: "The run's exit code, once it has ended."),
    ]

    /// Families only a campaign with an `experiment:` writes.
    public static let experimentFamilies: Set<String> = ["pushline_variant_devices_total"]

    /// The labels every series starts with: `campaign`, and `shard` in a shard.
    public static func runLabels(campaign: String, shard: AudienceShard?) -> [(String, String)] {
        [("campaign", campaign)] + (shard.map { [("shard", $0.description)] } ?? [])
    }

    private let registry: PrometheusCollectorRegistry
    private let state: Mutex<State>

    private struct State {
        /// `campaign` and `shard`: set once, before anything is recorded.
        var runLabels: [(String, String)]?
        /// An experiment's arm names, by `RunCounts.byArm` index.
        var arms: [String]?
        /// What each counter was raised to so far, by metric key.
        var exported: [String: Int64] = [:]
        var counters: [String: Prometheus.Counter] = [:]
        var gauges: [String: Prometheus.Gauge] = [:]
    }

    /// `campaign` and `shard` may be given later, once, with `label(campaign:shard:)` (the run
    /// knows them once it starts).
    public init(campaign: String? = nil, shard: AudienceShard? = nil) {
        registry = PrometheusCollectorRegistry()
        state = Mutex(State(runLabels: campaign.map { Self.runLabels(campaign: $0, shard: shard) }))
    }

    /// Names the run every series belongs to; only the first call counts (the labels of a series
    /// never change).
    public func label(campaign: String, shard: AudienceShard?, arms: [String]? = nil) {
        state.withLock { state in
            if state.runLabels == nil {
                state.runLabels = Self.runLabels(campaign: campaign, shard: shard)
                state.arms = arms
            }
        }
    }

    /// Whether the run's labels are known (nothing is recorded or written before).
    public var labelled: Bool { state.withLock { $0.runLabels != nil } }

    /// The provider's latency histogram (made once per provider, before the run sends, after
    /// `label(campaign:shard:)`).
    public func latencyTimer(_ provider: Provider) -> CoreMetrics.Timer {
        let labels = state.withLock { $0.runLabels ?? [] } + [("provider", provider.rawValue)]
        let histogram = registry.makeDurationHistogram(descriptor: Self.descriptor(Self.latencyMetric), labels: labels, buckets: Self.latencyBuckets)
        return CoreMetrics.Timer(label: Self.latencyMetric, dimensions: labels, handler: histogram)
    }

    /// The family's whole name (no unit appended) and its help.
    static func descriptor(_ name: String) -> MetricNameDescriptor {
        guard let family = families[name] else { preconditionFailure("\(name) is not in RunMetrics.families") }
        return MetricNameDescriptor(metricName: name, unitName: "", helpText: family.help)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow, seconds >= 0 else { return seconds < 0 ? 0 : .max }
        let (sum, over) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return over ? .max : sum
    }

    // MARK: Updating

    /// Everything the run shows now: counts, input position, lanes' state, elapsed time.
    public struct Reading: Sendable {
        public var counts: RunCounts
        public var compressedBytesRead: Int
        public var audienceBytes: Int?
        public var lanes: [LaneReport]
        public var inLanes: Int
        public var retrying: Int
        public var seconds: Double
        /// Set by the final reading: the run's status and exit code.
        public var finished: PushlineExit?

        public init(
            counts: RunCounts, compressedBytesRead: Int, audienceBytes: Int?, lanes: [LaneReport], inLanes: Int = 0,
            retrying: Int = 0, seconds: Double, finished: PushlineExit? = nil
        ) {
            self.counts = counts
            self.compressedBytesRead = compressedBytesRead
            self.audienceBytes = audienceBytes
            self.lanes = lanes
            self.inLanes = inLanes
            self.retrying = retrying
            self.seconds = seconds
            self.finished = finished
        }
    }

    /// Records `reading`; nothing before the run's labels are known (a series without them would
    /// collide with another shard's).
    public func update(_ reading: Reading) {
        state.withLock { state in
            guard state.runLabels != nil else { return }
            let counts = reading.counts
            for (name, count) in [("read", counts.lines), ("blank", counts.blankLines), ("rejected", counts.linesRejected)] {
                raise(&state, "pushline_lines_total", [("kind", name)], to: count)
            }
            raise(&state, "pushline_devices_read_total", [], to: counts.devices)
            // Per provider and outcome: summary.json's `providers` rows.
            var rows = counts.byProvider.map { ($0.key.rawValue, $0.value) }
            rows.append(("unrouted", counts.unrouted))
            for (provider, row) in rows {
                for kind in DeliveryOutcome.Kind.allCases {
                    // Zero series are written too once the provider has devices, so rates start at 0.
                    guard row.devices > 0 || row[kind] > 0 else { continue }
                    raise(&state, "pushline_devices_total", [("provider", provider), ("outcome", kind.rawValue)], to: row[kind])
                }
            }
            // Per experiment arm and outcome: summary.json's `variants` rows (names checked by
            // the pipeline's schema: at most 27, letters, digits, `_` and `-`).
            if let arms = state.arms {
                for (i, name) in arms.enumerated() {
                    let row = counts.arm(i)
                    for kind in DeliveryOutcome.Kind.allCases where row.devices > 0 || row[kind] > 0 {
                        raise(&state, "pushline_variant_devices_total", [("variant", name), ("outcome", kind.rawValue)], to: row[kind])
                    }
                }
            }
            // Per outcome and reason: summary.json's `*_by_reason`.
            let byReason: [(DeliveryOutcome.Kind, [String: Int])] = [
                (.rejected, counts.rejected), (.invalidToken, counts.invalidTokens), (.failed, counts.failed),
                (.skipped, counts.skipped), (.unsent, counts.unsent),
            ]
            for (kind, tally) in byReason {
                var labelled: [String: Int] = [:]
                for (reason, count) in tally { labelled[MetricReasons.label(reason, outcome: kind), default: 0] += count }
                for (reason, count) in labelled {
                    raise(&state, "pushline_device_reasons_total", [("outcome", kind.rawValue), ("reason", reason)], to: count)
                }
            }
            raise(&state, "pushline_possible_duplicates_total", [], to: counts.possibleDuplicates)
            set(&state, "pushline_audience_bytes_read", [], to: Double(reading.compressedBytesRead))
            if let total = reading.audienceBytes { set(&state, "pushline_audience_bytes", [], to: Double(total)) }
            for lane in reading.lanes {
                let provider = [("provider", lane.provider.rawValue)]
                raise(&state, "pushline_requests_attempted_total", provider, to: lane.attempts)
                raise(&state, "pushline_requests_retried_total", provider, to: lane.retries)
                raise(&state, "pushline_rate_slowdowns_total", provider, to: lane.slowdowns)
                raise(&state, "pushline_rate_pauses_total", provider, to: lane.pauses)
                raise(&state, "pushline_connections_opened_total", provider, to: lane.connectionsOpened)
                set(&state, "pushline_rate_per_second", provider, to: lane.finalRatePerSecond.isFinite ? lane.finalRatePerSecond : 0)
                set(&state, "pushline_requests_in_flight", provider, to: Double(lane.inFlight))
                set(&state, "pushline_provider_stopped", provider, to: lane.stoppedBecause == nil ? 0 : 1)
            }
            if !reading.lanes.isEmpty {
                set(&state, "pushline_requests_in_lanes", [], to: Double(reading.inLanes))
                set(&state, "pushline_requests_retrying", [], to: Double(reading.retrying))
            }
            set(&state, "pushline_run_seconds", [], to: reading.seconds.isFinite ? reading.seconds : 0)
            set(&state, "pushline_run_finished", [], to: reading.finished == nil ? 0 : 1)
            if let finished = reading.finished { set(&state, "pushline_run_exit_code", [], to: Double(finished.code)) }
        }
    }

    private func key(_ name: String, _ labels: [(String, String)]) -> String {
        ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1F}")
    }

    /// Raises a counter to `value` (a count only grows; a smaller value is ignored).
    private func raise(_ state: inout State, _ name: String, _ labels: [(String, String)], to value: Int) {
        let labels = (state.runLabels ?? []) + labels
        let key = key(name, labels)
        let counter = Self.metric(&state.counters, key) { registry.makeCounter(descriptor: Self.descriptor(name), labels: labels) }
        let previous = state.exported[key] ?? 0
        let target = Int64(clamping: value)
        if target > previous { counter.increment(by: target - previous) }
        state.exported[key] = max(previous, target)
    }

    private func set(_ state: inout State, _ name: String, _ labels: [(String, String)], to value: Double) {
        let labels = (state.runLabels ?? []) + labels
        let key = key(name, labels)
        Self.metric(&state.gauges, key) { registry.makeGauge(descriptor: Self.descriptor(name), labels: labels) }.set(to: value)
    }

    /// The metric under `key`, made on first use.
    private static func metric<Metric>(_ cache: inout [String: Metric], _ key: String, make: () -> Metric) -> Metric {
        if let known = cache[key] { return known }
        let made = make()
        cache[key] = made
        return made
    }

    // MARK: The file

    /// The file a run writes in a folder named by `--metrics-file`:
    /// `pushline-<campaign>.prom`, `pushline-<campaign>-shard-<I>-of-<N>.prom` in a shard, so the
    /// shards and campaigns sharing one node's textfile collector folder never replace each
    /// other's file. A pipeline's `name` is one path segment of ASCII letters, digits, `-`, `.`,
    /// `_` and `~` already; anything else would become `_`, and the name is cut to 100 bytes.
    public static func fileName(campaign: String, shard: AudienceShard?) -> String {
        var name = ""
        for scalar in campaign.unicodeScalars.prefix(100) {
            let keep = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-~".unicodeScalars.contains(scalar))
            name.unicodeScalars.append(keep ? scalar : "_")
        }
        if let shard { name += "-shard-\(shard.index)-of-\(shard.count)" }
        return "pushline-\(name.isEmpty ? "campaign" : name).prom"
    }

    /// The path `--metrics-file` means: a folder (one that exists, or a path ending in `/`) gets
    /// `fileName(campaign:shard:)` in it; anything else is the file itself.
    public static func filePath(_ option: String, campaign: String, shard: AudienceShard?, isFolder: (String) -> Bool) -> String {
        guard option.hasSuffix("/") || isFolder(option) else { return option }
        return (option.hasSuffix("/") ? option : option + "/") + fileName(campaign: campaign, shard: shard)
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] { registry.emitToBuffer() }

    /// Writes the file under a temporary name in its folder and renames it over `path`, so the
    /// collector never reads half a file (`OutputFile`: the temporary name ends in `.tmp`, which
    /// the textfile collector ignores).
    public func write(to path: String) throws(OutputFileError) {
        var file = try OutputFile(path: path, options: .init(bufferSize: 64 << 10))
        try file.write(exposition())
        try file.close()
    }
}

/// Reason label values: a fixed vocabulary, so a provider cannot grow the metric's series with
/// text of its own. Reject and skip reasons are the program's own codes; invalid-token, failure
/// and unsent reasons are the lanes' codes, the providers' documented reasons (PROVIDERS.md),
/// `http_<status>`, or else `other`.
public enum MetricReasons {
    public static let other = ReasonTally.overflowReason

    static let providerReasons: Set<String> = {
        var known = Set(APNsErrorReason.known.map(\.wireName))
        known.formUnion(FCMErrorCode.known.map(\.wireName))
        // google.rpc.Code names, FCM's `error.status`.
        known.formUnion([
            "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
            "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
            "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
        ])
        known.formUnion(LaneFailureReason.all)
        known.formUnion([
            DeliveryOutcome.runStoppedReason, "provider_not_configured", "lane_ended", "no_response", "unknown", other,
        ])
        return known
    }()

    public static func label(_ reason: String, outcome: DeliveryOutcome.Kind) -> String {
        switch outcome {
        case .rejected, .skipped:
            return isCode(reason) ? reason : other
        default:
            if providerReasons.contains(reason) { return reason }
            if isHTTPStatus(reason) { return reason }
            return other
        }
    }

    /// A code of the program's own: lower-case snake case, at most 64 bytes.
    static func isCode(_ reason: String) -> Bool {
        let bytes = reason.utf8
        guard (1...64).contains(bytes.count), let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return bytes.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// `http_100` … `http_599`.
    static func isHTTPStatus(_ reason: String) -> Bool {
        guard reason.hasPrefix("http_"), let status = Int(reason.dropFirst(5)), reason.utf8.count == 8 else { return false }
        return (100...599).contains(status)
    }
}
