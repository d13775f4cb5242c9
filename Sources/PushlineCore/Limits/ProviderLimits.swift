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
    /// ADM `expiresAfter`, in seconds: Amazon keeps a message at most 31 days, and takes no 0
    /// (`InvalidExpiration`).
    public static let admExpiresAfter = 1...2_678_400
    /// ADM `consolidationKey`, in characters (Amazon: "maximum of 64 characters"), counted in
    /// UTF-16 units (`admKeyLength`), the longest reading of that limit.
    public static let admConsolidationKey = 64

    /// The length of a UTF-8 `key` as `admConsolidationKey` counts it: UTF-16 units, so a
    /// character outside the Basic Multilingual Plane (an emoji) counts 2. No allocation.
    public static func admKeyLength<Bytes: Collection>(utf8 key: Bytes) -> Int where Bytes.Element == UInt8 {
        var units = 0
        for byte in key where byte & 0xC0 != 0x80 {
            units += byte >= 0xF0 ? 2 : 1
        }
        return units
    }
}
