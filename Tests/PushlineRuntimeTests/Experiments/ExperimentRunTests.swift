import Foundation
import Logging
import PushlineCore
import PushlineDelivery
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Issue 38's pipeline: two variants over a campaign's notification and a 10 % holdout.
/// Variant a changes the title only; variant b the text and the iOS sound (the campaign's
/// `thread_id` must stay).
let experimentPipeline = """
name: exp
personalization: liquid
device_types: [ios, android]
notification:
  title: "Hi {{ customer.first_name }}"
  alert: "Your {{ event.event_title }} is waiting"
  ios: { sound: default, thread_id: winback }
  android: { notification_channel: promos }
experiment:
  id: copy-test-1
  control: 10%
  variants:
    - name: a
      weight: 1
      notification: { title: "A {{ customer.first_name }}" }
    - name: b
      weight: 1
      notification: { alert: "B copy", ios: { sound: chime } }
providers:
  apns: { topic: com.example.app }
  fcm: { project_id: demo }
"""

/// What one experiment run wrote: each request line's recipient and variant, the holdout's
/// recipients, and the summary.
struct ExperimentResults {
    var requests: [[String: Any]] = []
    var rejects: [[String: Any]] = []
    var holdout: [String] = []
    var holdoutIDs: [String] = []
    var summary: [String: Any] = [:]

    init(folder: String) throws {
        for name in ["requests-apns.ndjson", "requests-fcm.ndjson"] { requests += try readLines(folder + "/" + name) }
        rejects = try readLines(folder + "/rejects.ndjson")
        holdout = try String(contentsOfFile: folder + "/holdout.ndjson", encoding: .utf8).split(separator: "\n").map(String.init)
        holdoutIDs = try holdout.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(object["id"] ?? "")"
        }
        summary = try readSummary(folder)
    }

    /// Each recipient's variant, from the request lines; a recipient with two is recorded as an issue.
    func variants() -> [String: String] {
        var found: [String: String] = [:]
        for request in requests {
            let recipient = "\(request["recipient"] ?? "")"
            guard let variant = request["variant"] as? String else {
                Issue.record("a request line without a variant: \(request)")
                continue
            }
            if let earlier = found.updateValue(variant, forKey: recipient), earlier != variant {
                Issue.record("recipient \(recipient) has devices in variants \(earlier) and \(variant)")
            }
        }
        return found
    }

    var variantRows: [String: [String: Int]] {
        (summary["variants"] as? [String: Any] ?? [:]).compactMapValues { $0 as? [String: Int] }
    }
}

@Suite("Experiments: variants and a holdout")
struct ExperimentRunTests {
    static func audience(_ scratch: Scratch, count: Int = 3000) throws -> String {
        let path = scratch.file("audience.ndjson.gz")
        _ = try AudienceGenerator(seed: 21, hostileFraction: 0.02).write(count: count, to: path)
        return path
    }

    @Test func aDryRunSplitsRecipientsMergesNotificationsAndCountsEachVariant() async throws {
        let scratch = try Scratch()
        let audience = try Self.audience(scratch)
        let report = try await runDry(try writePipeline(experimentPipeline, in: scratch), audience: audience, output: scratch.file("out"), workers: 3)
        #expect(report.reconciled && report.counts.reconcilesByArm, "\(report.failure ?? "")")
        let results = try ExperimentResults(folder: scratch.file("out"))
        let variants = results.variants()

        // Every device of a recipient in one variant; the merged notifications.
        for request in results.requests {
            let body = try #require(request["body"] as? [String: Any])
            let variant = try #require(request["variant"] as? String)
            guard request["platform"] as? String == "ios", let aps = body["aps"] as? [String: Any], let alert = aps["alert"] as? [String: Any] else { continue }
            let title = alert["title"] as? String ?? ""
            #expect(aps["thread-id"] as? String == "winback", "the campaign's thread_id stays in every variant")
            if variant == "a" {
                #expect(title.hasPrefix("A ") && aps["sound"] as? String == "default")
                #expect((alert["body"] as? String)?.hasSuffix(" is waiting") == true)
            } else {
                #expect(title.hasPrefix("Hi ") && aps["sound"] as? String == "chime" && alert["body"] as? String == "B copy")
            }
        }

        // The holdout: its lines as read, once each, and its recipients in no other file.
        #expect(Set(results.holdoutIDs).count == results.holdoutIDs.count)
        #expect(Set(results.holdoutIDs).isDisjoint(with: variants.keys))
        let rejectedRecipients = Set(results.rejects.compactMap { $0["recipient"] as? String })
        #expect(Set(results.holdoutIDs).isDisjoint(with: rejectedRecipients))
        let share = Double(results.holdoutIDs.count) / 3000
        #expect(share > 0.07 && share < 0.13, "holdout share \(share)")

        // Reject lines of a recipient say its variant.
        for reject in results.rejects where reject["device"] is Int && reject["recipient"] is String {
            let variant = reject["variant"] as? String
            #expect(variant == "a" || variant == "b", "\(reject)")
        }

        // Per variant counts: each row adds up, the rows add up to the run's, and match the files.
        let rows = results.variantRows
        #expect(Set(rows.keys) == ["a", "b", "control"])
        var devices = 0, written = 0, skipped = 0, rejected = 0
        for (name, row) in rows {
            let settled = ["written", "sent", "invalid_token", "rejected", "failed", "skipped", "unsent"].reduce(0) { $0 + row[$1, default: 0] }
            #expect(row["devices"] == settled, "\(name): \(row)")
            devices += row["devices", default: 0]
            written += row["written", default: 0]
            skipped += row["skipped", default: 0]
            rejected += row["rejected", default: 0]
            if name != "control" {
                #expect(row["written"] == results.requests.filter { $0["variant"] as? String == name }.count)
            }
        }
        #expect(devices == report.counts.devices && written == report.counts.writtenTotal)
        #expect(skipped == report.counts.skippedTotal && rejected == report.counts.rejectedTotal)
        #expect(rows["control"]?["devices"] == report.counts.skipped["holdout"])
        // Recipients: every routed line in one arm; the control's are holdout.ndjson's lines.
        #expect(rows.values.reduce(0) { $0 + ($1["recipients"] ?? 0) } == report.counts.lines - report.counts.linesRejected)
        #expect(rows["control"]?["recipients"] == results.holdoutIDs.count)
        for name in ["a", "b"] {
            #expect(rows[name]?["recipients"] ?? 0 >= Set(variants.filter { $0.value == name }.keys).count)
        }
        #expect(rows["control"]?["skipped"] == rows["control"]?["devices"])
        let experiment = try #require(results.summary["experiment"] as? [String: Any])
        #expect(experiment["id"] as? String == "copy-test-1" && experiment["control_share"] as? Double == 0.1)

        // The table printed at the end has a row per variant.
        let table = SummaryTable.render(report)
        for name in ["a", "b", "control"] {
            #expect(table.contains { $0.hasPrefix(name + " ") }, "\(table)")
        }
    }

    /// The same campaign run twice writes the same files; `render --line` shows each line's
    /// variant as the run chose it.
    @Test func aRerunAssignsTheSameVariantsAndRenderShowsThem() async throws {
        let scratch = try Scratch()
        let audience = try Self.audience(scratch, count: 800)
        let pipeline = try writePipeline(experimentPipeline, in: scratch)
        _ = try await runDry(pipeline, audience: audience, output: scratch.file("one"), workers: 1)
        _ = try await runDry(pipeline, audience: audience, output: scratch.file("two"), workers: 3)
        for name in ["requests-apns.ndjson", "requests-fcm.ndjson", "rejects.ndjson", "holdout.ndjson"] {
            let one = try Data(contentsOf: URL(fileURLWithPath: scratch.file("one/" + name)))
            let two = try Data(contentsOf: URL(fileURLWithPath: scratch.file("two/" + name)))
            #expect(one == two, "\(name) differs between two runs")
        }
        let results = try ExperimentResults(folder: scratch.file("one"))
        let variants = results.variants()
        let loaded = try PipelineLoader.load(path: pipeline, now: 1_800_000_000)
        for request in results.requests.prefix(20) {
            let preview = try LinePreview.render(pipeline: loaded, audiencePath: audience, line: try #require(request["line"] as? Int))
            #expect(preview.variant == variants["\(request["recipient"] ?? "")"])
        }
        let firstHoldout = try #require(results.holdout.first)
        let holdoutLine = try #require(try readAudienceLines(audience).firstIndex(of: firstHoldout)) + 1
        let preview = try LinePreview.render(pipeline: loaded, audiencePath: audience, line: holdoutLine)
        #expect(preview.variant == "control" && preview.requests.isEmpty)
        #expect(preview.counts.skipped["holdout"] == preview.counts.devices)
    }

    /// A sending run: every sent and failed line says its variant, and `summary.json`'s
    /// variants count what was sent and failed.
    @Test func sendingRunLinesCarryTheVariant() async throws {
        let scratch = try Scratch()
        var lines: [String] = []
        for i in 0..<60 {
            lines.append(line("\"r\(i)\"", [("ios", String(format: "%064x", i)), ("android", "fcm-\(i)-" + String(repeating: "A", count: 40))]))
        }
        let apns = ScriptedLane(provider: .apns) { _ in .settle(.sent(providerID: "ok", attempts: 1)) }
        let fcm = ScriptedLane(provider: .fcm) { _ in .settle(.failed(reason: "unavailable", httpStatus: 503, attempts: 3)) }
        let report = try await runSend(experimentPipeline, lines: lines, lanes: [apns, fcm], in: scratch)
        #expect(report.reconciled && report.counts.reconcilesByArm, "\(report.failure ?? "")")
        let sent = try readLines(scratch.file("out/sent.ndjson"))
        let failed = try readLines(scratch.file("out/failed.ndjson"))
        var variantOf: [String: String] = [:]
        for entry in sent + failed {
            let variant = try #require(entry["variant"] as? String, "\(entry)")
            let recipient = try #require(entry["recipient"] as? String)
            if let earlier = variantOf.updateValue(variant, forKey: recipient) { #expect(earlier == variant) }
        }
        let holdout = try resultLines(scratch, "holdout.ndjson")
        #expect(variantOf.count + holdout.count == 60)
        let summary = try readSummary(scratch.file("out"))
        let rows = try #require(summary["variants"] as? [String: [String: Int]])
        for name in ["a", "b"] {
            let recipients = variantOf.values.filter { $0 == name }.count
            #expect(rows[name]?["sent"] == recipients && rows[name]?["failed"] == recipients, "\(name): \(rows[name] ?? [:])")
        }
        #expect(rows["control"]?["skipped"] == 2 * holdout.count)
    }
}

extension ExperimentRunTests {
    /// Size limits hold per variant's final bytes: a variant whose iOS alert cannot fit 4 KiB
    /// rejects its own iOS devices (`payload_too_large`, with its name, through APNs and through
    /// FCM's apns block alike), the other variant's are written, and its Android devices (whose
    /// text is the campaign's) are written too.
    @Test func sizeLimitsHoldForEachVariantsOwnBytes() async throws {
        let scratch = try Scratch()
        let long = String(repeating: "x", count: 4200)
        let pipeline = experimentPipeline.replacingOccurrences(of: "notification: { alert: \"B copy\", ios: { sound: chime } }", with: "notification: { ios: { alert: \"\(long)\" } }")
        #expect(pipeline != experimentPipeline)
        let audience = try Self.audience(scratch, count: 400)
        let report = try await runDry(try writePipeline(pipeline, in: scratch), audience: audience, output: scratch.file("out"))
        #expect(report.reconciled && report.counts.reconcilesByArm, "\(report.failure ?? "")")
        let results = try ExperimentResults(folder: scratch.file("out"))
        let tooLarge = results.rejects.filter { $0["code"] as? String == "payload_too_large" }
        #expect(!tooLarge.isEmpty)
        #expect(tooLarge.allSatisfy { $0["variant"] as? String == "b" && $0["platform"] as? String == "ios" }, "\(tooLarge.prefix(3))")
        #expect(!results.requests.contains { $0["variant"] as? String == "b" && $0["platform"] as? String == "ios" })
        #expect(results.requests.contains { $0["variant"] as? String == "a" && $0["platform"] as? String == "ios" })
        #expect(results.requests.contains { $0["variant"] as? String == "b" && $0["platform"] as? String == "android" })
        #expect(results.variantRows["b"]?["rejected"] == tooLarge.count && results.variantRows["a"]?["rejected"] == 0)
    }
}

/// The audience's lines as text (a gzip file read through gzip -dc).
func readAudienceLines(_ path: String) throws -> [String] {
    let plain = path + ".plain"
    let gunzip = ChildProcess()
    gunzip.executableURL = URL(fileURLWithPath: "/bin/sh")
    gunzip.arguments = ["-c", "gzip -dc \"$0\" > \"$1\"", path, plain]
    try gunzip.run()
    try #require(gunzip.waitForExit().shellStatus == 0)
    return try String(contentsOfFile: plain, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

@Suite("Experiments: validation")
struct ExperimentValidationTests {
    static func pipeline(_ experiment: String) -> String {
        """
        name: exp
        device_types: [ios]
        notification:
          title: "Hi {{ customer.first_name }}"
          alert: "x"
          ios: { sound: default }
        providers:
          apns: { topic: com.example.app }
        experiment:
        \(experiment)
        """
    }

    static let twoVariants = """
          variants:
            - { name: a }
            - { name: b }
        """

    @Test(arguments: [
        ("  id: x\n  control: 100%\n" + twoVariants, "experiment.control", "holds out every recipient", 11),
        ("  id: x\n  control: 0.1\n" + twoVariants, "experiment.control", "expected a percentage such as 10%", 11),
        ("  id: x\n  control: ten%\n" + twoVariants, "experiment.control", "expected a percentage such as 10%", 11),
        ("  id: \"\"\n" + twoVariants, "experiment.id", "expected 1 to 128 bytes", 10),
        (twoVariants, "experiment.id", "is required in experiment", 10),
        ("  id: x\n  split: 5\n" + twoVariants, "experiment.split", "unknown key 'split' in experiment", 11),
        ("  id: x\n  variants:\n    - { name: a }\n", "experiment.variants", "at least 2 needed", 12),
        ("  id: x\n  variants:\n    - { name: a }\n    - { name: a }\n", "experiment.variants[1].name", "also the name of variants[0]", 13),
        ("  id: x\n  variants:\n    - { name: a, weight: 0 }\n    - { name: b }\n", "experiment.variants[0].weight", "must be greater than 0", 12),
        ("  id: x\n  variants:\n    - { name: a, weight: -2 }\n    - { name: b }\n", "experiment.variants[0].weight", "out of range", 12),
        ("  id: x\n  variants:\n    - { name: a, weight: \"{{ customer.w }}\" }\n    - { name: b }\n", "experiment.variants[0].weight", "cannot be personalized", 12),
        ("  id: x\n  variants:\n    - { name: a, weight: 1e300 }\n    - { name: b }\n", "experiment.variants[0].weight", "out of range", 12),
        ("  id: x\n  variants:\n    - { name: a, weight: .nan }\n    - { name: b }\n", "experiment.variants[0].weight", "expected a finite number", 12),
        ("  id: x\n  variants:\n    - { name: \"a\\r\\nb\" }\n    - { name: b }\n", "experiment.variants[0].name", "ASCII letters, digits", 12),
        ("  id: \"x\\0y\"\n" + twoVariants, "experiment.id", "without control characters", 10),
        ("  id: \"\(String(repeating: "i", count: 129))\"\n" + twoVariants, "experiment.id", "expected 1 to 128 bytes", 10),
        ("  id: x\n  control: \"99999999999999999999%\"\n" + twoVariants, "experiment.control", "expected a percentage such as 10%", 11),
        ("  id: x\n  variants:\n    - { name: \"a b\" }\n    - { name: b }\n", "experiment.variants[0].name", "ASCII letters, digits", 12),
        ("  id: x\n  variants:\n    - { name: control }\n    - { name: b }\n", "experiment.variants[0].name", "names the holdout", 12),
        ("  id: x\n  variants:\n    - { name: a, colour: red }\n    - { name: b }\n", "experiment.variants[0].colour", "unknown key 'colour'", 12),
        ("  id: x\n  variants:\n    - { name: a }\n    - { name: b, notification: { title: \"{{ customer.name \" } }\n", "experiment.variants[1].notification.title", "does not compile", 13),
        ("  id: x\n  variants:\n    - { name: a }\n    - { name: b, notification: { ios: { sond: x } } }\n", "experiment.variants[1].notification.ios.sond", "did you mean 'sound'?", 13),
        ("  id: x\n  variants:\n    - { name: a }\n    - { name: b, notification: { ios: { badge: \"+x\" } } }\n", "experiment.variants[1].notification.ios.badge", "expected an integer", 13),
    ] as [(String, String, String, Int)])
    func eachProblemIsReportedWithItsPathAndLine(experiment: String, path: String, message: String, line: Int) throws {
        let diagnostics = try Self.refusal(Self.pipeline(experiment))
        let diagnostic = try #require(diagnostics.first { $0.path == path }, "\(diagnostics)")
        #expect(diagnostic.message.contains(message), "\(diagnostic.message)")
        #expect(diagnostic.line == line && diagnostic.column > 0, "\(diagnostic)")
    }

    /// The diagnostics loading `yaml` gives (none, with an issue recorded, when it is accepted).
    static func refusal(_ yaml: String) throws -> [ConfigDiagnostic] {
        let scratch = try Scratch()
        let file = try writePipeline(yaml, in: scratch)
        do {
            _ = try PipelineLoader.load(path: file, now: 0)
            Issue.record("accepted: \(yaml)")
            return []
        } catch {
            return error.diagnostics
        }
    }

    /// Hostile shapes around the experiment: no notification to merge over, a notification that
    /// is not a mapping, variants that are not a list. Each a diagnostic, never a crash.
    @Test(arguments: [
        ("name: exp\nexperiment:\n  id: x\n  variants:\n    - { name: a, notification: { title: t } }\n    - { name: b }\n", "notification"),
        ("name: exp\nnotification: hello\nexperiment:\n  id: x\n  variants:\n    - { name: a, notification: { title: t } }\n    - { name: b }\n", "notification"),
        ("name: exp\nnotification: { alert: x }\nexperiment:\n  id: x\n  variants: { a: 1 }\n", "experiment.variants"),
        ("name: exp\nnotification: { alert: x }\nexperiment:\n  id: x\n  variants:\n    - { name: a, notification: [1, 2] }\n    - { name: b, notification: null }\n", "experiment.variants[0].notification"),
    ])
    func malformedShapesAreDiagnostics(yaml: String, path: String) throws {
        let diagnostics = try Self.refusal(yaml)
        #expect(diagnostics.contains { $0.path == path && $0.severity == .error }, "\(diagnostics)")
    }

    /// 27 variants are refused (2 to 26); every problem of a file is listed at once.
    @Test func tooManyVariantsAndEveryProblemAtOnce() throws {
        let many = (0..<27).map { "    - { name: v\($0) }" }.joined(separator: "\n")
        let diagnostics = try Self.refusal(Self.pipeline("  id: x\n  control: 200%\n  variants:\n" + many + "\n"))
        let paths = diagnostics.map(\.path)
        #expect(paths.contains("experiment.variants") && paths.contains("experiment.control"), "\(diagnostics)")
        #expect(diagnostics.first { $0.path == "experiment.variants" }?.message.contains("at most 26") == true)
    }
}
