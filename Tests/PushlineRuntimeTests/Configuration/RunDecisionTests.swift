import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineRuntime
import Testing

/// How `run` picks its mode from the pipeline and the flags (RunDecision).
@Suite("Run decision: dry run, send, validate-only")
struct RunDecisionTests {
    static func load(_ providers: String, in scratch: Scratch, deviceTypes: String = "[ios, android]") throws -> LoadedPipeline {
        try PipelineLoader.load(path: try writePipeline(DeliveryConfigurationTests.pipeline(providers, deviceTypes: deviceTypes), in: scratch), now: 1_800_000_000, environment: [:])
    }

    static func sent(_ decision: RunDecision) -> (providers: [Provider], validateOnly: Bool)? {
        guard case .send(let configurations, let validateOnly) = decision.mode else { return nil }
        return (configurations.map(\.provider), validateOnly)
    }

    @Test func withoutCredentialsARunIsADryRunAndSaysSo() throws {
        let scratch = try Scratch()
        let loaded = try Self.load("  apns: { topic: t }\n  fcm: { project_id: p1 }\n", in: scratch)
        #expect(!loaded.delivery.hasCredentials)
        let decision = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false)
        guard case .dryRun = decision.mode else { Issue.record("dry run expected"); return }
        #expect(decision.notice == "no provider credentials configured (providers.apns.key_file, providers.fcm.service_account, providers.webpush.vapid_private_key): this run is a dry run, nothing is sent")
        // Asked for, it is a dry run without a notice.
        #expect(try RunDecision(pipeline: loaded, dryRun: true, validateOnly: false).notice == nil)
    }

    @Test func withCredentialsARunSendsToEveryReachedProvider() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        var loaded = try Self.load(DeliveryConfigurationTests.apns(f) + DeliveryConfigurationTests.fcm(f), in: scratch)
        let decision = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false)
        #expect(Self.sent(decision)?.providers == [.apns, .fcm] && Self.sent(decision)?.validateOnly == false)
        #expect(decision.notice == nil)
        decision.apply(to: &loaded)
        #expect(!loaded.campaign.fcmValidateOnly)
        // --dry-run still wins.
        guard case .dryRun = try RunDecision(pipeline: loaded, dryRun: true, validateOnly: false).mode else {
            Issue.record("dry run expected")
            return
        }
    }

    @Test func validateOnlySetsTheFCMFlagBeforeTheEncoderIsMade() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        var loaded = try Self.load(DeliveryConfigurationTests.apns(f) + DeliveryConfigurationTests.fcm(f), in: scratch)
        let decision = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: true)
        #expect(Self.sent(decision)?.validateOnly == true)
        decision.apply(to: &loaded)
        #expect(loaded.campaign.fcmValidateOnly)
        #expect(decision.describeProviders() == [
            "sending to apns at the provider's host (team_id PUSHLINE01, key_id \(f.keyID)): 2 connections × 500 streams, rate 10000/s (burst 1000)",
            "sending to fcm at the provider's host (project pushline-demo, client_email pushline-emulator@pushline-demo.iam.gserviceaccount.com): 10 connections × 100 streams, rate 10000/s (burst 1000)",
            "--validate-only: FCM requests carry validate_only (checked, not delivered); APNs devices are skipped (validate_only)",
        ])
        #expect(SkipReason.validateOnly.code == "validate_only")
    }

    /// A shard's start-up lines name the rates it sends at (the configured ones divided by the
    /// shard count, as `RunMode.sharded` gives its lanes), not the campaign's: `rate 800/s` in
    /// the log of a shard sending at 100/s misled operators (issue 36). Webhook channels each
    /// have their own rate, divided too.
    @Test func aShardLogsTheRatesItSendsAt() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try (DeliveryConfigurationTests.webhookSecret + "\n").write(toFile: scratch.file("hooks.txt"), atomically: true, encoding: .utf8)
        let yaml = DeliveryConfigurationTests.pipeline(
            DeliveryConfigurationTests.apns(f, extra: ", rate: 800/s") + DeliveryConfigurationTests.fcm(f, extra: ", rate: 48000/min")
                + "  sms: { url: \"https://hooks.example/sms\", secret_file: hooks.txt, rate: 40/s }\n",
            deviceTypes: "[ios, android, sms]"
        )
        let loaded = try PipelineLoader.load(path: try writePipeline(yaml, in: scratch), now: 1_800_000_000, environment: [:])
        let decision = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false)
        let shard = try AudienceShard(index: 3, count: 8)
        let lines = decision.describeProviders(shard: shard)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasSuffix("2 connections × 500 streams, rate 100/s (burst 10), shard 3/8's share of 800/s (burst 80)"), "\(lines[0])")
        #expect(lines[1].hasSuffix("10 connections × 100 streams, rate 100/s (burst 10), shard 3/8's share of 800/s (burst 80)"), "\(lines[1])")
        #expect(lines[2].hasSuffix("sms 4 connections × 100 streams, rate 5/s (burst 1), shard 3/8's share of 40/s (burst 4)"), "\(lines[2])")
        // The lines say what the lanes get.
        guard case .send(let lanes, _) = decision.mode.sharded(shard) else { Issue.record("a shard still sends"); return }
        #expect(lanes.prefix(2).map(\.settings.rate.perSecond) == [100, 100])
        guard case .webhooks(let channels) = lanes[2].credentials else { Issue.record("webhook channels expected"); return }
        #expect(channels.map(\.settings.rate.perSecond) == [5])
        // One shard of one, or no shard: the configured rate alone.
        #expect(decision.describeProviders(shard: try AudienceShard(index: 0, count: 1)) == decision.describeProviders())
        #expect(decision.describeProviders()[0].hasSuffix("rate 800/s (burst 80)"))
    }

    @Test func validateOnlyIsOnlyForSending() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let withCredentials = try Self.load(DeliveryConfigurationTests.apns(f) + DeliveryConfigurationTests.fcm(f), in: scratch)
        #expect(throws: RunDecision.Refusal.self) { try RunDecision(pipeline: withCredentials, dryRun: true, validateOnly: true) }
        let path = scratch.file("pipeline.yaml")
        let without = try Self.load("  apns: { topic: t }\n  fcm: { project_id: p1 }\n", in: scratch)
        do {
            _ = try RunDecision(pipeline: without, dryRun: false, validateOnly: true)
            Issue.record("validate-only without credentials was taken")
        } catch {
            #expect(error.pipelineError == nil)
            #expect(error.usage == "--validate-only needs provider credentials (it sends to FCM with validate_only); \(path) configures none")
        }
    }

    @Test func aMissingProviderRefusesSendingWithTheDiagnostics() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let loaded = try Self.load(DeliveryConfigurationTests.apns(f) + "  fcm: { project_id: p1 }\n", in: scratch, deviceTypes: "[android]")
        do {
            _ = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false)
            Issue.record("sending without FCM credentials was taken")
        } catch {
            #expect(error.usage == nil)
            #expect(error.pipelineError?.diagnostics.map(\.description) == [
                "7:8: error: providers.fcm.service_account: is required to send: android devices go to FCM; add the service account JSON file to providers.fcm (or run with --dry-run)",
            ])
        }
    }
}
