import Foundation
import PushlineCore
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Issue 13's "Done when" for sending: a `pushline run` sending to the emulator (real TLS,
/// HTTP/2, JWT and OAuth) is killed with SIGKILL twice and resumed; every device ends exactly
/// once in the results, a device the emulator received twice is marked `possible_duplicate`,
/// and no more were received twice than the duplicate window allows.
extension ResumeEndToEnd {
@Suite("Resume: a sending run killed with SIGKILL")
struct ResumeSendingTests {
    static let customers = 8_000
    static let malformedEvery = 500
    static let window = 400

    /// Customers with an iOS and an Android device each, a malformed line now and then; returns
    /// the good lines' customer numbers by line.
    static func writeAudience(_ path: String) throws -> [Int: Int] {
        var text = ""
        var goodLines: [Int: Int] = [:]
        var line = 0
        for n in 0..<Self.customers {
            if n > 0 && n % Self.malformedEvery == 0 {
                line += 1
                text += "{\"id\":\"bad-\(n)\",\"devices\":[\n"
            }
            line += 1
            goodLines[line] = n
            text += "{\"id\":\"c-\(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"}]}\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return goodLines
    }

    /// The smallest window: one request unsettled at a time, the horizon moved for each, every
    /// device still sent once and the run reconciled. (An audience this small ends its input
    /// before the batch window fills, so it does not show a wait that only the input's end
    /// could release: the sink's `max(1, window / 2)` rules that out by construction.)
    @Test(.timeLimit(.minutes(3)))
    func aWindowOfOneStillSendsEveryDevice() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        try SendingRunHarness.iosAndAndroidAudience(customers: 60).write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        let folder = harness.scratch.file("out")
        let run = try await PushlineBinary.run(["run", pipeline, "--output", folder, "--duplicate-window", "1", "--log-level", "error"])
        await harness.stop()
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try readSummary(folder)
        #expect(summary["reconciled"] as? Bool == true)
        #expect((summary["devices"] as? [String: Any])?["sent"] as? Int == 120, "\(summary)")
    }

    @Test(.timeLimit(.minutes(10)))
    func killedTwiceAndResumedSendsEveryDeviceOnce() async throws {
        var faults = FaultPlan(seed: 13, rates: FaultRates([.apnsUnregistered: 0.02, .fcmUnregistered: 0.02]))
        faults.retryAfterSeconds = 0
        let harness = try await SendingRunHarness.start(faults: faults)
        let pipeline = try harness.writePipeline()
        let goodLines = try Self.writeAudience(harness.scratch.file("audience.ndjson"))
        let folder = harness.scratch.file("out")
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--duplicate-window", "\(Self.window)", "--log-level", "notice"] + extra
        }

        var kills = 0
        for target in [Self.customers / 2, Self.customers] {
            let run = try KillableRun.start(arguments(kills == 0 ? ["--now", "1800000000"] : ["--resume"]), log: harness.scratch.file("run-\(kills).log"))
            let reached = run.wait(for: folder) { checkpointRuns(folder) == kills + 1 && resultLineCount(folder, "sent.ndjson") >= target }
            let exit = run.kill()
            try #require(reached && exit == ChildExit(code: SIGKILL, signalled: true), "the run ended before \(target) devices were sent: \(run.stderr)")
            // The pipeline names a ca_file, so the run held a combined CA bundle; it had no name.
            #expect(leftoverCABundles(of: run.process.processIdentifier).isEmpty)
            kills += 1
        }
        let last = try await PushlineBinary.run(arguments(["--resume"]))
        let stats = harness.emulator.stats()
        await harness.stop()
        // Rejects (the malformed lines) and invalid tokens make the run's status 3 or 7; what
        // matters is that it finished and reconciled.
        #expect([0, 3, 7].contains(last.status), "\(last.stderr)")
        let summary = try readSummary(folder)
        #expect(summary["reconciled"] as? Bool == true, "\(last.stderr)")
        #expect((summary["resume"] as? [String: Any])?["runs"] as? Int == 3)

        // Every device of every good line exactly once across the three result files.
        var outcomes: [String: Int] = [:]
        var marked: Set<String> = []
        var fileOf: [String: String] = [:]
        for name in ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson"] {
            for record in try readResults(folder + "/" + name) {
                let key = "\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)"
                outcomes[key, default: 0] += 1
                fileOf[key] = name
                if record["possible_duplicate"] as? Bool == true { marked.insert(key) }
            }
        }
        let expected = Set(goodLines.keys.flatMap { ["\($0)/0", "\($0)/1"] })
        #expect(Set(outcomes.keys) == expected)
        #expect(outcomes.values.allSatisfy { $0 == 1 }, "\(outcomes.filter { $0.value > 1 }.count) devices with more than one outcome")
        #expect(try readResults(folder + "/unsent.ndjson").isEmpty)
        // The malformed lines are rejected once each, however often their batch was read.
        let rejected = try readResults(folder + "/rejects.ndjson").compactMap { $0["line"] as? Int }
        #expect(rejected.count == Self.customers / Self.malformedEvery - 1)
        #expect(Set(rejected).count == rejected.count)

        // A device the emulator delivered twice is marked; no more were sent again than the
        // window allows per kill (a dead token answered twice is resent, not a duplicate).
        var resent = 0
        var deliveredTwice = 0
        for (line, n) in goodLines {
            for (device, token, seen) in [(0, TestTokens.apns(n), stats.apns.tokens), (1, TestTokens.fcm(n), stats.fcm.tokens)] {
                let received = seen[token] ?? EmulatorStats.TokenStats()
                #expect(received.requests >= 1, "line \(line) device \(device) never reached the emulator")
                if received.requests > 1 { resent += 1 }
                if received.delivered > 1 {
                    deliveredTwice += 1
                    let isMarked = marked.contains("\(line)/\(device)")
                    #expect(isMarked, "line \(line) device \(device) was delivered \(received.delivered) times, unmarked, in \(fileOf["\(line)/\(device)"] ?? "no file")")
                }
            }
        }
        #expect(resent <= kills * Self.window, "\(resent) devices sent again, more than the window allows")
        let counts = try #require(summary["devices"] as? [String: Any])
        #expect(counts["possible_duplicates"] as? Int == marked.count)
        // Marked: what may have been on the wire (≤ the window per lane) and what the journal's
        // horizon let through but never left (≤ a window ahead per lane), per kill.
        #expect(marked.count <= kills * 2 * 2 * Self.window, "\(marked.count) marked")
        #expect(marked.count >= deliveredTwice)
    }

    /// Issue 34, item 4: with the default duplicate window (10,000, far more than the 400
    /// streams the lanes have), a kill marks only what the wire logs say may have been on the
    /// wire: at most twice the devices really delivered twice plus twice the streams, where the
    /// journal's horizons alone would mark the whole window.
    @Test(.timeLimit(.minutes(10)))
    func aKillMarksOnlyWhatMayHaveBeenOnTheWire() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        let goodLines = try Self.writeAudience(harness.scratch.file("audience.ndjson"))
        let folder = harness.scratch.file("out")
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--log-level", "notice"] + extra
        }
        let run = try KillableRun.start(arguments(["--now", "1800000000"]), log: harness.scratch.file("run.log"))
        let reached = run.wait(for: folder) { resultLineCount(folder, "sent.ndjson") >= Self.customers / 2 }
        let exit = run.kill()
        try #require(reached && exit.signalled, "the run ended before it could be killed: \(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/wire-apns.log"))
        // What the horizons alone would mark: devices of the lines after the watermark, up to each
        // provider's horizon, without a result line.
        let journal = try #require(try CheckpointJournal.read(from: folder))
        var recorded: Set<String> = []
        let entries = try FileManager.default.contentsOfDirectory(atPath: folder)
        for name in ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson"] {
            guard let file = entries.first(where: { $0.hasPrefix(name) }) else { continue }
            for record in try readResults(folder + "/" + file) { recorded.insert("\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)") }
        }
        var byHorizon = 0
        for line in goodLines.keys where line > journal.settledThroughLine {
            for (device, provider) in [(0, Provider.apns), (1, Provider.fcm)] where line <= journal.horizonLines[provider] ?? 0 {
                if !recorded.contains("\(line)/\(device)") { byHorizon += 1 }
            }
        }

        let resumed = try await PushlineBinary.run(arguments(["--resume"]))
        let stats = harness.emulator.stats()
        await harness.stop()
        #expect([0, 3, 7].contains(resumed.status), "\(resumed.stderr)")
        var marked: Set<String> = []
        var outcomes = 0
        for name in ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson"] {
            for record in try readResults(folder + "/" + name) {
                outcomes += 1
                if record["possible_duplicate"] as? Bool == true { marked.insert("\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)") }
            }
        }
        #expect(outcomes == 2 * goodLines.count)
        var deliveredTwice = 0
        var unmarked = 0
        for (line, n) in goodLines {
            for (device, token, tokens) in [(0, TestTokens.apns(n), stats.apns.tokens), (1, TestTokens.fcm(n), stats.fcm.tokens)] where (tokens[token]?.delivered ?? 0) > 1 {
                deliveredTwice += 1
                if !marked.contains("\(line)/\(device)") { unmarked += 1 }
            }
        }
        #expect(unmarked == 0, "\(unmarked) devices delivered twice, unmarked")
        // Two providers, two connections of 100 streams each.
        let streams = 2 * 2 * 100
        #expect(marked.count <= 2 * deliveredTwice + 2 * streams, "\(marked.count) marked, \(deliveredTwice) delivered twice, \(byHorizon) by the horizons alone")
        print("wire-log marks: \(marked.count) marked, \(deliveredTwice) delivered twice, \(byHorizon) would be marked by the horizons alone")
        // A finished run has nothing left to mark: its wire logs are gone.
        #expect(!FileManager.default.fileExists(atPath: folder + "/wire-apns.log"))
    }

    /// SIGTERM with no drain time: what was queued or on the wire is listed unsent (the latter as
    /// possible duplicates); `--resume` sends them all, marks only the ones that were on the wire,
    /// and leaves unsent.ndjson empty.
    @Test(.timeLimit(.minutes(10)))
    func aStoppedRunIsFinishedByAResume() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        let goodLines = try Self.writeAudience(harness.scratch.file("audience.ndjson"))
        let folder = harness.scratch.file("out")
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--drain-timeout", "0", "--log-level", "notice"] + extra
        }
        let run = try KillableRun.start(arguments(["--now", "1800000000"]), log: harness.scratch.file("run.log"))
        let reached = run.wait(for: folder) { resultLineCount(folder, "sent.ndjson") >= Self.customers / 2 }
        run.signal(SIGTERM)
        let exit = run.process.waitForExit()
        try #require(reached && exit == ChildExit(code: 6, signalled: false), "\(exit): \(run.stderr)")
        let unsent = try readResults(folder + "/unsent.ndjson")
        #expect(!unsent.isEmpty)
        let onTheWire = Set(unsent.filter { $0["possible_duplicate"] as? Bool == true }.map { "\($0["line"] as? Int ?? -1)/\($0["device"] as? Int ?? -1)" })

        let resumed = try await PushlineBinary.run(arguments(["--resume"]))
        let stats = harness.emulator.stats()
        await harness.stop()
        // 7: a request can time out against the debug emulator on a loaded machine (it is then in failed.ndjson).
        #expect([0, 3, 7].contains(resumed.status), "\(resumed.stderr)")
        #expect(try readResults(folder + "/unsent.ndjson").isEmpty)
        var seen: [String: Int] = [:]
        var marked: Set<String> = []
        for record in try readResults(folder + "/sent.ndjson") + readResults(folder + "/invalid-tokens.ndjson") + readResults(folder + "/failed.ndjson") {
            let key = "\(record["line"] as? Int ?? -1)/\(record["device"] as? Int ?? -1)"
            seen[key, default: 0] += 1
            if record["possible_duplicate"] as? Bool == true { marked.insert(key) }
        }
        let expected = Set(goodLines.keys.flatMap { ["\($0)/0", "\($0)/1"] })
        let sameDevices = Set(seen.keys) == expected
        #expect(sameDevices && seen.values.allSatisfy { $0 == 1 })
        #expect(marked == onTheWire, "\(marked.count) marked, \(onTheWire.count) were on the wire at the stop")
        for (line, n) in goodLines {
            for (device, token, tokens) in [(0, TestTokens.apns(n), stats.apns.tokens), (1, TestTokens.fcm(n), stats.fcm.tokens)] where (tokens[token]?.delivered ?? 0) > 1 {
                let isMarked = marked.contains("\(line)/\(device)")
                #expect(isMarked, "line \(line) device \(device) delivered twice, unmarked")
            }
        }
        #expect(try readSummary(folder)["reconciled"] as? Bool == true)
    }
}
}
