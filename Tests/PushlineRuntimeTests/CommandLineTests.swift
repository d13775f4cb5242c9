import Foundation
import PushlineTestSupport
import Testing

/// The real `pushline` binary, built by `swift build --build-tests` (scripts/test builds it first),
/// and the emulator's, `pushline-emulator`, built with it.
enum PushlineBinary {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let path = root.appendingPathComponent(".build/debug/pushline").path
    static var exists: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static let emulatorPath = root.appendingPathComponent(".build/debug/pushline-emulator").path
    static var emulatorExists: Bool { FileManager.default.isExecutableFile(atPath: emulatorPath) }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    /// Runs the binary (`executable`: another one, such as `emulatorPath`) with `arguments`;
    /// standard output goes to `stdoutPath` when given (e.g. /dev/full), else is captured.
    /// The wait for the child (its output to the end, its exit) happens on a thread of its own,
    /// never on one of the cooperative pool's few threads, which every other test needs.
    static func run(
        _ arguments: [String], executable: String = path, stdoutPath: String? = nil, closedStdout: Bool = false, in directory: String? = nil
    ) async throws -> Outcome {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
            Thread {
                continuation.resume(with: Result {
                    try runWaiting(arguments, executable: executable, stdoutPath: stdoutPath, closedStdout: closedStdout, in: directory)
                })
            }.start()
        }
    }

    private static func runWaiting(
        _ arguments: [String], executable: String, stdoutPath: String?, closedStdout: Bool, in directory: String?
    ) throws -> Outcome {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let errors = Pipe()
        process.standardError = errors
        let output = Pipe()
        if let stdoutPath {
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        } else {
            process.standardOutput = output
        }
        if closedStdout {
            // No reader: every write to standard output fails with EPIPE.
            try output.fileHandleForReading.close()
        }
        try process.run()
        let outputData: Data, errorData: Data
        if stdoutPath == nil && !closedStdout {
            (outputData, errorData) = ChildProcess.readToEnd(output, errors)
        } else {
            (outputData, errorData) = (Data(), errors.fileHandleForReading.readDataToEndOfFile())
        }
        return Outcome(status: process.waitForExit().shellStatus, stdout: String(decoding: outputData, as: UTF8.self), stderr: String(decoding: errorData, as: UTF8.self))
    }
}

@Suite("Command line: exit codes and one-line errors", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct CommandLineTests {
    static let demo = PushlineBinary.root.appendingPathComponent("pipelines/demo.yaml").path
    static let fullDevice = "/dev/full"

    /// Every command that prints a result fails with 5 and one line when standard output is full.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")), arguments: [
        ["template", "render", "--template", "{{ x }}", "--data", #"{"x":"hi"}"#],
        ["validate", CommandLineTests.demo],
        ["render", CommandLineTests.demo, "--line", "1"],
        ["render", CommandLineTests.demo, "--line", "1", "--compact"],
        ["--help"],
        ["run", "--help"],
    ])
    func fullStandardOutputExits5(arguments: [String]) async throws {
        let outcome = try await PushlineBinary.run(arguments, stdoutPath: Self.fullDevice)
        #expect(outcome.status == 5, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderrLines.last == "pushline: error: cannot write to standard output: No space left on device")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func generateAudienceWithFullStandardOutputExits5() async throws {
        let scratch = try Scratch()
        let outcome = try await PushlineBinary.run(["generate-audience", "3", scratch.file("a.ndjson")], stdoutPath: Self.fullDevice)
        #expect(outcome.status == 5)
        #expect(outcome.stderr == "pushline: error: cannot write to standard output: No space left on device\n")
    }

    @Test(arguments: [
        ["validate", CommandLineTests.demo],
        ["template", "render", "--template", "{{ x }}", "--data", #"{"x":"hi"}"#],
    ])
    func aClosedPipeIsAnErrorNotASilentKill(arguments: [String]) async throws {
        let outcome = try await PushlineBinary.run(arguments, closedStdout: true)
        #expect(outcome.status == 5, "killed by SIGPIPE shows as another status: \(outcome.status)")
        #expect(outcome.stderr == "pushline: error: cannot write to standard output: Broken pipe\n")
    }

    @Test(arguments: [
        (["run", CommandLineTests.demo, "--workers", "0"], "pushline: error: --workers must be between 1 and 256; got 0 (see --help)"),
        (["run", CommandLineTests.demo, "--workers", "257"], "pushline: error: --workers must be between 1 and 256; got 257 (see --help)"),
        (["run", CommandLineTests.demo, "--workers", "9223372036854775807"], "pushline: error: --workers must be between 1 and 256; got 9223372036854775807 (see --help)"),
        (["run", CommandLineTests.demo, "--workers", "99999999999999999999"], "pushline: error: The value '99999999999999999999' is invalid for '--workers <workers>' (see --help)"),
        (["run", CommandLineTests.demo, "--drain-timeout", "3601"], "pushline: error: --drain-timeout must be between 0 and 3600 seconds; got 3601 (see --help)"),
        (["run", CommandLineTests.demo, "--drain-timeout=-1"], "pushline: error: --drain-timeout must be between 0 and 3600 seconds; got -1 (see --help)"),
        (["run", CommandLineTests.demo, "--background-priority", "realtime"], "pushline: error: The value 'realtime' is invalid for '--background-priority <idle|nice|normal>'. Please provide one of 'idle', 'nice' or 'normal'. (see --help)"),
        // A line break in a value the error echoes stays in its one line, escaped, whole.
        (["run", CommandLineTests.demo, "--background-priority", "idle\r\nx"], #"pushline: error: The value 'idle\r\nx' is invalid for '--background-priority <idle|nice|normal>'. Please provide one of 'idle', 'nice' or 'normal'. (see --help)"#),
        (["run", CommandLineTests.demo, "--log-level", "info\nx\u{1B}[2J"], #"pushline: error: The value 'info\nx\u{1B}[2J' is invalid for '--log-level <log-level>'. Please provide one of the following: trace, debug, info, notice, warning, error, critical (see --help)"#),
        (["run", CommandLineTests.demo, "--now", "9223372036854775807"], "pushline: error: --now must be between 0 and 253402300799 (UNIX seconds up to the year 9999); got 9223372036854775807 (see --help)"),
        (["validate", CommandLineTests.demo, "--now", "253402300800"], "pushline: error: --now must be between 0 and 253402300799 (UNIX seconds up to the year 9999); got 253402300800 (see --help)"),
        (["render", CommandLineTests.demo, "--line", "1", "--now=-1"], "pushline: error: --now must be between 0 and 253402300799 (UNIX seconds up to the year 9999); got -1 (see --help)"),
        (["render", CommandLineTests.demo, "--line", "0"], "pushline: error: --line must be 1 or more (see --help)"),
        (["generate-audience", "0", "x.ndjson"], "pushline: error: COUNT must be between 1 and 1000000000; got 0 (see --help)"),
        (["generate-audience", "9223372036854775807", "x.ndjson"], "pushline: error: COUNT must be between 1 and 1000000000; got 9223372036854775807 (see --help)"),
        (["generate-audience", "5", "x.ndjson", "--hostile", "nan"], "pushline: error: --hostile must be a number between 0 and 1; got nan (see --help)"),
        (["generate-audience", "5", "x.ndjson", "--hostile", "inf"], "pushline: error: --hostile must be a number between 0 and 1; got inf (see --help)"),
        (["generate-audience", "5", "x.ndjson", "--seed", "18446744073709551616"], "pushline: error: The value '18446744073709551616' is invalid for '--seed <seed>' (see --help)"),
        (["template", "render", "--template", "x", "--record-line", "0", "--audience", "a"], "pushline: error: --record-line must be 1 or more; got 0 (see --help)"),
        (["run", CommandLineTests.demo, "--output", ""], "pushline: error: --output must not be empty (see --help)"),
        (["run", CommandLineTests.demo, "--audience", ""], "pushline: error: --audience must not be empty (use - for standard input) (see --help)"),
        (["generate-audience", "3", ""], "pushline: error: FILE must not be empty (see --help)"),
        (["no-such-command"], "pushline: error: Unexpected argument 'no-such-command' (see --help)"),
    ])
    func outOfRangeFlagsAreOneLineUsageErrors(arguments: [String], message: String) async throws {
        let scratch = try Scratch()
        let outcome = try await PushlineBinary.run(arguments, in: scratch.path)
        #expect(outcome.status == 64, "\(arguments)")
        #expect(outcome.stderr == message + "\n")
        #expect(outcome.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "nothing was written")
    }

    @Test func theAliasBombIsADiagnosticAndExit2() async throws {
        let scratch = try Scratch()
        let path = scratch.file("bomb.yaml")
        try aliasBomb(levels: 9).write(toFile: path, atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["validate", path])
        #expect(outcome.status == 2)
        #expect(outcome.stderrLines == [
            "\(path):7:14: error: g[2]: the document is too large once its aliases are expanded (more than 4194304 nodes and bytes)",
            "pushline: error: \(path): invalid pipeline (1 error); nothing was read",
        ])
    }

    @Test func templateErrorsAreOneLineEach() async throws {
        let syntax = try await PushlineBinary.run(["template", "render", "--template", "{{ x", "--data", "{}"])
        #expect(syntax.status == 2)
        #expect(syntax.stderrLines.count == 2 && syntax.stderrLines.first?.hasPrefix("template:1:") == true)
        #expect(syntax.stderrLines.last == "pushline: error: the template is invalid")
        let data = try await PushlineBinary.run(["template", "render", "--template", "x", "--data", "{"])
        #expect(data.status == 64 && data.stderrLines.count == 1 && data.stderr.hasPrefix("pushline: error: the data is not valid JSON"))
        let array = try await PushlineBinary.run(["template", "render", "--template", "x", "--data", "[1]"])
        #expect(array.status == 64 && array.stderr == "pushline: error: the data must be one JSON object, like an audience line\n")
        let missing = try await PushlineBinary.run(["template", "render", "--file", "/nonexistent/t.liquid", "--data", "{}"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "pushline: error: cannot read the template: /nonexistent/t.liquid: No such file or directory\n")
        let endless = try await PushlineBinary.run(["template", "render", "--file", "/dev/zero", "--data", "{}"])
        #expect(endless.stderr == "pushline: error: cannot read the template: /dev/zero: larger than 1048576 bytes\n")
    }

    @Test func aTemplateThatFailsToRenderExits10() async throws {
        let outcome = try await PushlineBinary.run(["template", "render", "--strict", "--template", "{{ missing }}", "--data", "{}"])
        #expect(outcome.status == 10, "render_failed: \(outcome.stderr)")
        #expect(outcome.stderrLines.count == 1 && outcome.stderr.hasPrefix("pushline: error: render failed: "))
        #expect(outcome.stdout.isEmpty)
    }

    @Test func runFailuresAreOneErrorLineWithTheirExitCode() async throws {
        let scratch = try Scratch()
        let unreadable = try await PushlineBinary.run(["run", Self.demo, "--dry-run", "--output", scratch.file("out"), "--audience", scratch.file("missing.ndjson"), "--log-level", "critical"])
        #expect(unreadable.status == 4)
        #expect(unreadable.stderr == "pushline: error: the audience could not be read: \(scratch.file("missing.ndjson")): cannot open audience: No such file or directory (the lines before the error were processed and written)\n")
        let device = try await PushlineBinary.run(["run", Self.demo, "--dry-run", "--output", "/dev/null", "--log-level", "critical"])
        #expect(device.status == 5)
        #expect(device.stderr == "pushline: error: the output folder /dev/null is a device, not a directory\n")
        // The demo audience has 300 lines.
        let farLine = try await PushlineBinary.run(["render", Self.demo, "--line", "9223372036854775807"])
        #expect(farLine.status == 4)
        #expect(farLine.stderr == "pushline: error: the audience has no non-blank line 9223372036854775807 (it has 300 lines)\n")
        let missingPipeline = try await PushlineBinary.run(["validate", scratch.file("none.yaml")])
        #expect(missingPipeline.status == 2)
        #expect(missingPipeline.stderrLines == [
            "\(scratch.file("none.yaml")): error: cannot read the pipeline file: No such file or directory",
            "pushline: error: \(scratch.file("none.yaml")): invalid pipeline (1 error); nothing was read",
        ])
    }

    @Test func generateAudienceRefusesAnythingButARegularFile() async throws {
        let scratch = try Scratch()
        let victim = scratch.file("victim")
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        let link = scratch.file("link.ndjson")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let fifo = scratch.file("fifo.ndjson")
        #expect(mkfifo(fifo, 0o644) == 0)
        let toDevice = scratch.file("null.ndjson")
        try FileManager.default.createSymbolicLink(atPath: toDevice, withDestinationPath: "/dev/null")
        for (path, kind) in [(link, "a symbolic link"), (fifo, "a FIFO"), (toDevice, "a symbolic link")] {
            let outcome = try await PushlineBinary.run(["generate-audience", "3", path])
            #expect(outcome.status == 5)
            #expect(outcome.stderr == "pushline: error: \(path): refusing to replace \(kind): only a regular file is replaced\n")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: toDevice) == "/dev/null")
        // A regular file is replaced, and nothing temporary is left beside it.
        let regular = scratch.file("a.ndjson")
        try "old\n".write(toFile: regular, atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["generate-audience", "3", regular])
        #expect(outcome.status == 0 && outcome.stdout.hasPrefix("wrote 3 customers with "))
        #expect(try String(contentsOfFile: regular, encoding: .utf8).split(separator: "\n").count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }
}
