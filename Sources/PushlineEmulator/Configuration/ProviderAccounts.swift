public import Crypto
public import _CryptoExtras

/// What the emulator knows of an APNs team: it verifies provider tokens (ES256 JWTs) against
/// the public half of the team's .p8 key, and accepts one bundle id as topic.
public struct APNsAccount: Sendable {
    public var teamID: String
    public var keyID: String
    public var publicKey: P256.Signing.PublicKey
    /// The bundle id; push types that need a suffix (`.voip`, …) expect it appended.
    public var topic: String

    public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, topic: String) {
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.topic = topic
    }
}

/// What the emulator knows of a Firebase project and its service account: it verifies OAuth
/// assertions (RS256 JWTs) against the service account's public key.
public struct FCMAccount: Sendable {
    public var projectID: String
    public var clientEmail: String
    /// The service account's `private_key_id`; an assertion's `kid`, when present, must match.
    public var privateKeyID: String
    public var publicKey: _RSA.Signing.PublicKey

    public init(projectID: String, clientEmail: String, privateKeyID: String, publicKey: _RSA.Signing.PublicKey) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.publicKey = publicKey
    }
}

/// What the emulator knows of a Web Push application server and its subscriptions: VAPID
/// tokens (ES256 JWTs) must verify with `vapidPublicKey` and name it in `k`; messages are
/// decrypted with the subscription's private key and auth secret.
public struct WebPushAccount: Sendable {
    public let vapidPublicKey: P256.Signing.PublicKey
    /// The 65-byte uncompressed point a request's `k` must decode to.
    public let vapidPublicKeyBytes: [UInt8]
    /// By id (the last segment of `/push/<id>`).
    public let subscriptions: [String: WebPushSubscription]
    /// Ids given twice, or not URL-safe, or auth secrets not 16 bytes: refused by `validate`.
    let problem: String?

    public init(vapidPublicKey: P256.Signing.PublicKey, subscriptions: [WebPushSubscription]) {
        self.vapidPublicKey = vapidPublicKey
        self.vapidPublicKeyBytes = Array(vapidPublicKey.x963Representation)
        var byID: [String: WebPushSubscription] = [:]
        var problem: String?
        for subscription in subscriptions {
            if problem == nil {
                if !WebPushSubscription.isValidID(subscription.id) {
                    problem = "Web Push subscription ids must be 1 to 64 base64url characters; got '\(subscription.id.prefix(64))'"
                } else if byID[subscription.id] != nil {
                    problem = "Web Push subscription id '\(subscription.id)' is given twice"
                } else if subscription.auth.count != 16 {
                    problem = "the auth secret of Web Push subscription '\(subscription.id)' must be 16 bytes; got \(subscription.auth.count)"
                }
            }
            byID[subscription.id] = subscription
        }
        self.subscriptions = byID
        self.problem = problem
    }
}

/// What the emulator knows of an Amazon security profile: the client id and secret that buy an
/// ADM access token at `/auth/O2/token` (client-credentials grant, scope `messaging:push`).
///
/// `description` never shows the secret.
public struct ADMAccount: Sendable, CustomStringConvertible {
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    public var description: String { "ADMAccount(\(clientID), secret redacted)" }
}

/// What the emulator knows of a Standard Webhooks sender: the HMAC-SHA256 key (the base64
/// after `whsec_` of the secret, decoded) that `webhook-signature` must be made with.
///
/// `description` never shows the key.
public struct WebhookAccount: Sendable, CustomStringConvertible {
    public let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    /// `whsec_<base64>`, as the secret file holds it; nil for anything else (`WebhookSecret`).
    public init?(secret: String) {
        guard let key = WebhookSecret.key(secret) else { return nil }
        self.key = key
    }

    public var description: String { "WebhookAccount(\(key.count)-byte key redacted)" }
}
