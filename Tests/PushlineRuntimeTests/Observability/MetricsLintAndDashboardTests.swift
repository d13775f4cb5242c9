import Foundation
import PushlineCore
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// The metrics file as operators use it (issue 36): every family with `# HELP` and `# TYPE`,
/// `promtool check metrics` clean on a dry run's and a sending run's file, `campaign` and `shard`
/// labels on every series, one file per campaign and shard in a collector's folder, label values
/// escaped; and the Grafana dashboard (pipelines/deploy/grafana-dashboard.json), whose every
/// query names only metrics a real sending run writes.
@Suite(
    "Metrics that lint and the dashboard",
    .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"),
    .serialized
)
struct MetricsLintAndDashboardTests {
    static let dashboardPath = PushlineBinary.root.appendingPathComponent("pipelines/deploy/grafana-dashboard.json").path

    @Test(.timeLimit(.minutes(5)))
    func everySeriesCarriesTheCampaignAndTheShard() async throws {
        let files = try await RealRunMetrics.made.value
        #expect(files.dryRunFileName == "pushline-demo-shard-1-of-2.prom")
        #expect(files.sendingRunFileName == "pushline-send-faults-shard-0-of-2.prom")
        let dry = try MetricsFileTests.readText(files.dryRun, campaign: "demo", shard: "1/2")
        let sending = try MetricsFileTests.readText(files.sendingRun, campaign: "send-faults", shard: "0/2")
        // What issue 36 counted: 10 families in a dry run, 21 sending; the 22nd is an experiment's
        // (`ExperimentMetricsTests`).
        #expect(dry.types.count == 10, "\(dry.types.keys.sorted())")
        #expect(Set(sending.types.keys) == Set(RunMetrics.families.keys).subtracting(RunMetrics.experimentFamilies), "\(Set(RunMetrics.families.keys).subtracting(sending.types.keys))")
        #expect(sending.types.count == 21)
        #expect((sending.value("pushline_devices_total", ["provider": "apns", "outcome": "sent"]) ?? 0) > 0)
    }

    @Test(
        .timeLimit(.minutes(5)),
        .enabled(if: Promtool.path != nil, "promtool is not installed (scripts/install-promtool installs it; CI runs it through scripts/system-packages)")
    )
    func promtoolFindsNothingInADryRunsOrASendingRunsFile() async throws {
        let files = try await RealRunMetrics.made.value
        for (name, text) in [("dry run", files.dryRun), ("sending run", files.sendingRun)] {
            let outcome = try await Promtool.checkMetrics(text)
            #expect(outcome.status == 0 && outcome.stdout.isEmpty && outcome.stderr.isEmpty, "\(name): \(outcome.status) \(outcome.stdout)\(outcome.stderr)")
        }
        // promtool does complain about a family without help, so the check above means something.
        let withoutHelp = try await Promtool.checkMetrics("# TYPE pushline_x_total counter\npushline_x_total 1\n")
        #expect(withoutHelp.status != 0 && (withoutHelp.stdout + withoutHelp.stderr).contains("no help text"))
    }

    /// A campaign's name reaches the file only as a label value, escaped as the exposition format
    /// says (backslash, double quote, line feed): the pipeline loader allows none of them in a
    /// name today, so this builds the metrics with such a name directly.
    @Test func labelValuesAreEscaped() async throws {
        let campaign = "win \"back\" \\ 2026\nQ4"
        let metrics = RunMetrics(campaign: campaign, shard: try AudienceShard(index: 2, count: 3))
        var counts = RunCounts()
        counts.lines = 5
        metrics.update(RunMetrics.Reading(counts: counts, compressedBytesRead: 10, audienceBytes: 20, lanes: [], seconds: 1))
        _ = metrics.latencyTimer(.apns)
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains(#"campaign="win \"back\" \\ 2026\nQ4",shard="2/3""#), "\(text)")
        let file = try MetricsFileTests.readText(text, campaign: campaign, shard: "2/3")
        #expect(file.value("pushline_lines_total", ["kind": "read"]) == 5)
        if Promtool.path != nil {
            let outcome = try await Promtool.checkMetrics(text)
            #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        }
    }

    @Test func aFolderGetsOneFileForEachCampaignAndShard() throws {
        let shard = try AudienceShard(index: 3, count: 8)
        #expect(RunMetrics.fileName(campaign: "winback", shard: nil) == "pushline-winback.prom")
        #expect(RunMetrics.fileName(campaign: "winback", shard: shard) == "pushline-winback-shard-3-of-8.prom")
        #expect(RunMetrics.fileName(campaign: "a/b c", shard: nil) == "pushline-a_b_c.prom")
        let folder = "/var/lib/node_exporter/textfile"
        #expect(RunMetrics.filePath(folder, campaign: "winback", shard: shard) { $0 == folder } == folder + "/pushline-winback-shard-3-of-8.prom")
        #expect(RunMetrics.filePath(folder + "/", campaign: "winback", shard: nil) { _ in false } == folder + "/pushline-winback.prom")
        // A file's name is taken as it is.
        #expect(RunMetrics.filePath(folder + "/x.prom", campaign: "winback", shard: shard) { _ in false } == folder + "/x.prom")
    }

    @Test func theDocsListEveryFamily() throws {
        let docs = try String(contentsOfFile: PushlineBinary.root.appendingPathComponent("docs/observability.md").path, encoding: .utf8)
        for name in RunMetrics.families.keys {
            #expect(docs.contains("`\(name)`"), "\(name) in docs/observability.md")
        }
    }

    // MARK: The dashboard

    @Test(.timeLimit(.minutes(5)))
    func everyMetricTheDashboardQueriesIsInASendingRunsFile() async throws {
        let dashboard = try Dashboard(path: Self.dashboardPath)
        let files = try await RealRunMetrics.made.value
        let sending = try PrometheusText(files.sendingRun)
        let written = Set(sending.samples.map(\.name))
        var used: Set<String> = []
        for query in dashboard.queries {
            let names = try PromQLMetricNames.of(query)
            #expect(!names.isEmpty, "\(query)")
            // An experiment's families are checked against an experiment's file (`ExperimentMetricsTests`).
            for name in names where !RunMetrics.experimentFamilies.contains(name) {
                #expect(written.contains(name), "\(name) (in \(query)) is not in a sending run's file")
                used.insert(name)
            }
        }
        // What the issue asks the dashboard to show, by the metrics that show it.
        for name in [
            "pushline_devices_total", "pushline_audience_bytes_read", "pushline_audience_bytes", "pushline_run_seconds",
            "pushline_rate_per_second", "pushline_rate_pauses_total", "pushline_requests_in_flight",
            "pushline_request_duration_seconds_bucket", "pushline_device_reasons_total",
        ] {
            #expect(used.contains(name), "the dashboard shows \(name)")
        }
        #expect(dashboard.queries.contains { $0.contains("histogram_quantile(0.99, ") && $0.contains("_bucket") })
    }

    @Test func theDashboardSelectsByCampaignAndShard() throws {
        let dashboard = try Dashboard(path: Self.dashboardPath)
        #expect(dashboard.variables.keys.sorted() == ["campaign", "datasource", "shard"])
        #expect(dashboard.variables["campaign"]?.contains("label_values(pushline_run_seconds, campaign)") == true)
        #expect(dashboard.variables["shard"]?.contains(#"campaign=~"$campaign""#) == true)
        #expect(dashboard.variables["shard"]?.hasSuffix(", shard)") == true)
        #expect(dashboard.panelQueries.count >= 15)
        for query in dashboard.panelQueries {
            // Every selector of every panel query is narrowed to the chosen campaigns and shards.
            let selectors = query.components(separatedBy: "{").count - 1
            #expect(selectors > 0 && query.components(separatedBy: #"campaign=~"$campaign", shard=~"$shard""#).count - 1 == selectors, "\(query)")
        }
    }

    /// The queries are PromQL that Prometheus parses: promtool checks them as recording rules,
    /// with Grafana's variables given values.
    @Test(.enabled(if: Promtool.path != nil, "promtool is not installed (scripts/install-promtool)"))
    func promtoolParsesTheDashboardsQueries() async throws {
        let dashboard = try Dashboard(path: Self.dashboardPath)
        let scratch = try Scratch()
        var rules = "groups:\n  - name: dashboard\n    rules:\n"
        for (i, query) in dashboard.panelQueries.enumerated() {
            let expression = query.replacingOccurrences(of: "$__rate_interval", with: "1m")
                .replacingOccurrences(of: "$campaign", with: ".*").replacingOccurrences(of: "$shard", with: ".*")
            let quoted = String(decoding: try JSONSerialization.data(withJSONObject: expression, options: [.fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self)
            rules += "      - record: dashboard:query\(i)\n        expr: \(quoted)\n"
        }
        try rules.write(toFile: scratch.file("rules.yml"), atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["check", "rules", scratch.file("rules.yml")], executable: Promtool.path!)
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.contains("SUCCESS: \(dashboard.panelQueries.count) rules found"), "\(outcome.stdout)")
    }

    @Test func theMetricNameExtractorSeesThroughFunctionsLabelsAndRanges() throws {
        let query = #"histogram_quantile(0.9, sum by (le, provider) (rate(a_bucket{x=~"b_c|d", y!="by"}[$__rate_interval]))) / on (campaign) group_left b:rule offset 5m and ignoring(z) c"#
        #expect(try PromQLMetricNames.of(query) == ["a_bucket", "b:rule", "c"])
        #expect(try PromQLMetricNames.of(#"topk(5, sum without (reason) (x_total{outcome!="skipped"})) > bool 3"#) == ["x_total"])
        #expect(throws: PromQLMetricNames.Unbalanced.self) { try PromQLMetricNames.of("sum(a{b=\"c\")") }
    }
}

/// The files of two real runs of the binary, made once for the suite: a dry run of the demo as
/// shard 1/2 into a folder (`--metrics-file` naming a folder), and a sending run to the emulator
/// (seeded faults: invalid tokens, failures, retries) as shard 0/2, into a folder too.
struct RealRunMetrics: Sendable {
    var dryRun: String
    var dryRunFileName: String
    var sendingRun: String
    var sendingRunFileName: String

    static let made = Task<RealRunMetrics, any Error> { try await make() }

    static func make() async throws -> RealRunMetrics {
        let scratch = try Scratch()
        let dryFolder = scratch.file("dry-metrics")
        try FileManager.default.createDirectory(atPath: dryFolder, withIntermediateDirectories: true)
        let dry = try await PushlineBinary.run([
            "run", CommandLineTests.demo, "--dry-run", "--output", scratch.file("dry"), "--shard", "1/2",
            "--metrics-file", dryFolder, "--no-progress", "--log-level", "error",
        ])
        guard dry.status == 0 else { throw Failure(description: "the dry run failed: \(dry.stderr)") }
        let dryFiles = try FileManager.default.contentsOfDirectory(atPath: dryFolder)
        guard dryFiles.count == 1 else { throw Failure(description: "the dry run's metrics folder holds \(dryFiles)") }

        var faults = FaultPlan(seed: 36, rates: FaultRates([
            .apnsUnregistered: 0.05, .apnsBadDeviceToken: 0.03, .fcmUnregistered: 0.05, .internalServerError: 0.03,
        ]))
        faults.retryAfterSeconds = 0
        let harness = try await SendingRunHarness.start(faults: faults)
        var text = SendingRunHarness.iosAndAndroidAudience(customers: 400)
        text += "{not json\n"
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        let sendFolder = harness.scratch.file("textfile") + "/"
        try FileManager.default.createDirectory(atPath: sendFolder, withIntermediateDirectories: true)
        let sending = try await PushlineBinary.run([
            "run", try harness.writePipeline(), "--audience", harness.scratch.file("audience.ndjson"), "--output", harness.scratch.file("out"),
            "--shard", "0/2", "--metrics-file", sendFolder, "--metrics-interval", "0.1", "--no-progress", "--log-level", "error",
        ])
        await harness.stop()
        guard sending.status == 0 else { throw Failure(description: "the sending run failed (\(sending.status)): \(sending.stderr)") }
        let sendFiles = try FileManager.default.contentsOfDirectory(atPath: sendFolder)
        guard sendFiles.count == 1 else { throw Failure(description: "the sending run's metrics folder holds \(sendFiles)") }
        return RealRunMetrics(
            dryRun: try String(contentsOfFile: dryFolder + "/" + dryFiles[0], encoding: .utf8), dryRunFileName: dryFiles[0],
            sendingRun: try String(contentsOfFile: sendFolder + sendFiles[0], encoding: .utf8), sendingRunFileName: sendFiles[0]
        )
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}

/// promtool (Debian's `prometheus` package; scripts/install-promtool installs only it).
enum Promtool {
    static let path: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/local/bin", "/usr/bin"]
        return folders.map { $0 + "/promtool" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// `promtool check metrics` with `text` on its standard input.
    static func checkMetrics(_ text: String) async throws -> PushlineBinary.Outcome {
        let scratch = try Scratch()
        try text.write(toFile: scratch.file("metrics.prom"), atomically: true, encoding: .utf8)
        return try await PushlineBinary.run(["-c", #"exec "$0" check metrics < "$1""#, path!, scratch.file("metrics.prom")], executable: "/bin/sh")
    }
}

/// The dashboard's queries: every target's `expr` and every query variable's query.
struct Dashboard {
    var panelQueries: [String] = []
    /// Template variable → its query (the type for a datasource variable).
    var variables: [String: String] = [:]
    /// The panels' queries and the series selector of each `label_values(selector, label)` variable.
    var queries: [String] {
        panelQueries + variables.compactMap { name, query in
            guard name != "datasource", query.hasPrefix("label_values("), query.hasSuffix(")"), let comma = query.lastIndex(of: ",") else { return nil }
            return String(query[query.index(query.startIndex, offsetBy: "label_values(".count)..<comma])
        }
    }

    init(path: String) throws {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        guard let dashboard = object as? [String: Any], let panels = dashboard["panels"] as? [[String: Any]] else {
            throw RealRunMetrics.Failure(description: "\(path) is no dashboard")
        }
        func collect(_ panels: [[String: Any]]) {
            for panel in panels {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    if let expr = target["expr"] as? String { panelQueries.append(expr) }
                }
                collect(panel["panels"] as? [[String: Any]] ?? [])
            }
        }
        collect(panels)
        let templating = dashboard["templating"] as? [String: Any]
        for variable in templating?["list"] as? [[String: Any]] ?? [] {
            guard let name = variable["name"] as? String else { continue }
            if variable["type"] as? String == "query" {
                variables[name] = (variable["query"] as? [String: Any])?["query"] as? String ?? variable["query"] as? String ?? ""
            } else {
                variables[name] = variable["type"] as? String ?? ""
            }
        }
    }
}

/// The metric names a PromQL expression selects: identifiers that are not functions (followed by
/// `(`), keywords, label names in `{…}` or in `by`/`without`/`on`/`ignoring`/`group_left`/
/// `group_right` lists, or inside `[…]` and strings.
enum PromQLMetricNames {
    struct Unbalanced: Error {}

    /// Keywords, and the aggregation operators (`sum by (le) (…)` puts a clause between the
    /// operator and its parenthesis).
    static let keywords: Set<String> = [
        "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
        "atan2", "inf", "nan", "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
        "bottomk", "topk", "quantile",
    ]
    static let labelListKeywords: Set<String> = ["by", "without", "on", "ignoring", "group_left", "group_right"]

    static func of(_ query: String) throws -> [String] {
        let scalars = Array(query.unicodeScalars)
        var names: [String] = []
        var i = 0
        var depth = 0
        func isStart(_ c: Unicode.Scalar) -> Bool { c.isASCII && (c.properties.isAlphabetic || c == "_" || c == ":") }
        func isPart(_ c: Unicode.Scalar) -> Bool { isStart(c) || ("0"..."9").contains(c) }
        func skip(to close: Unicode.Scalar) throws {
            // From just after an opening `{`, `[` or `(` of a label list: to just after `close`, strings skipped.
            while i < scalars.count, scalars[i] != close {
                if scalars[i] == "\"" || scalars[i] == "'" || scalars[i] == "`" {
                    let quote = scalars[i]
                    i += 1
                    while i < scalars.count, scalars[i] != quote { i += scalars[i] == "\\" ? 2 : 1 }
                }
                i += 1
            }
            guard i < scalars.count else { throw Unbalanced() }
            i += 1
        }
        while i < scalars.count {
            let c = scalars[i]
            if c == "{" || c == "[" {
                i += 1
                try skip(to: c == "{" ? "}" : "]")
                continue
            }
            if c == "\"" || c == "'" || c == "`" {
                i += 1
                while i < scalars.count, scalars[i] != c { i += scalars[i] == "\\" ? 2 : 1 }
                guard i < scalars.count else { throw Unbalanced() }
                i += 1
                continue
            }
            if c == "(" {
                i += 1
                depth += 1
                continue
            }
            if c == ")" {
                depth -= 1
                guard depth >= 0 else { throw Unbalanced() }
                i += 1
                continue
            }
            if c == "$" {
                // A Grafana variable outside a selector: not a metric.
                i += 1
                while i < scalars.count, isPart(scalars[i]) { i += 1 }
                continue
            }
            if ("0"..."9").contains(c) || c == "." {
                // A number (or a duration such as 5m): never a name.
                while i < scalars.count, isPart(scalars[i]) || scalars[i] == "." { i += 1 }
                continue
            }
            if isStart(c) {
                var word = ""
                while i < scalars.count, isPart(scalars[i]) {
                    word.unicodeScalars.append(scalars[i])
                    i += 1
                }
                var next = i
                while next < scalars.count, scalars[next] == " " { next += 1 }
                let lowered = word.lowercased()
                if labelListKeywords.contains(lowered) {
                    // `by (le, provider)`: a list of labels, when a list follows.
                    if next < scalars.count, scalars[next] == "(" {
                        i = next + 1
                        try skip(to: ")")
                    }
                } else if !keywords.contains(lowered), next >= scalars.count || scalars[next] != "(" {
                    // Neither a keyword nor a function.
                    names.append(word)
                }
                continue
            }
            i += 1
        }
        guard depth == 0 else { throw Unbalanced() }
        return names
    }
}
