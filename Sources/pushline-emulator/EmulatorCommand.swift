import PushlineCommandLine
import ArgumentParser
import Foundation
import PushlineEmulator
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `pushline-emulator`: the provider emulator as an executable of its own, so that building
/// `pushline` (the job that sends) compiles none of SwiftNIO, nio-ssl, nio-http2 and
/// swift-certificates, which only the emulator uses.
@main
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline-emulator",
        abstract: "Serve a local APNs / FCM v1 / OAuth / Web Push / ADM / webhook emulator over HTTP/2 and TLS, with seeded fault injection.",
        discussion: """
        Keys, secrets (adm-client-secret.txt, webhook-secret.txt) and the self-signed certificate \
        live in --state-dir and are made on first use. \
        `pushline-emulator --print-config` writes them and prints the `providers:` block of a \
        pipeline that sends to this emulator, then exits; `pushline-emulator` (same --port and \
        --state-dir) serves until SIGINT or SIGTERM, then stops gracefully (GOAWAY, open \
        streams finish). On every start it writes webpush-subscriptions.ndjson into --state-dir: \
        its Web Push subscriptions (`pushline generate-audience --webpush-subscriptions FILE` gives \
        them to web devices). GET /stats returns what it received per token; POST /stats/reset starts \
        the counters and the fault plan over. Faults are decided by hashing the seed with the \
        device token and its attempt number, so the same seed and requests give the same \
        answers however they interleave (docs/emulator.md).

        Exit codes (docs/exit-codes.md): 0 stopped by a signal (or --print-config done), 5 \
        standard output could not be written, 11 the emulator could not start (port in use, state \
        folder not writable or holding a bad key), 64 bad command-line usage. Every failure prints one line starting with \
        `pushline-emulator: error:`.
        """
    )

    @Option(parsing: .unconditional, help: "Port on 127.0.0.1 (0 picks a free one; --print-config needs a fixed one).")
    var port = 8443

    @Option(help: ArgumentHelp("Folder for keys and the certificate.", valueName: "dir"))
    var stateDir = ".pushline-emulator"

    @Flag(help: "Write the keys, print the `providers:` block for this emulator, and exit.")
    var printConfig = false

    @Option(help: "APNs team id the provider tokens must name.")
    var teamID = EmulatorCredentials.defaultTeamID

    @Option(help: "APNs topic (bundle id) the requests must name.")
    var topic = EmulatorCredentials.defaultTopic

    @Option(help: "FCM project id.")
    var projectID = EmulatorCredentials.defaultProjectID

    @Option(parsing: .unconditional, help: "Seed of the fault plan.")
    var seed: UInt64 = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("Share of APNs tokens answered 410 Unregistered (0 to 1).", valueName: "rate"))
    var apnsUnregisteredRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of APNs tokens answered 400 BadDeviceToken.", valueName: "rate"))
    var apnsBadTokenRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of FCM tokens answered 404 UNREGISTERED.", valueName: "rate"))
    var fcmUnregisteredRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of Web Push subscriptions answered 410 Gone.", valueName: "rate"))
    var webpushGoneRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of ADM registration ids answered 400 Unregistered.", valueName: "rate"))
    var admUnregisteredRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of ADM registration ids answered 200 with another registrationID (to be replaced).", valueName: "rate"))
    var admReplacedRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of APNs, Web Push, ADM and webhook attempts answered 429 (with Retry-After).", valueName: "rate"))
    var tooManyRequestsRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of FCM attempts answered 429 QUOTA_EXCEEDED (with Retry-After).", valueName: "rate"))
    var quotaExceededRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of attempts answered 500.", valueName: "rate"))
    var internalErrorRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of attempts answered 503 (with Retry-After).", valueName: "rate"))
    var unavailableRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of attempts reset with RST_STREAM REFUSED_STREAM.", valueName: "rate"))
    var refusedStreamRate = 0.0
    @Option(parsing: .unconditional, help: ArgumentHelp("Share of attempts whose connection is closed without an answer.", valueName: "rate"))
    var dropConnectionRate = 0.0

    @Option(parsing: .unconditional, help: ArgumentHelp("Send GOAWAY after this many streams on a connection.", valueName: "n"))
    var goawayAfterStreams: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Retry-After of 429 and 503 answers (0 to 86400).", valueName: "seconds"))
    var retryAfter = 1

    @Option(parsing: .unconditional, help: ArgumentHelp("Latency added to every answer (0 to 600000).", valueName: "ms"))
    var latencyMs = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("Up to this much more latency per answer, seeded (0 to 600000).", valueName: "ms"))
    var latencyJitterMs = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("SETTINGS_MAX_CONCURRENT_STREAMS once a request's credentials are accepted (1 to 100000).", valueName: "n"))
    var maxStreams = 1000

    @Option(parsing: .unconditional, help: ArgumentHelp("Concurrent streams a fresh connection allows before that (1 to 100000; APNs: 1).", valueName: "n"))
    var streamsBeforeAuth = 1

    @Option(parsing: .unconditional, help: ArgumentHelp("Lifetime of issued access tokens (1 to 604800).", valueName: "seconds"))
    var accessTokenLifetime = 3599

    @Option(parsing: .unconditional, help: ArgumentHelp("Validity of a new certificate (1 to 825).", valueName: "days"))
    var certificateDays = 30

    @Option(parsing: .unconditional, help: ArgumentHelp("Event-loop threads (0: one per core, up to 64).", valueName: "n"))
    var threads = 0

    @Option(help: ArgumentHelp("Append {\"subscription\":ID,\"plaintext\":JSON} for every delivered Web Push message to this file.", valueName: "file"))
    var recordWebpush: String?

    @Option(help: ArgumentHelp("Append {\"registration_id\":ID,\"body\":JSON} for every ADM message answered 200 to this file.", valueName: "file"))
    var recordAdm: String?

    @Option(help: ArgumentHelp("Append {\"id\":ID,\"path\":CHANNEL,\"body\":JSON} for every first delivery of a webhook to this file.", valueName: "file"))
    var recordWebhooks: String?

    var faultRates: FaultRates {
        FaultRates([
            .apnsUnregistered: apnsUnregisteredRate, .apnsBadDeviceToken: apnsBadTokenRate, .fcmUnregistered: fcmUnregisteredRate,
            .webpushGone: webpushGoneRate, .admUnregistered: admUnregisteredRate, .admReplaced: admReplacedRate,
            .tooManyRequests: tooManyRequestsRate, .quotaExceeded: quotaExceededRate, .internalServerError: internalErrorRate,
            .serviceUnavailable: unavailableRate, .refusedStream: refusedStreamRate, .dropConnection: dropConnectionRate,
        ])
    }

    func validate() throws {
        if !(0...65_535).contains(port) { throw ValidationError("--port must be between 0 and 65535; got \(port)") }
        if printConfig && port == 0 { throw ValidationError("--print-config needs a fixed --port (the printed endpoint names it)") }
        if stateDir.isEmpty { throw ValidationError("--state-dir must not be empty") }
        for (flag, value) in [("--team-id", teamID), ("--topic", topic), ("--project-id", projectID)] {
            if value.isEmpty || value.utf8.count > 255 || !value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
                throw ValidationError("\(flag) must be 1 to 255 printable ASCII characters without spaces; got '\(value.prefix(64))'")
            }
        }
        let rates: [(String, Double)] = [
            ("--apns-unregistered-rate", apnsUnregisteredRate), ("--apns-bad-token-rate", apnsBadTokenRate),
            ("--fcm-unregistered-rate", fcmUnregisteredRate), ("--webpush-gone-rate", webpushGoneRate),
            ("--adm-unregistered-rate", admUnregisteredRate), ("--adm-replaced-rate", admReplacedRate),
            ("--too-many-requests-rate", tooManyRequestsRate),
            ("--quota-exceeded-rate", quotaExceededRate), ("--internal-error-rate", internalErrorRate),
            ("--unavailable-rate", unavailableRate), ("--refused-stream-rate", refusedStreamRate),
            ("--drop-connection-rate", dropConnectionRate),
        ]
        for (flag, rate) in rates where !(rate >= 0 && rate <= 1) {
            throw ValidationError("\(flag) must be a number between 0 and 1; got \(rate)")
        }
        if let goawayAfterStreams, !(1...Int(Int32.max)).contains(goawayAfterStreams) {
            throw ValidationError("--goaway-after-streams must be between 1 and \(Int32.max); got \(goawayAfterStreams)")
        }
        if !(0...FaultPlan.maxRetryAfterSeconds).contains(retryAfter) { throw ValidationError("--retry-after must be between 0 and 86400; got \(retryAfter)") }
        if !(0...FaultPlan.maxLatencyMilliseconds).contains(latencyMs) { throw ValidationError("--latency-ms must be between 0 and 600000; got \(latencyMs)") }
        if !(0...FaultPlan.maxLatencyMilliseconds).contains(latencyJitterMs) { throw ValidationError("--latency-jitter-ms must be between 0 and 600000; got \(latencyJitterMs)") }
        if !StreamLimits.range.contains(maxStreams) { throw ValidationError("--max-streams must be between 1 and 100000; got \(maxStreams)") }
        if !StreamLimits.range.contains(streamsBeforeAuth) { throw ValidationError("--streams-before-auth must be between 1 and 100000; got \(streamsBeforeAuth)") }
        if streamsBeforeAuth > maxStreams { throw ValidationError("--streams-before-auth (\(streamsBeforeAuth)) must not exceed --max-streams (\(maxStreams))") }
        if !(1...604_800).contains(accessTokenLifetime) { throw ValidationError("--access-token-lifetime must be between 1 and 604800; got \(accessTokenLifetime)") }
        if !(1...825).contains(certificateDays) { throw ValidationError("--certificate-days must be between 1 and 825; got \(certificateDays)") }
        if !EmulatorConfiguration.threadRange.contains(threads) { throw ValidationError("--threads must be between 0 and 64; got \(threads)") }
        if recordWebpush?.isEmpty == true { throw ValidationError("--record-webpush must not be empty") }
        if recordAdm?.isEmpty == true { throw ValidationError("--record-adm must not be empty") }
        if recordWebhooks?.isEmpty == true { throw ValidationError("--record-webhooks must not be empty") }
        // The rates of one provider share the unit interval.
        do throws(EmulatorError) {
            var plan = FaultPlan(seed: seed, rates: faultRates)
            plan.goawayAfterStreams = goawayAfterStreams
            try plan.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let directory = EmulatorStateDirectory(path: stateDir)
        let endpoint = "https://127.0.0.1:\(port)"
        do {
            // With port 0 the service account's token_uri is written again once the port is known.
            let (credentials, tls) = try directory.prepare(
                teamID: teamID, topic: topic, projectID: projectID, endpoint: endpoint,
                certificateValidity: TimeInterval(certificateDays) * 86_400
            )
            if printConfig {
                try Console.bytes(Array(directory.providersYAML(credentials: credentials, endpoint: endpoint).utf8))
                return
            }
            var configuration = EmulatorConfiguration(tls: tls)
            configuration.port = port
            configuration.apns = credentials.apnsAccount
            configuration.fcm = credentials.fcmAccount
            configuration.webPush = credentials.webPushAccount
            configuration.recordWebPush = recordWebpush
            configuration.adm = credentials.admAccount
            configuration.recordADM = recordAdm
            configuration.webhooks = credentials.webhookAccount
            configuration.recordWebhooks = recordWebhooks
            configuration.faults = FaultPlan(seed: seed, rates: faultRates)
            configuration.faults.goawayAfterStreams = goawayAfterStreams
            configuration.faults.retryAfterSeconds = retryAfter
            configuration.faults.latencyMilliseconds = latencyMs
            configuration.faults.latencyJitterMilliseconds = latencyJitterMs
            configuration.streams = StreamLimits(beforeAuthentication: streamsBeforeAuth, max: maxStreams)
            configuration.accessTokenLifetimeSeconds = accessTokenLifetime
            configuration.threads = threads
            let emulator = try await ProviderEmulator.start(configuration)
            if port == 0 {
                try directory.rewriteServiceAccount(credentials: credentials, endpoint: emulator.endpoint)
            }
            try directory.writeWebPushSubscriptions(credentials: credentials, endpoint: emulator.endpoint)
            try directory.writeProvidersFile(credentials: credentials, endpoint: emulator.endpoint)
            try Console.line("pushline-emulator: listening on \(emulator.endpoint) (ca_file \(directory.caFilePath)); send to it with `pushline run PIPELINE --providers \(directory.providersFilePath)`; stop with Ctrl-C")
            let signal = await TerminationSignals.next()
            Console.error("pushline-emulator: signal \(signal), stopping")
            await emulator.stop()
            let stats = emulator.stats()
            let delivered = stats.apns.delivered + stats.fcm.delivered + stats.webpush.delivered + stats.adm.delivered + stats.webhooks.delivered
            try Console.line(
                "pushline-emulator: stopped; \(stats.apns.requests) APNs, \(stats.fcm.requests) FCM, \(stats.webpush.requests) Web Push and "
                    + "\(stats.adm.requests) ADM requests, \(stats.webhooks.requests) webhook requests (\(stats.webhooks.duplicates) duplicates), "
                    + "\(delivered) delivered, \(stats.connectionsOpened) connections"
            )
        } catch let error as EmulatorError {
            Console.fail(error.description)
            throw ExitCode(error.exit)
        }
    }

    /// Parses and runs; every failure is one `pushline-emulator: error:` line and an exit code,
    /// as `pushline` does.
    static func main() async {
        await CommandMain.run(EmulatorCommand.self, program: "pushline-emulator")
    }
}

extension Console {
    /// `pushline-emulator: error: …`: the one line printed when it cannot do its job.
    static func fail(_ message: String) { fail(message, program: "pushline-emulator") }
}
