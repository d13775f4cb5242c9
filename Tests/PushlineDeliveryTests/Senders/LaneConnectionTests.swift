import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import Testing

/// What the lanes do about connections: GOAWAY, timeouts, an endpoint that cannot be reached or
/// trusted, and what they never print.
@Suite("Lane connections")
struct LaneConnectionTests {
    @Test("GOAWAY every 40 streams: the streams above the last id are refused, resent by the lane unmarked, each device delivered once")
    func goaway() async throws {
        try await withLaneHarness({ $0.faults.goawayAfterStreams = 40 }) { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(harness.settings(connections: 1, streams: 20)), routes: TestCampaign.routes)
            let tokens = (0..<300).map(TestCampaign.fcmToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: tokens))
            #expect(run.violations.isEmpty)
            #expect(run.counts[.sent] == 300)
            let stats = harness.emulator.stats()
            // 300 streams at 40 per connection: at least 7 GOAWAYs.
            #expect(stats.goawaysSent >= 7)
            for (tag, token) in tokens.enumerated() {
                let delivered = stats.fcm.tokens[token]?.delivered ?? 0
                let outcome = try #require(run.outcome(tag))
                // Delivered twice only when the lane said it might be.
                #expect(delivered == 1 || (delivered == 2 && outcome.possibleDuplicate), "\(tag)")
            }
            // The engine reports every stream above a GOAWAY's last id as refused (RFC 9113
            // §6.8: not processed); the lane resends it without a mark. The emulator processed
            // each device once, so nothing is marked.
            #expect(stats.fcm.delivered == 300)
            #expect(run.settled.values.allSatisfy { !$0.outcome.possibleDuplicate })
            // Attempts count every copy written; a copy above a GOAWAY's last id reaches the
            // server but is not processed (the emulator does not count it): the report is never
            // below what the server processed.
            let reported = run.settled.values.reduce(0) { $0 + $1.outcome.attempts }
            #expect(run.report?.attempts == reported)
            #expect(reported >= stats.fcm.requests)
        }
    }

    @Test("an answer slower than the request timeout: resent once (possible duplicate), then given up as no_response_after_resend")
    func timeout() async throws {
        // Answers take 12 s and a request may take 3 s, connection included: room for a slow TLS
        // handshake on a busy machine, so every attempt reaches the server and times out there.
        try await withLaneHarness({ $0.faults.latencyMilliseconds = 12_000 }) { harness in
            var settings = harness.settings(connections: 1, streams: 1)
            settings.requestTimeout = .seconds(3)
            let lane = try ProviderSenders.make(harness.fcmConfiguration(settings), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: [TestCampaign.fcmToken(1)]))
            let outcome = try #require(run.outcome(0))
            #expect(outcome.kind == .failed)
            #expect(outcome.reasonCode == "no_response_after_resend")
            #expect(outcome.httpStatus == 0)
            #expect(outcome.attempts == 2)
            #expect(run.deferred == [0])
        }
    }

    @Test("nothing listens at the endpoint: the lane stops after five refused connections, one at a time, and fails the rest")
    func unreachable() async throws {
        try await withLaneHarness { harness in
            var settings = harness.settings()
            settings.endpoint = "https://127.0.0.1:1"
            let logged = LogLines()
            let lane = try ProviderSenders.make(harness.apnsConfiguration(settings), routes: TestCampaign.routes, logger: { logged.append($0) })
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: (0..<200).map(TestCampaign.apnsToken)))
            #expect(run.violations.isEmpty)
            #expect(run.settled.count == 200)
            #expect(run.settled.values.allSatisfy { $0.outcome.reasonCode == "provider_stopped" })
            let report = try #require(run.report)
            // Warming: one request at a time while nothing has answered, five in all; none
            // reached a server, so none counts as an attempt (attempts are what a server received).
            #expect(report.attempts == 0)
            let message = try #require(report.stoppedBecause)
            #expect(message.contains("cannot reach https://127.0.0.1:1"))
            #expect(message.contains("5 requests in a row"))
            #expect(logged.lines.count == 1)
        }
    }

    @Test("the emulator's certificate without its ca_file: the first request fails verification and stops the lane")
    func untrustedCertificate() async throws {
        try await withLaneHarness { harness in
            var settings = harness.settings()
            settings.caFile = nil
            let lane = try ProviderSenders.make(harness.apnsConfiguration(settings), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: (0..<20).map(TestCampaign.apnsToken)))
            #expect(run.settled.count == 20)
            #expect(run.settled.values.allSatisfy { $0.outcome.reasonCode == "provider_stopped" })
            // The handshake failed: nothing reached the server.
            #expect(run.report?.attempts == 0)
            let message = try #require(run.report?.stoppedBecause)
            #expect(message.contains("does not verify"))
            #expect(message.contains("ca_file"))
            #expect(harness.emulator.stats().apns.requests == 0)
        }
    }

    @Test("make refuses what cannot be sent: credentials of another provider, an endpoint with a path")
    func makeRefuses() async throws {
        try await withLaneHarness { harness in
            let apns = try harness.apnsConfiguration()
            let fcm = try harness.fcmConfiguration()
            func message(_ configuration: ProviderSendConfiguration) -> String? {
                do {
                    _ = try ProviderSenders.make(configuration, routes: TestCampaign.routes)
                    return nil
                } catch {
                    return error.description
                }
            }
            var adm = apns
            adm.provider = .adm
            #expect(message(adm) == "provider adm was given APNs credentials")
            var webpush = apns
            webpush.provider = .webpush
            #expect(message(webpush) == "provider webpush was given APNs credentials")
            var mixed = apns
            mixed.credentials = fcm.credentials
            #expect(message(mixed) == "provider apns was given FCM credentials")
            for endpoint in ["http://127.0.0.1:8443", "https://127.0.0.1:8443/3/device", "https://", "https://user@host", "127.0.0.1:8443"] {
                var bad = apns
                bad.settings.endpoint = endpoint
                let text = message(bad)
                #expect(text?.hasPrefix("apns endpoint '\(endpoint)'") == true, "\(endpoint): \(text ?? "accepted")")
            }
            var missingCA = fcm
            missingCA.settings.caFile = harness.folder + "/missing.pem"
            #expect(message(missingCA)?.contains("missing.pem") == true)
            // A trailing slash is only a way of writing the origin.
            var slash = fcm
            slash.settings.endpoint = harness.emulator.endpoint + "/"
            let lane = try ProviderSenders.make(slash, routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: [TestCampaign.fcmToken(1)]))
            #expect(run.outcome(0)?.kind == .sent)
        }
    }

    @Test("no output of a lane holds a secret: JWTs, access tokens and key material stay out of logs, stop messages and outcomes")
    func noSecrets() async throws {
        let offset = Mutex<Int64>(0)
        try await withLaneHarness({ configuration in
            configuration.clock = EmulatorClock { Int64(Date().timeIntervalSince1970 * 1000) + offset.withLock { $0 } }
        }) { harness in
            var texts: [String] = []
            let logged = LogLines()
            // An APNs run stopped by expired tokens, an FCM run that refreshes its access token,
            // and an FCM run whose account is refused.
            offset.withLock { $0 = 7_200_000 }
            let apns = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes, logger: { logged.append($0) })
            let apnsRun = await LaneDriver.run(apns, TestCampaign.requests(provider: .apns, tokens: (0..<5).map(TestCampaign.apnsToken)))
            offset.withLock { $0 = 0 }
            let fcm = try ProviderSenders.make(harness.fcmConfiguration(), routes: TestCampaign.routes, logger: { logged.append($0) })
            let fcmRun = await LaneDriver.run(fcm, TestCampaign.requests(provider: .fcm, tokens: (0..<5).map(TestCampaign.fcmToken)))
            for run in [apnsRun, fcmRun] {
                texts.append(run.report?.stoppedBecause ?? "")
                texts.append(String(describing: run.report))
                for settled in run.settled.values {
                    texts.append(settled.outcome.description)
                    texts.append(settled.outcome.reasonCode ?? "")
                    texts.append(settled.outcome.providerID ?? "")
                    texts.append(String(describing: settled))
                }
            }
            texts += logged.lines
            #expect(apnsRun.report?.stoppedBecause != nil)
            #expect(fcmRun.counts[.sent] == 5)
            let keyLines = (harness.credentials.apnsKeyPEM + harness.credentials.fcmPrivateKey.pkcs8PEMRepresentation)
                .split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            let all = texts.joined(separator: "\n")
            // Every JWT (provider token, assertion) starts with the base64url of `{"`.
            #expect(!all.contains("eyJ"))
            #expect(!all.lowercased().contains("bearer"))
            #expect(!all.contains("PRIVATE KEY"))
            for line in keyLines { #expect(!all.contains(line)) }
        }
    }
}

import Synchronization
