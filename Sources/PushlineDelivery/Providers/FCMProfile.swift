public import PushlineCore

/// FCM allows about 100 streams per connection, and its default project quota (600,000 a
/// minute, 10,000/s) at a 100 ms round trip keeps about 1,000 requests in flight: ten connections.
public enum FCMProfile: ProviderProfile {
    public static let provider = Provider.fcm
    public static let displayName = "FCM"
    public static let sentIDKey: StaticString = "message"
    public static let credentialHint = "check the service account, project_id and the account's Firebase roles"
    public static let defaultConnections = 10
    public static let defaultStreams = 100
    public static let defaultRate = "600000/min"

    public static func classify(_ answer: ProviderAnswer) -> ResponseClassification {
        FCMResponseClassifier.classify(
            status: answer.status, body: answer.body, retryAfter: answer.retryAfter, bodyTruncatedAt: answer.bodyTruncatedAt
        )
    }
}
