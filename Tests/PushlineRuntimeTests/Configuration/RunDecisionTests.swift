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
