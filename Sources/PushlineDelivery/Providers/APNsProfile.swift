public import PushlineCore

/// APNs treats connection churn as abuse and gives each connection hundreds of streams (500 to
/// 1,500 announced once a token is accepted; the lowest seen is taken): two long-lived
/// connections. It publishes no quota: 10,000/s, which adaptive slowdown lowers on
/// TooManyRequests.
public enum APNsProfile: ProviderProfile {
    public static let provider = Provider.apns
    public static let displayName = "APNs"
    public static let sentIDKey: StaticString = "apns_id"
    public static let credentialHint = "check team_id, key_id, key_file and environment"
    public static let defaultConnections = 2
    public static let defaultStreams = 500
    public static let defaultRate = "10000/s"

    public static func classify(_ answer: ProviderAnswer) -> ResponseClassification {
        APNsResponseClassifier.classify(
            status: answer.status, body: answer.body, apnsID: answer.messageID, retryAfter: answer.retryAfter,
            bodyTruncatedAt: answer.bodyTruncatedAt
        )
    }
}
