import Foundation
import Logging
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import Testing

/// The Prometheus file a run writes (`--metrics-file`): it parses, and after the run its counters
/// are `summary.json`'s numbers, for a dry run and for a sending run against the emulator.
@Suite("Metrics file", .serialized)
struct MetricsFileTests {
    /// Per provider and outcome, per outcome and reason, and the line counts: each equal to
    /// summary.json's (every series the summary has a number for, and no other with a count).
    static func expectCountersMatch(_ metrics: PrometheusText, summary: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let providers = try #require(summary["providers"] as? [String: [String: Int]], sourceLocation: sourceLocation)
        var summed = 0
        for (provider, row) in providers {
            for (outcome, count) in row where outcome != "devices" {
                let value = metrics.value("pushline_devices_total", ["provider": provider, "outcome": outcome])
                if count > 0 || value != nil {
                    #expect(value == Double(count), "\(provider) \(outcome)", sourceLocation: sourceLocation)
                }
                summed += count
            }
        }
        let metricTotal = metrics.samples(named: "pushline_devices_total").reduce(0) { $0 + $1.value }
        let devices = try #require(summary["devices"] as? [String: Any], sourceLocation: sourceLocation)
        #expect(metricTotal == Double(summed) && summed == devices["read"] as? Int, sourceLocation: sourceLocation)
        #expect(metrics.value("pushline_devices_read_total") == Double(devices["read"] as? Int ?? -1), sourceLocation: sourceLocation)

        for (outcome, key) in [("rejected", "rejected_by_reason"), ("invalid_token", "invalid_token_by_reason"), ("failed", "failed_by_reason"), ("skipped", "skipped_by_reason"), ("unsent", "unsent_by_reason")] {
            let reasons = try #require(devices[key] as? [String: Int], sourceLocation: sourceLocation)
            for (reason, count) in reasons {
                #expect(metrics.value("pushline_device_reasons_total", ["outcome": outcome, "reason": reason]) == Double(count), "\(outcome) \(reason)", sourceLocation: sourceLocation)
            }
            let series = metrics.samples(named: "pushline_device_reasons_total").filter { $0.labels["outcome"] == outcome }
            #expect(series.reduce(0) { $0 + $1.value } == Double(reasons.values.reduce(0, +)), "\(outcome) has no other reason", sourceLocation: sourceLocation)
        }
        let lines = try #require(summary["lines"] as? [String: Int], sourceLocation: sourceLocation)
        for kind in ["read", "blank", "rejected"] {
            #expect(metrics.value("pushline_lines_total", ["kind": kind]) == Double(lines[kind] ?? -1), "lines \(kind)", sourceLocation: sourceLocation)
        }
        #expect(metrics.value("pushline_run_finished") == 1, sourceLocation: sourceLocation)
        #expect(metrics.value("pushline_run_exit_code") == Double(summary["exit_code"] as? Int ?? -1), sourceLocation: sourceLocation)
        let input = try #require(summary["input"] as? [String: Any], sourceLocation: sourceLocation)
        #expect(metrics.value("pushline_audience_bytes_read") == Double(input["bytes_read"] as? Int ?? -1), sourceLocation: sourceLocation)
        // Every counter's type is declared.
        for sample in metrics.samples where sample.name.hasSuffix("_total") {
            #expect(metrics.types[sample.name] == "counter", "\(sample.name)", sourceLocation: sourceLocation)
        }
    }

    /// Reads the file a run wrote: every family has `# HELP` and `# TYPE` and is one of
    /// `RunMetrics.families` (of that type, with that help), every series carries the run's
    /// `campaign` and `shard` (none when not given) and no other label than its family's. Returns
    /// the samples without those two labels.
    static func readFile(_ path: String, campaign: String, shard: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> PrometheusText {
        try readText(String(contentsOfFile: path, encoding: .utf8), campaign: campaign, shard: shard, sourceLocation: sourceLocation)
    }

    static func readText(_ text: String, campaign: String, shard: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> PrometheusText {
        let file = try PrometheusText(text)
        #expect(!file.samples.isEmpty, sourceLocation: sourceLocation)
        #expect(Set(file.types.keys) == Set(file.help.keys), "a HELP for every TYPE", sourceLocation: sourceLocation)
        for (name, type) in file.types {
            let family = try #require(RunMetrics.families[name], "\(name) is one of RunMetrics.families", sourceLocation: sourceLocation)
            #expect(type == family.kind.rawValue && file.help[name] == family.help, "\(name)", sourceLocation: sourceLocation)
        }
        for sample in file.samples {
            let familyName = file.family(of: sample.name)
            let family = try #require(RunMetrics.families[familyName], "\(sample.name) has a family", sourceLocation: sourceLocation)
            #expect(sample.labels["campaign"] == campaign && sample.labels["shard"] == shard, "\(sample.name) \(sample.labels)", sourceLocation: sourceLocation)
            var expected = Set(family.labels + ["campaign"] + (shard == nil ? [] : ["shard"]))
            if family.kind == .histogram, sample.name.hasSuffix("_bucket") { expected.insert("le") }
            #expect(Set(sample.labels.keys) == expected, "\(sample.name) \(sample.labels)", sourceLocation: sourceLocation)
        }
        return file.dropping(["campaign", "shard"])
    }

    static func observation(metricsFile: String, audience: String, sending: Bool) -> RunObservation {
        var settings = ObservationSettings()
        settings.progress = .never
        settings.metricsFile = metricsFile
        var logger = Logger(label: "metrics-test")
        logger.logLevel = .error
        return RunObservation(settings: settings, audiencePath: audience, sending: sending, liveLine: nil, logger: logger)
    }

    @Test func aDryRunsCountersEqualItsSummary() async throws {
        let scratch = try Scratch()
        let pipeline = try writePipeline(demoStylePipeline, in: scratch)
        // 40 lines: 30 with an iOS and an Android device, 4 with an unknown platform and 3 iOS
        // devices without a token (rejected before routing: unrouted), 2 malformed, 1 blank.
        var text = ""
        for n in 0..<30 {
            text += #"{"id":"c\#(n)","customer":{"first_name":"A"},"event":{"event_title":"t"},"devices":[{"platform":"ios","token":"\#(TestTokens.apns(n))"},{"platform":"android","token":"\#(TestTokens.fcm(n))"}]}"# + "\n"
        }
        for n in 0..<4 { text += #"{"id":"u\#(n)","devices":[{"platform":"blackberry","token":"x"}]}"# + "\n" }
        for n in 0..<3 { text += #"{"id":"b\#(n)","devices":[{"platform":"ios"}]}"# + "\n" }
        text += "{\"id\":\n{not json\n\n"
        let audience = scratch.file("audience.ndjson")
        try text.write(toFile: audience, atomically: true, encoding: .utf8)
        let loaded = try PipelineLoader.load(path: pipeline, now: 1_800_000_000)
        let out = scratch.file("out")
        let metricsFile = scratch.file("pushline.prom")
        let observation = Self.observation(metricsFile: metricsFile, audience: audience, sending: false)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        var run = CampaignRun(pipeline: loaded, audiencePath: audience, outputFolder: out, workers: 2, logger: logger)
        run.observer = observation.observer
        let report = await observation.observe { [run] in await run.run() }
        #expect(report.reconciled)

        let metrics = try Self.readFile(metricsFile, campaign: "e2e")
        let summary = try readSummary(out)
        try Self.expectCountersMatch(metrics, summary: summary)
        // What the audience holds, counted here, not read from the run.
        #expect(metrics.value("pushline_devices_total", ["provider": "apns", "outcome": "written"]) == 30)
        #expect(metrics.value("pushline_devices_total", ["provider": "fcm", "outcome": "written"]) == 30)
        #expect(metrics.value("pushline_devices_total", ["provider": "unrouted", "outcome": "rejected"]) == 7)
        #expect(metrics.value("pushline_device_reasons_total", ["outcome": "rejected", "reason": "unknown_platform"]) == 4)
        #expect(metrics.value("pushline_lines_total", ["kind": "rejected"]) == 2)
        #expect(metrics.value("pushline_audience_bytes") == Double(text.utf8.count))
        // The temporary file was renamed: only the final file is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("pushline.prom") } == ["pushline.prom"])
    }

    @Test(.timeLimit(.minutes(5)))
    func aSendingRunsCountersEqualItsSummary() async throws {
        var faults = FaultPlan(seed: 77, rates: FaultRates([
            .apnsUnregistered: 0.05, .apnsBadDeviceToken: 0.03, .fcmUnregistered: 0.05, .internalServerError: 0.02,
        ]))
        faults.retryAfterSeconds = 0
        let harness = try await SendingRunHarness.start(faults: faults)
        let text = SendingRunHarness.iosAndAndroidAudience(customers: 600)
        let audience = harness.scratch.file("audience.ndjson")
        try text.write(toFile: audience, atomically: true, encoding: .utf8)
        let metricsFile = harness.scratch.file("send.prom")
        let observation = Self.observation(metricsFile: metricsFile, audience: audience, sending: true)
        let report = try await harness.run(pipelinePath: try harness.writePipeline(), logs: LogRecorder(), observation: observation)
        await harness.stop()
        #expect(report.reconciled, "\(report.failure ?? "")")

        let metrics = try Self.readFile(metricsFile, campaign: "send-faults")
        let summary = try readSummary(harness.scratch.file("out"))
        try Self.expectCountersMatch(metrics, summary: summary)
        let devices = try #require(summary["devices"] as? [String: Any])
        #expect((devices["invalid_token"] as? Int ?? 0) > 0, "the fault plan makes some tokens invalid")
        let delivery = try #require(summary["delivery"] as? [String: [String: Any]])
        for provider in ["apns", "fcm"] {
            let lane = try #require(delivery[provider])
            let labels = ["provider": provider]
            #expect(metrics.value("pushline_requests_attempted_total", labels) == Double(lane["attempts"] as? Int ?? -1))
            #expect(metrics.value("pushline_requests_retried_total", labels) == Double(lane["retries"] as? Int ?? -1))
            #expect(metrics.value("pushline_connections_opened_total", labels).map { $0 >= 1 } == true)
            #expect(metrics.value("pushline_rate_per_second", labels) == lane["final_rate_per_second"] as? Double)
            // The latency histogram: one observation per request that got an answer, cumulative buckets.
            let latency = try #require(lane["latency"] as? [String: Any])
            #expect(metrics.value(RunMetrics.latencyMetric + "_count", labels) == Double(latency["count"] as? Int ?? -1))
            let buckets = metrics.samples(named: RunMetrics.latencyMetric + "_bucket").filter { $0.labels["provider"] == provider }
            #expect(buckets.count == RunMetrics.latencyBuckets.count + 1)
            let ordered = buckets.sorted { (Double($0.labels["le"]!) ?? .infinity) < (Double($1.labels["le"]!) ?? .infinity) }
            #expect(zip(ordered, ordered.dropFirst()).allSatisfy { $0.value <= $1.value })
            #expect(ordered.last?.labels["le"] == "+Inf" && ordered.last?.value == Double(latency["count"] as? Int ?? -1))
        }
        #expect(metrics.types[RunMetrics.latencyMetric] == "histogram")
    }

    @Test func reasonLabelsComeFromAFixedVocabulary() {
        #expect(MetricReasons.label("Unregistered", outcome: .invalidToken) == "Unregistered")
        #expect(MetricReasons.label("UNREGISTERED", outcome: .invalidToken) == "UNREGISTERED")
        #expect(MetricReasons.label("retries_exhausted", outcome: .failed) == "retries_exhausted")
        #expect(MetricReasons.label("http_503", outcome: .failed) == "http_503")
        // Text a server made up never becomes a label value.
        #expect(MetricReasons.label("SomethingNew", outcome: .failed) == "other")
        #expect(MetricReasons.label("http_5030", outcome: .failed) == "other")
        #expect(MetricReasons.label("made_up_by_a_server", outcome: .invalidToken) == "other")
        // The program's own reject and skip codes pass; anything else does not.
        #expect(MetricReasons.label("unknown_platform", outcome: .rejected) == "unknown_platform")
        #expect(MetricReasons.label("Bad \"code\"\n", outcome: .rejected) == "other")
    }

    @Test func theParserRefusesWhatIsNotTheFormat() {
        for bad in ["x{a=\"1\"} \n", "x{a=1} 1\n", "1x 2\n", "x 1", "x{a=\"1\",a=\"2\"} 1\n", "x one\n", "# TYPE x bogus\n"] {
            #expect(throws: PrometheusText.ParseError.self, "\(bad)") { try PrometheusText(bad) }
        }
        let good = try? PrometheusText("# TYPE x counter\nx{a=\"q\\\"\"} 3\ny 1.5 1700000000\n")
        #expect(good?.value("x", ["a": "q\""]) == 3 && good?.value("y") == 1.5)
    }
}
