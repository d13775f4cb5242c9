
/// Where APNs requests go.
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production, sandbox

    public var host: String {
        switch self {
        case .production: "api.push.apple.com"
        case .sandbox: "api.sandbox.push.apple.com"
        }
    }
}

/// Everything needed to encode an APNs request for one device, fixed per campaign.
public struct APNsPlan: Sendable {
    public var payload: PayloadNode
    /// `apns-push-type`: alert or background in this version.
    public var pushType: String
    public var priority: Int
    public var topic: String
    /// Absolute UNIX seconds for `apns-expiration`, when the pipeline sets an expiry.
    public var expiration: Int?
    /// `apns-collapse-id`, at most 64 bytes once rendered.
    public var collapseID: HeaderValue?
    public var environment: APNsEnvironment
    public var payloadLimit: Int
}

/// Everything needed to encode an FCM v1 request for one device, fixed per campaign.
public struct FCMPlan: Sendable {
    /// Members of `message` other than the target (`token`).
    public var message: [PayloadMember]
    public var projectID: String
    public var payloadLimit: Int

    var url: String { "https://fcm.googleapis.com/v1/projects/\(projectID)/messages:send" }
}

/// Everything needed to encode an ADM request for one Fire OS device, fixed per campaign.
public struct ADMPlan: Sendable {
    /// The `data` object (string values only).
    public var data: PayloadNode
    /// `consolidationKey`: a newer message with the same key replaces an undelivered older one.
    public var consolidationKey: TemplatedValue?
    /// `expiresAfter`, in seconds from the run's start.
    public var expiresAfter: Int?
    /// ADM limits `data` (6 KB).
    public var dataLimit: Int

    static let urlPrefix = Array("\"https://api.amazon.com/messaging/registrations/".utf8)
}

/// Everything needed to encode a Web Push request for one subscription, fixed per campaign.
/// The dry run writes the plaintext that would be encrypted (RFC 8291) and the headers that do
/// not depend on the send (VAPID `Authorization` and encryption happen at send time).
public struct WebPushPlan: Sendable {
    public var notification: PayloadNode
    /// `TTL` header, seconds (kept as text: the header is the same for every device).
    public var ttl: String
    /// `Urgency` header: very-low, low, normal or high.
    public var urgency: String
    /// `Topic` header (at most 32 base64url characters): replaces an undelivered message.
    public var topic: String?
    /// Plaintext that fits one aes128gcm record of 4096 bytes.
    public var plaintextLimit: Int
}

/// A request POSTed to the webhook configured for an SMS, email or open channel.
public struct WebhookPlan: Sendable {
    /// `sms`, `mms`, `email` or `open::<name>`: the body's `channel` member.
    public var channel: String
    public var url: String
    public var fields: [WebhookField]
}

/// One member of a webhook body.
public enum WebhookField: Sendable {
    case member(PayloadMember)
    /// Text with a channel limit (SMS characters, email body bytes), checked per recipient.
    /// `reportsSegments`: followed by `"encoding"` and `"segments"` (``SMSSegments`` of the text
    /// sent), for the `sms` body's `text`.
    case limitedText(key: String, value: TemplatedValue, limit: TextLimit, role: TextRole, reportsSegments: Bool = false)
}

public enum TextLimit: Sendable, Equatable {
    /// Unicode scalars, as SMS gateways count characters.
    case characters(Int)
    case bytes(Int)
}

/// An open channel's plan, found by the name after `open::` in the device's platform.
public struct OpenChannelPlan: Sendable {
    public var name: String
    public var plan: WebhookPlan
}
