import Foundation
import PushlineEmulator
import PushlineTestSupport
import Testing

/// `pushline run`'s progress, JSON logs, metrics file and summary table, from the real binary.
/// Runs that must be seen mid-run read an endless standard input (`ChildRun`): they wait for the
/// line they look for (a hang guard bounds the wait) and then stop the run, so nothing depends
/// on how fast the machine is.
@Suite(
    "Progress, logs and metrics of a real run",
    .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"),
    .serialized
)
struct ObservabilityCommandLineTests {
    @Test func theLiveLineIsRewrittenInPlaceWhenForced() async throws {
        let scratch = try Scratch()
        let feed = try await SignalStopTests.generatedAudience(scratch, count: 2_000)
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", scratch.file("out"), "--progress", "always"],
            feed: feed, stderrPath: scratch.file("stderr.log")
        )
        // Standard input has no size: the line says there is no percent.
        try await child.waitUntil("a live progress line") {
            child.stderr.contains("\rsize unknown (not a regular file): no percent or ETA | ")
        }
        try await child.waitUntil("a second drawing of it") { child.stderr.components(separatedBy: "\rsize unknown").count > 2 }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")
        let stderr = child.stderr
        // Each drawing ends by clearing the rest of the terminal line; the last one is erased
        // before the summary table, whose lines are plain.
        #expect(stderr.contains("\u{1B}[K"))
        let table = try #require(stderr.range(of: "pushline: run stopped in "))
        let beforeTable = stderr[..<table.lowerBound]
        let lastDrawing = try #require(beforeTable.range(of: "\r", options: .backwards))
        #expect(beforeTable[lastDrawing.lowerBound...].hasPrefix("\r\u{1B}[K"), "the line is cleared before the table")
        #expect(!beforeTable[lastDrawing.lowerBound...].contains("no percent"))
        #expect(!stderr[table.lowerBound...].contains("\r"))
        // Log lines are written on a cleared line, never glued to the progress.
        let ended = try #require(stderr.components(separatedBy: "\n").first { $0.contains("run ended") })
        let afterLastReturn = try #require(ended.components(separatedBy: "\r").last)
        #expect(afterLastReturn.hasPrefix("\u{1B}[K") && !afterLastReturn.contains("no percent"), "\(ended.debugDescription)")
    }

    /// On a real terminal (a pseudo-terminal), `--progress auto` draws the line: the first
    /// drawing happens when the run starts, so even a short run shows it, then clears it.
    @Test func onAPseudoTerminalTheLineIsDrawnByDefault() throws {
        let scratch = try Scratch()
        let pty = try #require(PseudoTerminalCalls.load(), "posix_openpt is not in the C library")
        let master = pty.openpt(O_RDWR | O_NOCTTY)
        #expect(master >= 0, "no pseudo-terminal: \(String(cString: strerror(errno)))")
        guard master >= 0 else { return }
        defer { close(master) }
        var name = [CChar](repeating: 0, count: 256)
        #expect(pty.grant(master) == 0 && pty.unlock(master) == 0 && pty.name(master, &name, name.count) == 0)
        let terminal = open(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), O_RDWR | O_NOCTTY)
        #expect(terminal >= 0)
        guard terminal >= 0 else { return }
        var size = winsize(ws_row: 24, ws_col: 300, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(terminal, UInt(TIOCSWINSZ), &size)

        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: PushlineBinary.path)
        process.arguments = ["run", CommandLineTests.demo, "--dry-run", "--output", scratch.file("out")]
        process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: true)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // The child holds the terminal now; once it exits, reading the master ends (EIO).
        process.standardError = nil
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while output.count < 16 << 20 {
            let count = read(master, &buffer, buffer.count)
            if count > 0 { output += buffer[0..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        #expect(process.waitForExit(limit: .seconds(60)).shellStatus == 0)
        let text = String(decoding: output, as: UTF8.self)
        // The demo audience is a file: the line has a percent.
        let drawing = try #require(text.range(of: "\r0.0%") ?? text.range(of: "%"), "\(text.debugDescription)")
        #expect(text[drawing.lowerBound...].contains("\u{1B}[K"))
        let table = try #require(text.range(of: "pushline: run completed in "), "\(text.debugDescription)")
        #expect(drawing.lowerBound < table.lowerBound)
        #expect(text[..<table.lowerBound].hasSuffix("\r\u{1B}[K"), "cleared before the table: \(text.debugDescription)")
    }

    @Test func withoutATerminalTheProgressIsALogLine() async throws {
        let scratch = try Scratch()
        let feed = try await SignalStopTests.generatedAudience(scratch, count: 2_000)
        let child = try ChildRun(
            ["run", CommandLineTests.demo, "--dry-run", "--audience", "-", "--output", scratch.file("out"), "--progress-interval", "0.2"],
            feed: feed, stderrPath: scratch.file("stderr.log")
        )
        // Lines come every 0.2 s from the start; the first ones may come before any device is written.
        try await child.waitUntil("a progress log line with written devices") {
            child.stderr.components(separatedBy: "\n").contains { $0.contains(" progress") && $0.contains("apns_written=") }
        }
        child.send(SIGTERM)
        #expect(try await child.waitForExit() == 6, "\(child.stderr)")
        let progress = child.stderr.components(separatedBy: "\n").filter { $0.contains(" progress") && $0.contains("apns_written=") }
        let first = try #require(progress.first)
        #expect(first.contains("percent=unknown"), "standard input has no size")
        for key in ["lines=", "devices=", "devices_per_second=", "apns_written=", "apns_written_per_second=", "bytes_read="] {
            #expect(first.contains(key), "\(key) in \(first)")
        }
        #expect(!child.stderr.contains("\r"), "no live line without a terminal")
    }

    @Test func noProgressMeansNone() async throws {
        let scratch = try Scratch()
        let outcome = try await PushlineBinary.run(["run", CommandLineTests.demo, "--dry-run", "--output", scratch.file("out"), "--no-progress", "--progress-interval", "0.1"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(!outcome.stderr.contains(" progress") && !outcome.stderr.contains("\r"))
    }

    @Test func theSummaryTableGoesToStandardErrorOnly() async throws {
        let scratch = try Scratch()
        let outcome = try await PushlineBinary.run(["run", CommandLineTests.demo, "--dry-run", "--output", scratch.file("out"), "--log-level", "critical"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
        let lines = outcome.stderrLines
        #expect(lines.first?.hasPrefix("pushline: run completed in ") == true, "\(lines)")
        #expect(lines.contains { $0.split(separator: " ").prefix(3) == ["provider", "devices", "written"] }, "\(lines)")
        let summary = try readSummary(scratch.file("out"))
        let providers = try #require(summary["providers"] as? [String: [String: Int]])
        for (provider, row) in providers {
            let cells = try #require(lines.first { $0.hasPrefix(provider + " ") }).split(separator: " ")
            #expect(cells[1] == Substring(groupDigits(row["devices"]!)) && cells[2] == Substring(groupDigits(row["written"]!)))
        }
    }

    @Test func badIntervalsAreUsageErrors() async throws {
        for (arguments, message) in [
            (["--progress-interval", "0"], "pushline: error: --progress-interval must be between 0.1 and 3600 seconds; got 0.0 (see --help)"),
            (["--metrics-interval", "99999"], "pushline: error: --metrics-interval must be between 0.1 and 3600 seconds; got 99999.0 (see --help)"),
            (["--no-progress", "--progress", "always"], "pushline: error: --no-progress contradicts --progress always (see --help)"),
            (["--log-format", "xml"], "pushline: error: The value 'xml' is invalid for '--log-format <format>'"),
        ] {
            let outcome = try await PushlineBinary.run(["run", CommandLineTests.demo, "--dry-run"] + arguments)
            #expect(outcome.status == 64, "\(arguments)")
            #expect(outcome.stderrLines.count == 1 && outcome.stderr.hasPrefix(message), "\(arguments): \(outcome.stderr)")
        }
    }

    /// A sending run against the emulator with `--log-format json`: every line of standard error
    /// is one JSON object with the five fields, and neither the APNs key nor the service
    /// account's private key appears in it or in the metrics file.
    @Test(.timeLimit(.minutes(3)))
    func jsonLogsParseAndHoldNoSecret() async throws {
        let harness = try await SendingRunHarness.start()
        let text = SendingRunHarness.iosAndAndroidAudience(customers: 300)
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        let pipeline = try harness.writePipeline()
        let prom = harness.scratch.file("metrics.prom")
        let outcome = try await PushlineBinary.run([
            "run", pipeline, "--audience", harness.scratch.file("audience.ndjson"), "--output", harness.scratch.file("out"),
            "--log-format", "json", "--log-level", "debug",
            "--metrics-file", prom, "--metrics-interval", "0.1", "--progress-interval", "0.1",
        ])
        await harness.stop()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = outcome.stderrLines
        #expect(lines.count >= 3)
        var messages: [String] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(Set(object.keys).isSuperset(of: ["timestamp", "level", "label", "message", "metadata"]), "\(line)")
            #expect(object["metadata"] is [String: Any])
            let timestamp = try #require(object["timestamp"] as? String)
            #expect(ISO8601DateFormatter.withFractionalSeconds.date(from: timestamp) != nil, "\(timestamp)")
            messages.append(object["message"] as? String ?? "")
        }
        #expect(messages.contains("run started") && messages.contains("run ended") && messages.contains("run summary"))

        // The secrets: each base64 line of the PEM key, and the service account's key.
        let key = try String(contentsOfFile: harness.scratch.file("AuthKey.p8"), encoding: .utf8)
        let keyLines = key.split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 16 }
        try #require(!keyLines.isEmpty)
        let account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: harness.scratch.file("service-account.json")))) as? [String: Any])
        let accountKeyLines = (account["private_key"] as? String ?? "").split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 16 }
        try #require(!accountKeyLines.isEmpty)
        let metrics = try String(contentsOfFile: prom, encoding: .utf8)
        for secret in keyLines + accountKeyLines {
            #expect(!outcome.stderr.contains(secret) && !metrics.contains(secret))
        }
        _ = try PrometheusText(metrics)
    }
}

func groupDigits(_ value: Int) -> String {
    var out = ""
    for (i, c) in String(value).reversed().enumerated() {
        if i > 0, i % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

extension ISO8601DateFormatter {
    static var withFractionalSeconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

/// The C library's pseudo-terminal calls, which Swift's Glibc module does not export (they need
/// `_XOPEN_SOURCE`): looked up by name.
struct PseudoTerminalCalls {
    let openpt: @convention(c) (Int32) -> Int32
    let grant: @convention(c) (Int32) -> Int32
    let unlock: @convention(c) (Int32) -> Int32
    let name: @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    static func load() -> PseudoTerminalCalls? {
        let library = dlopen(nil, RTLD_NOW)
        func symbol(_ name: String) -> UnsafeMutableRawPointer? { dlsym(library, name) }
        guard let openpt = symbol("posix_openpt"), let grant = symbol("grantpt"), let unlock = symbol("unlockpt"),
              let name = symbol("ptsname_r") else { return nil }
        return PseudoTerminalCalls(
            openpt: unsafeBitCast(openpt, to: (@convention(c) (Int32) -> Int32).self),
            grant: unsafeBitCast(grant, to: (@convention(c) (Int32) -> Int32).self),
            unlock: unsafeBitCast(unlock, to: (@convention(c) (Int32) -> Int32).self),
            name: unsafeBitCast(name, to: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
        )
    }
}
