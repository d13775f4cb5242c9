import Foundation
import PushlineTestSupport
import Testing

/// swift-argument-parser reads `-1` after an option as a short flag, so `--checkpoint-interval -1`
/// used to fail with "Missing value" instead of our range error. Every option whose value is a
/// number is parsed unconditionally. The options are read from each binary's
/// `--experimental-dump-help`, so a numeric option added later is probed too: only the text
/// options listed here keep the default (`--output --resume` should not name a folder
/// "--resume").
@Suite("Command line: a negative number after an option is that option's value", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct NegativeNumberOptionTests {
    static let pushlineTextOptions: Set<String> = [
        "providers", "output", "audience", "log-level", "background-priority", "progress", "log-format", "metrics-file",
        "webpush-subscriptions", "dialect", "template", "file", "data",
    ]
    static let emulatorTextOptions: Set<String> = [
        "state-dir", "team-id", "topic", "project-id", "record-webpush", "record-adm", "record-webhooks",
    ]

    struct Probe: CustomStringConvertible {
        var command: [String]
        var positionals: Int
        var option: String
        var description: String { (command + ["--\(option)"]).joined(separator: " ") }
    }

    /// Every long option with a value of every command of `executable` (but `help`).
    static func probes(_ executable: String) async throws -> [Probe] {
        let dump = try await PushlineBinary.run(["--experimental-dump-help"], executable: executable)
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var probes: [Probe] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            let arguments = command["arguments"] as? [[String: Any]] ?? []
            let positionals = arguments.count { $0["kind"] as? String == "positional" }
            for argument in arguments where argument["kind"] as? String == "option" {
                let names = argument["names"] as? [[String: Any]] ?? []
                if let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String {
                    probes.append(Probe(command: path, positionals: positionals, option: long))
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = sub["commandName"] as? String, name != "help" else { continue }
                walk(sub, path + [name])
            }
        }
        walk(try #require(tool["command"] as? [String: Any]), [])
        return probes
    }

    func expectNegativeTaken(_ probes: [Probe], executable: String, textOptions: Set<String>, extra: [String]) async throws {
        // The dump was read, and the text list names only options the binary has.
        let names = Set(probes.map(\.option))
        #expect(names.isSuperset(of: textOptions), "\(textOptions.subtracting(names)) are not options")
        #expect(names.count > textOptions.count, "no numeric option probed")
        let scratch = try Scratch()
        for probe in probes where !textOptions.contains(probe.option) {
            let arguments = probe.command + Array(repeating: "1", count: probe.positionals) + extra + ["--\(probe.option)", "-1"]
            let outcome = try await PushlineBinary.run(arguments, executable: executable, in: scratch.path)
            #expect(!outcome.stderr.contains("Missing value for '--\(probe.option)"), "\(probe): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("Unknown option '-1'"), "\(probe): \(outcome.stderr)")
        }
    }

    @Test func pushline() async throws {
        let probes = try await Self.probes(PushlineBinary.path)
        // The options this was reported on are among the probes.
        #expect(Set(probes.map(\.option)).isSuperset(of: ["checkpoint-interval", "workers", "line", "hostile", "record-line"]))
        try await expectNegativeTaken(probes, executable: PushlineBinary.path, textOptions: Self.pushlineTextOptions, extra: [])
    }

    @Test(.enabled(if: PushlineBinary.emulatorExists, "needs .build/debug/pushline-emulator (swift build --build-tests)"))
    func pushlineEmulator() async throws {
        let probes = try await Self.probes(PushlineBinary.emulatorPath).filter { $0.option != "port" }
        #expect(Set(probes.map(\.option)).isSuperset(of: ["latency-ms", "apns-unregistered-rate", "threads"]))
        // --print-config prints and exits: a value that is accepted does not start a server.
        try await expectNegativeTaken(probes, executable: PushlineBinary.emulatorPath, textOptions: Self.emulatorTextOptions, extra: ["--print-config", "--port", "18454"])
    }

    @Test func theRangeErrorNamesTheOption() async throws {
        let outcome = try await PushlineBinary.run(["run", CommandLineTests.demo, "--checkpoint-interval", "-1"])
        #expect(outcome.status == 64)
        #expect(outcome.stderrLines == ["pushline: error: --checkpoint-interval must be 0 (off) or between 0.05 and 3600 seconds; got -1.0 (see --help)"])
    }
}
