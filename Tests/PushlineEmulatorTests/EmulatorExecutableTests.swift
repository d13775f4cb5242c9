import Crypto
import Foundation
import PushlineTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `pushline-emulator` executable, built by `swift build --build-tests` (scripts/test builds
/// it first): printing its configuration, serving over HTTP/2 and TLS, stopping on a signal,
/// refusing bad flags.
@Suite("pushline-emulator executable", .enabled(if: EmulatorBinary.exists, "needs .build/debug/pushline-emulator (swift build --build-tests)"))
struct EmulatorExecutableTests {
    @Test func printConfigWritesTheKeysAndPrintsTheProvidersBlock() throws {
        let state = try TemporaryFolder()
        let outcome = try EmulatorBinary.run(["--print-config", "--port", "18461", "--state-dir", state.path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.hasPrefix("providers:\n"))
        #expect(outcome.stdout.contains(#"endpoint: "https://127.0.0.1:18461""#))
        for file in ["apns-auth-key.p8", "fcm-service-account.json", "emulator-ca.pem", "vapid-private-key.pem", "adm-client-secret.txt", "webhook-secret.txt"] {
            #expect(FileManager.default.fileExists(atPath: state.path + "/" + file), "\(file)")
            #expect(outcome.stdout.contains(#""\#(state.path)/\#(file)""#), "\(file)")
        }
        let ca = state.path + "/emulator-ca.pem"
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"  adm: { client_id: "amzn1.application-oa2-client.pushline-emulator", client_secret_file: "\#(state.path)/adm-client-secret.txt", token_uri: "https://127.0.0.1:18461/auth/O2/token", endpoint: "https://127.0.0.1:18461", ca_file: "\#(ca)" }"#), "\(outcome.stdout)")
        #expect(lines.contains(#"  sms: { url: "https://127.0.0.1:18461/webhooks/sms", secret_file: "\#(state.path)/webhook-secret.txt", ca_file: "\#(ca)" }"#))
        #expect(lines.contains(#"  email: { url: "https://127.0.0.1:18461/webhooks/email", secret_file: "\#(state.path)/webhook-secret.txt", ca_file: "\#(ca)" }"#))

        // A second run keeps the secrets.
        let secrets = try ["adm-client-secret.txt", "webhook-secret.txt"].map { try String(contentsOfFile: state.path + "/" + $0, encoding: .utf8) }
        #expect(try EmulatorBinary.run(["--print-config", "--port", "18461", "--state-dir", state.path]).status == 0)
        #expect(try ["adm-client-secret.txt", "webhook-secret.txt"].map { try String(contentsOfFile: state.path + "/" + $0, encoding: .utf8) } == secrets)
    }

    @Test func servesOverHTTP2AndStopsOnSIGTERMWithASummaryLine() throws {
        let state = try TemporaryFolder()
        let server = try EmulatorBinary.Serving(["--port", "0", "--state-dir", state.path, "--threads", "1"])
        defer { server.kill() }
        let listening = try server.firstLine()
        // pushline-emulator: listening on https://127.0.0.1:PORT (ca_file …); …
        let endpoint = try #require(listening.split(separator: " ").first { $0.hasPrefix("https://127.0.0.1:") }.map(String.init), "\(listening)")
        let stats = try Curl.request("GET", endpoint + "/stats", caFile: state.path + "/emulator-ca.pem")
        #expect(stats.status == 200)
        #expect(stats.httpVersion == "2")
        #expect(FileManager.default.fileExists(atPath: state.path + "/providers.yaml"), "written on start, with the bound port")
        #expect(try String(contentsOfFile: state.path + "/providers.yaml", encoding: .utf8).contains(endpoint))

        let ended = try server.terminate(SIGTERM)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout.hasPrefix("pushline-emulator: stopped; 0 APNs, 0 FCM, 0 Web Push and 0 ADM requests, 0 webhook requests (0 duplicates), 0 delivered"), "\(ended.stdout)")
        #expect(ended.stderr.contains("pushline-emulator: signal \(SIGTERM), stopping"))
    }

    @Test func servesWebPushToTheSubscriptionsItWritesAndRecordsWhatArrives() throws {
        let state = try TemporaryFolder()
        let record = state.path + "/record.ndjson"
        let server = try EmulatorBinary.Serving(["--port", "0", "--state-dir", state.path, "--threads", "1", "--record-webpush", record])
        defer { server.kill() }
        let listening = try server.firstLine()
        let endpoint = try #require(listening.split(separator: " ").first { $0.hasPrefix("https://127.0.0.1:") }.map(String.init), "\(listening)")
        let lines = try String(contentsOfFile: state.path + "/webpush-subscriptions.ndjson", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 256)
        #expect(lines[0].hasPrefix(#"{"endpoint":"\#(endpoint)/push/s000","keys":{"p256dh":""#), "written with the bound port")
        let providers = try String(contentsOfFile: state.path + "/providers.yaml", encoding: .utf8)
        #expect(providers.contains(#"  webpush: { vapid_private_key: "\#(state.path)/vapid-private-key.pem", subject: "mailto:emulator@pushline.invalid", ca_file: "\#(state.path)/emulator-ca.pem", allow_private_endpoints: true }"#))

        let line = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        let keys = try #require(line["keys"] as? [String: String])
        let vapid = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: state.path + "/vapid-private-key.pem", encoding: .utf8))
        let jwt = TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: endpoint))
        let body = try TestWebPush.encrypt(
            Array(#"{"a":1}"#.utf8), p256dh: TestWebPush.decodeBase64URL(try #require(keys["p256dh"])), auth: TestWebPush.decodeBase64URL(try #require(keys["auth"]))
        )
        let sent = try Curl.request(
            "POST", try #require(line["endpoint"] as? String), caFile: state.path + "/emulator-ca.pem",
            headers: [("authorization", TestWebPush.authorization(jwt, key: vapid.publicKey)), ("ttl", "60"), ("content-encoding", "aes128gcm")], body: body
        )
        #expect(sent.status == 201, "\(sent.bodyText)")
        #expect(try String(contentsOfFile: record, encoding: .utf8) == #"{"subscription":"s001","plaintext":{"a":1}}"# + "\n")

        let ended = try server.terminate(SIGTERM)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout.hasPrefix("pushline-emulator: stopped; 0 APNs, 0 FCM, 1 Web Push and 0 ADM requests, 0 webhook requests (0 duplicates), 1 delivered"), "\(ended.stdout)")
    }

    @Test func servesADMAndWebhooksWithTheSecretsItWritesAndRecordsWhatArrives() throws {
        let state = try TemporaryFolder()
        let admRecord = state.path + "/adm.ndjson"
        let webhookRecord = state.path + "/webhooks.ndjson"
        let server = try EmulatorBinary.Serving([
            "--port", "0", "--state-dir", state.path, "--threads", "1", "--record-adm", admRecord, "--record-webhooks", webhookRecord,
            "--adm-replaced-rate", "1",
        ])
        defer { server.kill() }
        let listening = try server.firstLine()
        let endpoint = try #require(listening.split(separator: " ").first { $0.hasPrefix("https://127.0.0.1:") }.map(String.init), "\(listening)")
        let ca = state.path + "/emulator-ca.pem"
        let providers = try String(contentsOfFile: state.path + "/providers.yaml", encoding: .utf8)
        #expect(providers.contains(#"token_uri: "\#(endpoint)/auth/O2/token""#), "written with the bound port")
        #expect(providers.contains(#"  sms: { url: "\#(endpoint)/webhooks/sms""#))

        let secret = try String(contentsOfFile: state.path + "/adm-client-secret.txt", encoding: .utf8)
        let token = try Curl.request("POST", endpoint + "/auth/O2/token", caFile: ca, headers: [TestADM.formType], body: TestADM.tokenForm(secret: secret))
        #expect(token.status == 200, "\(token.bodyText)")
        let accessToken = try #require(try token.json()["access_token"] as? String)
        let sent = try Curl.request("POST", endpoint + TestADM.path("device-9"), caFile: ca, headers: TestADM.headers(accessToken: accessToken), body: TestADM.message)
        #expect(sent.status == 200, "\(sent.bodyText)")
        let replacement = try #require(try sent.json()["registrationID"] as? String)
        #expect(replacement.hasPrefix("amzn1.adm-registration.v3.replaced-"), "--adm-replaced-rate 1 replaces every id")
        #expect(try String(contentsOfFile: admRecord, encoding: .utf8) == #"{"registration_id":"device-9","body":"#.appending(String(decoding: TestADM.message, as: UTF8.self)) + "}\n")

        let webhookSecret = try String(contentsOfFile: state.path + "/webhook-secret.txt", encoding: .utf8)
        let body = TestWebhooks.body(channel: "email", to: "a@example.com")
        for _ in 0..<2 {
            let delivered = try Curl.request("POST", endpoint + "/webhooks/email", caFile: ca, headers: TestWebhooks.headers(secret: webhookSecret, id: "msg_exe", body: body), body: body)
            #expect(delivered.status == 200, "\(delivered.bodyText)")
        }
        #expect(try String(contentsOfFile: webhookRecord, encoding: .utf8) == #"{"id":"msg_exe","path":"email","body":{"channel":"email","to":"a@example.com","text":"Hi"}}"# + "\n")

        let ended = try server.terminate(SIGTERM)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout.hasPrefix("pushline-emulator: stopped; 0 APNs, 0 FCM, 0 Web Push and 1 ADM requests, 2 webhook requests (1 duplicates), 2 delivered"), "\(ended.stdout)")
    }

    @Test(arguments: [
        (["--port", "70000"], "pushline-emulator: error: --port must be between 0 and 65535; got 70000 (see --help)"),
        (["--print-config", "--port", "0"], "pushline-emulator: error: --print-config needs a fixed --port (the printed endpoint names it) (see --help)"),
        (["--unavailable-rate", "1.5"], "pushline-emulator: error: --unavailable-rate must be a number between 0 and 1; got 1.5 (see --help)"),
        (["--webpush-gone-rate", "2"], "pushline-emulator: error: --webpush-gone-rate must be a number between 0 and 1; got 2.0 (see --help)"),
        (["--adm-replaced-rate", "1.5"], "pushline-emulator: error: --adm-replaced-rate must be a number between 0 and 1; got 1.5 (see --help)"),
        (["--adm-unregistered-rate", "0.6", "--adm-replaced-rate", "0.6"], "pushline-emulator: error: invalid emulator configuration: the token-level fault rates for adm add up to 1.2, more than 1 (see --help)"),
        (["--record-webhooks", ""], "pushline-emulator: error: --record-webhooks must not be empty (see --help)"),
        (["emulate"], "pushline-emulator: error: Unexpected argument 'emulate' (see --help)"),
    ])
    func badFlagsAreOneLineUsageErrors(arguments: [String], message: String) throws {
        let outcome = try EmulatorBinary.run(arguments)
        #expect(outcome.status == 64)
        #expect(outcome.stderr == message + "\n")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aStateFolderThatCannotBeMadeExits11InOneLine() throws {
        let state = try TemporaryFolder()
        let blocker = state.path + "/file"
        try "x".write(toFile: blocker, atomically: true, encoding: .utf8)
        let outcome = try EmulatorBinary.run(["--print-config", "--port", "18462", "--state-dir", blocker + "/state"])
        #expect(outcome.status == 11, "emulator_cannot_start")
        #expect(outcome.stderr.split(separator: "\n").count == 1)
        #expect(outcome.stderr.hasPrefix("pushline-emulator: error: "), "\(outcome.stderr)")
    }

    @Test func helpGoesToStandardOutput() throws {
        let outcome = try EmulatorBinary.run(["--help"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("USAGE: pushline-emulator"))
        #expect(outcome.stdout.contains("--latency-ms"))
    }
}

/// The built emulator executable and ways to run it.
enum EmulatorBinary {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let path = root.appendingPathComponent(".build/debug/pushline-emulator").path
    static var exists: Bool { FileManager.default.isExecutableFile(atPath: path) }
    /// A hang guard only: every run here ends in well under a second when the binary works.
    static let hangGuardSeconds = 120.0

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs to its end.
    static func run(_ arguments: [String]) throws -> Outcome {
        let serving = try Serving(arguments)
        return serving.wait()
    }

    /// A running emulator process, its output read as it comes.
    final class Serving: @unchecked Sendable {
        private let process = ChildProcess()
        private let output = Pipe()
        private let errors = Pipe()
        private var stdoutBytes: [UInt8] = []

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: EmulatorBinary.path)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + EmulatorBinary.hangGuardSeconds) { [process] in
                if process.isRunning { Glibc.kill(pid, SIGKILL) }
            }
        }

        /// Standard output's first line (blocks until it comes or the process ends).
        func firstLine() throws -> String {
            while !stdoutBytes.contains(0x0A) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                stdoutBytes += chunk
            }
            guard let newline = stdoutBytes.firstIndex(of: 0x0A) else {
                throw EmulatorBinaryError(description: "no line before the process ended: '\(String(decoding: stdoutBytes, as: UTF8.self))'")
            }
            let line = String(decoding: stdoutBytes[..<newline], as: UTF8.self)
            stdoutBytes.removeSubrange(...newline)
            return line
        }

        /// Sends `signal` and waits for the end; the outcome's stdout is what came after the lines already read.
        func terminate(_ signal: Int32) throws -> Outcome {
            Glibc.kill(process.processIdentifier, signal)
            return wait()
        }

        func wait() -> Outcome {
            let (outputData, errorData) = ChildProcess.readToEnd(output, errors)
            stdoutBytes += outputData
            return Outcome(status: process.waitForExit().shellStatus, stdout: String(decoding: stdoutBytes, as: UTF8.self),
                           stderr: String(decoding: errorData, as: UTF8.self))
        }

        func kill() {
            if process.isRunning {
                Glibc.kill(process.processIdentifier, SIGKILL)
                _ = process.waitForExit()
            }
        }
    }
}

struct EmulatorBinaryError: Error, CustomStringConvertible {
    var description: String
}

/// A temporary folder, removed afterwards.
final class TemporaryFolder {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-emulator-exe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
