public import PushlineCore
public import PushlineDelivery
public import PushlineIO
public import CoreMetrics
import Prometheus
import Synchronization

/// A run's metrics through swift-metrics, kept in a Prometheus registry of the run's own (never
/// the process-wide `MetricsSystem`, so runs in one process do not mix) and written as a
/// Prometheus text file for node_exporter's textfile collector (docs/observability.md).
///
/// Counters follow the run's counts: every export adds what each count grew by since the last one,
/// so after the final export they equal `summary.json`. Label values are bounded: providers and
/// outcomes are enums, and reasons pass `MetricReasons.label` (a fixed vocabulary, else `other`).
/// Request latency is recorded by the delivery sink as requests settle (one uncontended lock, no
/// allocation).
public final class RunMetrics: Sendable {
    public static let latencyMetric = "pushline_request_duration_seconds"
    /// Latency buckets: HTTP/2 push answers take milliseconds; retries and timeouts seconds.
    public static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    private let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let state = Mutex(State())

    private struct State {
        /// What each counter was raised to so far, by metric key.
        var exported: [String: Int64] = [:]
        var counters: [String: CoreMetrics.Counter] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
    }

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.latencyMetric] = Self.latencyBuckets
        self.factory = factory
    }

    /// The provider's latency histogram (made once per provider, before the run sends).
    public func latencyTimer(_ provider: Provider) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: Self.latencyMetric, dimensions: [("provider", provider.rawValue)], factory: factory)
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

    public func update(_ reading: Reading) {
        state.withLock { state in
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
        let key = key(name, labels)
        let counter = Self.metric(&state.counters, key) { CoreMetrics.Counter(label: name, dimensions: labels, factory: factory) }
        let previous = state.exported[key] ?? 0
        let target = Int64(clamping: value)
        if target > previous { counter.increment(by: target - previous) }
        state.exported[key] = max(previous, target)
    }

    private func set(_ state: inout State, _ name: String, _ labels: [(String, String)], to value: Double) {
        let key = key(name, labels)
        Self.metric(&state.gauges, key) { CoreMetrics.Gauge(label: name, dimensions: labels, factory: factory) }.record(value)
    }

    /// The metric under `key`, made on first use.
    private static func metric<Metric>(_ cache: inout [String: Metric], _ key: String, make: () -> Metric) -> Metric {
        if let known = cache[key] { return known }
        let made = make()
        cache[key] = made
        return made
    }

    // MARK: The file

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
