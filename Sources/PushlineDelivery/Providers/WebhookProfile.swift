public import PushlineCore

/// Webhooks: per channel; a receiver is one service of the customer's: four connections, and
/// 500/s, an SMS or email gateway's order of magnitude (set the gateway's own).
public enum WebhookProfile: ProviderProfile {
    public static let provider = Provider.webhook
    public static let displayName = "Webhooks"
    public static let sentIDKey: StaticString = "provider_id"
    public static let credentialHint = "check the channel's url and secret_file: the receiver refuses the signature"
    public static let defaultConnections = 4
    public static let defaultStreams = 100
    public static let defaultRate = "500/s"

    public static func classify(_ answer: ProviderAnswer) -> ResponseClassification {
        WebhookResponseClassifier.classify(status: answer.status, retryAfter: answer.retryAfter)
    }
}
