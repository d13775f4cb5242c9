/// Size limits enforced on the final encoded bytes before anything is sent (see PROVIDERS.md).
public enum ProviderLimits {
    /// APNs payload (the request body).
    public static let apnsPayload = 4096
    /// APNs payload for VoIP pushes.
    public static let apnsVoIPPayload = 5120
    /// FCM v1 message payload (the message without its target).
    public static let fcmPayload = 4096
    /// FCM v1 message payload for topic messages.
    public static let fcmTopicPayload = 2048
    /// Airship-style `ios` / `android` override section.
    public static let overrideSection = 4096
    /// ADM `data` (6 KB).
    public static let admData = 6144
    /// Web Push plaintext in one aes128gcm record: 4096 − 86 header − 1 delimiter − 16 tag.
    public static let webPushPlaintext = 3993
    /// SMS alert, in characters.
    public static let smsCharacters = 1600
    /// Email html_body and plaintext_body, each.
    public static let emailBody = 102_400
    /// `apns-collapse-id` header, in UTF-8 bytes.
    public static let apnsCollapseID = 64
    /// Web Push `Topic` header, in base64url characters.
    public static let webPushTopic = 32
}
