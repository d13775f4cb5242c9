import Foundation
import PushlineCore
import PushlineEmulator
import PushlineRuntime
import PushlineTestSupport
import Testing

/// Issue 34, items 1 and 5: the command of a run that finished, run again by a scheduler or a
/// person, sends nothing and exits with that run's code; `--force` over a sending run's record
/// sends again only with `--resend`. Real `pushline` processes against the emulator, which counts
/// every request it receives.
extension ResumeEndToEnd {
@Suite("Reruns: a finished or killed sending run is never sent again by accident")
struct RerunTests {
    static let customers = 300

    /// Customers with an iOS and an Android device each, and one malformed line (a reject, so the
    /// run finishes with exit 3, as most real campaigns do).
    static func writeAudience(_ path: String, customers: Int = customers) throws {
        var text = ""
        for n in 0..<customers {
            if n == customers / 2 { text += "{\"id\":\"broken\",\"devices\":[\n" }
            text += "{\"id\":\"c-\(n)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(n))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(n))\"}]}\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func requests(_ harness: SendingRunHarness) -> Int {
        let stats = harness.emulator.stats()
        return stats.apns.requests + stats.fcm.requests
    }

    /// Connections the emulator accepted: a refused run never builds a lane, so it opens none.
    /// (Requests are no measure right after a kill: the server is still reading the dead
    /// process's last streams for a moment.)
    static func connections(_ harness: SendingRunHarness) -> Int {
        harness.emulator.stats().connectionsOpened
    }

    @Test(.timeLimit(.minutes(10)))
    func aFinishedSendingRunsCommandSendsNothingAgain() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        try Self.writeAudience(harness.scratch.file("audience.ndjson"))
        let folder = harness.scratch.file("out")
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--log-level", "notice"] + extra
        }
        let first = try await PushlineBinary.run(arguments(["--auto-resume"]))
        #expect(first.status == 3, "\(first.stderr)")
        let sent = Self.requests(harness)
        #expect(sent == 2 * Self.customers)
        let summary = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        let sentLines = resultLineCount(folder, "sent.ndjson")

        // A scheduler's retry (--auto-resume), a person's --resume, and the plain command: each
        // says the run finished, exits with its code (3: it had a reject), and sends nothing.
        for extra in [["--auto-resume"], ["--resume"], [], ["--auto-resume", "--now", "1900000000"]] {
            let again = try await PushlineBinary.run(arguments(extra))
            #expect(again.status == 3, "\(extra): \(again.stderr)")
            #expect(again.stderr.contains("already finished this campaign"), "\(extra): \(again.stderr)")
            #expect(again.stderr.contains("status completed_with_rejects"), "\(again.stderr)")
            #expect(Self.requests(harness) == sent, "\(extra) sent again")
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json")) == summary, "\(extra) rewrote the summary")
            #expect(resultLineCount(folder, "sent.ndjson") == sentLines)
        }

        // --force alone is refused, naming what it would send twice.
        let forced = try await PushlineBinary.run(arguments(["--force"]))
        #expect(forced.status == 9, "\(forced.stderr)")
        #expect(forced.stderrLines.last?.contains("already sent \(sentLines) devices") == true, "\(forced.stderr)")
        #expect(forced.stderr.contains("--resend"))
        #expect(Self.requests(harness) == sent)

        // --force --resend sends the campaign again, on purpose, and keeps the first record.
        let resent = try await PushlineBinary.run(arguments(["--force", "--resend"]))
        #expect(resent.status == 3, "\(resent.stderr)")
        #expect(Self.requests(harness) == 2 * sent)
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("finished-") })
        #expect(resultLineCount(folder + "/" + aside, "sent.ndjson") == sentLines)

        // Another campaign into the same folder (the audience changed): a new run, as before.
        try Self.writeAudience(harness.scratch.file("audience.ndjson"), customers: Self.customers + 1)
        let next = try await PushlineBinary.run(arguments(["--auto-resume"]))
        #expect(next.status == 3, "\(next.stderr)")
        #expect(Self.requests(harness) == 2 * sent + 2 * (Self.customers + 1))
        await harness.stop()
    }

    @Test func resendWithoutForceIsAUsageError() async throws {
        let outcome = try await PushlineBinary.run(["run", "p.yaml", "--resend"])
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("--resend"))
    }

    @Test(.timeLimit(.minutes(10)))
    func forceAfterAKillSaysHowManyWereSentAndNeedsResend() async throws {
        let harness = try await SendingRunHarness.start()
        let pipeline = try harness.writePipeline()
        try Self.writeAudience(harness.scratch.file("audience.ndjson"), customers: 4_000)
        let folder = harness.scratch.file("out")
        func arguments(_ extra: [String]) -> [String] {
            ["run", pipeline, "--output", folder, "--workers", "1", "--checkpoint-interval", "0.1", "--log-level", "notice"] + extra
        }
        let run = try KillableRun.start(arguments([]), log: harness.scratch.file("run.log"))
        let reached = run.wait(for: folder) { resultLineCount(folder, "sent.ndjson") >= 1_000 }
        let exit = run.kill()
        try #require(reached && exit.signalled, "the run ended before it could be killed: \(run.stderr)")
        let recorded = resultLineCount(folder, "sent.ndjson")
        let before = Self.connections(harness)

        let plain = try await PushlineBinary.run(arguments([]))
        #expect(plain.status == 9, "\(plain.stderr)")
        #expect(plain.stderr.contains("they record the \(recorded) devices it sent"), "\(plain.stderr)")
        #expect(plain.stderr.contains("--resume"))
        let forced = try await PushlineBinary.run(arguments(["--force"]))
        #expect(forced.status == 9, "\(forced.stderr)")
        #expect(forced.stderr.contains("already sent \(recorded) devices"), "\(forced.stderr)")
        #expect(Self.connections(harness) == before, "a refused run connected")

        let resent = try await PushlineBinary.run(arguments(["--force", "--resend"]))
        #expect(resent.status == 3, "\(resent.stderr)")
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("interrupted-") })
        #expect(resultLineCount(folder + "/" + aside, "sent.ndjson") == recorded)
        #expect(resultLineCount(folder, "sent.ndjson") == 2 * 4_000)
        await harness.stop()
    }
}
}
