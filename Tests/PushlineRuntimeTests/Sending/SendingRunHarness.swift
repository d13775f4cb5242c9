import Crypto
import Foundation
import Logging
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import Synchronization
import Testing

/// A whole sending run against the in-process emulator: real credential files, a pipeline file
/// whose `providers:` point at the emulator over TLS, an audience file, and `CampaignRun` with the
/// real senders. What a person gets from `pushline-emulator` + `pushline run`.
struct SendingRunHarness {
    /// RSA key generation is slow: one set of credentials for every run.
    static let credentials: EmulatorCredentials = try! EmulatorCredentials.generate()
    static let tls: TLSIdentity = try! TLSIdentity.generate(validity: 86_400)

    let emulator: ProviderEmulator
    let scratch: Scratch
    var credentials: EmulatorCredentials { Self.credentials }

    /// `customers` audience lines `c-0`, `c-1`, …, each with one iOS (APNs) and one Android (FCM)
    /// device: the plain two-provider audience the observability tests send.
    static func iosAndAndroidAudience(customers: Int) -> String {
        var text = ""
        for n in 0..<customers {
            text += #"{"id":"c-\#(n)","devices":[{"platform":"ios","token":"\#(TestTokens.apns(n))"},{"platform":"android","token":"\#(TestTokens.fcm(n))"}]}"# + "\n"
        }
        return text
    }

    /// `configure`: more emulator settings (Web Push), with the scratch folder the run uses.
    static func start(
        faults: FaultPlan = FaultPlan(), configure: (inout EmulatorConfiguration, Scratch) -> Void = { _, _ in }
    ) async throws -> SendingRunHarness {
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.apns = credentials.apnsAccount
        configuration.fcm = credentials.fcmAccount
        configuration.faults = faults
        configuration.threads = 2
        let scratch = try Scratch()
        configure(&configuration, scratch)
        let emulator = try await ProviderEmulator.start(configuration)
        let harness = SendingRunHarness(emulator: emulator, scratch: scratch)
        try tls.certificatePEM.write(toFile: harness.scratch.file("ca.pem"), atomically: true, encoding: .utf8)
        try credentials.apnsKeyPEM.write(toFile: harness.scratch.file("AuthKey.p8"), atomically: true, encoding: .utf8)
        try credentials.serviceAccountJSON(tokenURI: emulator.tokenURI)
            .write(toFile: harness.scratch.file("service-account.json"), atomically: true, encoding: .utf8)
        return harness
    }

    func stop() async { await emulator.stop() }

    /// The pipeline: iOS to APNs, Android to FCM, both at the emulator; `apnsKeyFile` replaces the
    /// emulator's own key (a wrong key).
    func writePipeline(apnsKeyFile: String = "AuthKey.p8") throws -> String {
        let yaml = """
        name: send-faults
        audience: audience.ndjson
        device_types: [ios, android]
        notification:
          alert: "Hello {{ id }}"
          ios:
            collapse_id: "c-{{ id }}"
        providers:
          apns:
            team_id: "\(credentials.teamID)"
            key_id: "\(credentials.keyID)"
            key_file: \(apnsKeyFile)
            topic: \(credentials.topic)
            endpoint: "\(emulator.endpoint)"
            ca_file: ca.pem
            connections: 2
            streams: 100
            rate: 200000/s
          fcm:
            service_account: service-account.json
            endpoint: "\(emulator.endpoint)"
            ca_file: ca.pem
            connections: 2
            streams: 100
            rate: 200000/s

        """
        let path = scratch.file("pipeline.yaml")
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs the pipeline with the real senders; retries quicker than the defaults (the policy's
    /// timing is tested on its own), Retry-After still honoured.
    /// `observation`: progress and metrics around the run (its observer given to the run).
    func run(pipelinePath: String, logs: LogRecorder, observation: RunObservation? = nil) async throws -> RunReport {
        let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:])
        var configurations = try DeliveryConfiguration.load(pipeline: loaded)
        for i in configurations.indices {
            configurations[i].settings.retry = RetryPolicy(
                maximumAttempts: 5, initialBackoff: .milliseconds(50), maximumBackoff: .seconds(1), maximumTotalTime: .seconds(120)
            )
            configurations[i].settings.requestTimeout = .seconds(20)
        }
        var run = CampaignRun(
            pipeline: loaded, audiencePath: loaded.audiencePath!, outputFolder: scratch.file("out"), workers: 2,
            mode: .send(configurations, validateOnly: false), logger: logs.logger
        )
        guard let observation else { return await run.run() }
        run.observer = observation.observer
        return await observation.observe { [run] in await run.run() }
    }
}

extension SendingRunHarness {
    /// The same pipeline as a dry run into `output`.
    func runDryRun(pipelinePath: String, output: String, encrypt: Bool = false) async throws -> RunReport {
        let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:])
        var run = CampaignRun(
            pipeline: loaded, audiencePath: loaded.audiencePath!, outputFolder: output, workers: 2, mode: .dryRun, logger: LogRecorder().logger
        )
        run.dryRunEncryptsWebPush = encrypt
        return await run.run()
    }
}

/// Deterministic device tokens: 64 hex digits for APNs, an FCM-shaped registration token.
enum TestTokens {
    static func hex(_ rng: inout SplitMix64, words: Int) -> String {
        (0..<words).map { _ in
            let text = String(rng.next(), radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    static func apns(_ n: Int) -> String {
        var rng = SplitMix64(seed: UInt64(n) &* 2 &+ 1)
        return hex(&rng, words: 4)
    }

    static func fcm(_ n: Int) -> String {
        var rng = SplitMix64(seed: UInt64(n) &* 2 &+ 2)
        return "d" + hex(&rng, words: 2).prefix(21) + ":APA91b" + hex(&rng, words: 3)
    }
}

/// Every log line of a run, rendered, for the secrets check.
final class LogRecorder: Sendable {
    let lines = Mutex<[String]>([])
    /// The threads that logged a message starting with `threadPrefix` (BackgroundThreadsTests).
    let threads = ThreadLog()
    let threadPrefix: String?

    init(notingThreadsOf threadPrefix: String? = nil) {
        self.threadPrefix = threadPrefix
    }

    var logger: Logger {
        Logger(label: "send-test") { _ in RecordingHandler(recorder: self) }
    }

    var all: [String] { lines.withLock { $0 } }

    struct RecordingHandler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            if let prefix = recorder.threadPrefix, "\(event.message)".hasPrefix(prefix) { recorder.threads.noteCurrent() }
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let error = event.error.map { " error=\($0)" } ?? ""
            let text = "\(event.level) \(event.message) " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + error
            recorder.lines.withLock { $0.append(text) }
        }
    }
}

/// The lines of an NDJSON results file as JSON objects.
func readResults(_ path: String) throws -> [[String: Any]] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return try text.split(separator: "\n").map { line in
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CocoaError(.coderReadCorrupt)
        }
        return object
    }
}
