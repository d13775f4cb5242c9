public import PushlineCore

/// ADM may answer over HTTP/1.1 (one request per connection at a time): ten connections. It
/// publishes no rate: 1,000/s, lowered on MaxRateExceeded.
public enum ADMProfile: ProviderProfile {
    public static let provider = Provider.adm
    public static let displayName = "ADM"
    public static let sentIDKey: StaticString = "provider_id"
    public static let credentialHint = "check client_id and client_secret_file, and that Device Messaging is enabled for the app's security profile"
    public static let defaultConnections = 10
    public static let defaultStreams = 100
    public static let defaultRate = "1000/s"

    public static func classify(_ answer: ProviderAnswer) -> ResponseClassification {
        ADMResponseClassifier.classify(
            status: answer.status, body: answer.body, sentRegistrationID: answer.sentTarget, requestID: answer.messageID,
            retryAfter: answer.retryAfter, bodyTruncatedAt: answer.bodyTruncatedAt
        )
    }
}
