import Foundation
import PushlineCore
import PushlineDelivery
import Testing

/// Each provider's profile is its own: it names that provider, and reads that provider's
/// answers (the wire reasons of one provider are not another's).
@Suite("Provider profiles")
struct ProviderProfileTests {
    @Test(arguments: Provider.allCases)
    func theProfileIsTheProviders(_ provider: Provider) {
        #expect(provider.profile.provider == provider)
        #expect(provider.profile.classify(ProviderAnswer(status: 200)).outcome == .sent(providerID: nil))
        #expect(provider.profile.classify(ProviderAnswer(status: 0)).outcome == .retryable(newConnection: true))
    }

    /// A reason only one provider sends, read by each profile: only the owner knows it.
    @Test func wireReasonsAreReadByTheirOwnProfileOnly() {
        let apnsUnregistered = ProviderAnswer(status: 410, body: Array(#"{"reason":"Unregistered"}"#.utf8))
        #expect(APNsProfile.classify(apnsUnregistered).outcome == .invalidToken(timestamp: nil))
        #expect(APNsProfile.classify(apnsUnregistered).reason == "Unregistered")
        let fcmUnregistered = ProviderAnswer(
            status: 404, body: Array(#"{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#.utf8)
        )
        #expect(FCMProfile.classify(fcmUnregistered).outcome == .invalidToken(timestamp: nil))
        #expect(APNsProfile.classify(fcmUnregistered).outcome != .invalidToken(timestamp: nil))
        #expect(WebPushProfile.classify(ProviderAnswer(status: 410)).outcome == .invalidToken(timestamp: nil))
        #expect(WebhookProfile.classify(ProviderAnswer(status: 410)).outcome != .invalidToken(timestamp: nil))
    }

    /// Stop messages name each provider apart.
    @Test func everyProviderHasItsOwnName() {
        #expect(Provider.allCases.map { $0.profile.displayName } == ["APNs", "FCM", "Web Push", "ADM", "Webhooks"])
    }

    /// A sent line calls the provider's id what that provider calls it (docs/output.md).
    @Test func sentLinesNameTheProvidersID() {
        #expect(Provider.allCases.map { "\($0.profile.sentIDKey)" } == ["apns_id", "message", "provider_id", "provider_id", "provider_id"])
        #expect(Provider.allCases.map(\.rawValue) == ["apns", "fcm", "webpush", "adm", "webhook"])
    }
}
