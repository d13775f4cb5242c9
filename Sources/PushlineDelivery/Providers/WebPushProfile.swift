public import PushlineCore

/// Web Push: per push service; two connections of 100 streams carry a few thousand a second.
/// Push services publish no rate: 1,000/s per push service, lowered on 429.
public enum WebPushProfile: ProviderProfile {
    public static let provider = Provider.webpush
    public static let displayName = "Web Push"
    public static let sentIDKey: StaticString = "provider_id"
    public static let credentialHint = "check vapid_private_key and subject: the push service refuses the VAPID token"
    public static let defaultConnections = 2
    public static let defaultStreams = 100
    public static let defaultRate = "1000/s"

    public static func classify(_ answer: ProviderAnswer) -> ResponseClassification {
        WebPushResponseClassifier.classify(status: answer.status, retryAfter: answer.retryAfter)
    }
}
