public import Crypto

/// The Web Push side of an emulator's keys: the VAPID application-server key a sender signs
/// with (RFC 8292) and the subscriptions it may send to. The emulator gets `account` (the
/// VAPID public key and the subscriptions' private keys, to decrypt); a sender gets
/// `vapidPrivateKeyPEM` and the subscriptions' public side (`subscriptionsNDJSON`).
///
/// `description` never shows key material.
public struct WebPushCredentials: Sendable, CustomStringConvertible {
    public let vapidPrivateKey: P256.Signing.PrivateKey
    public let subscriptions: [WebPushSubscription]

    /// The VAPID `sub` the printed configuration names (a contact the emulator never writes to).
    public static let subject = "mailto:emulator@pushline.invalid"
    public static let defaultSubscriptionCount = 256

    public init(vapidPrivateKey: P256.Signing.PrivateKey, subscriptions: [WebPushSubscription]) {
        self.vapidPrivateKey = vapidPrivateKey
        self.subscriptions = subscriptions
    }

    /// A new VAPID key and `count` subscriptions with ids `s000`, `s001`, ….
    public static func generate(subscriptions count: Int = defaultSubscriptionCount) -> WebPushCredentials {
        WebPushCredentials(
            vapidPrivateKey: P256.Signing.PrivateKey(),
            subscriptions: (0..<max(0, count)).map { WebPushSubscription.generate(id: subscriptionID($0)) }
        )
    }

    /// `s` and at least three decimal digits: short, URL-safe, sorted as numbered.
    public static func subscriptionID(_ index: Int) -> String {
        let digits = String(index)
        return "s" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    public var account: WebPushAccount {
        WebPushAccount(vapidPublicKey: vapidPrivateKey.publicKey, subscriptions: subscriptions)
    }

    /// PEM (SEC 1 `EC PRIVATE KEY`, as `P256.Signing.PrivateKey.pemRepresentation` writes it).
    public var vapidPrivateKeyPEM: String { vapidPrivateKey.pemRepresentation }

    /// One subscription per line, endpoints at `origin` (`https://127.0.0.1:<port>`).
    public func subscriptionsNDJSON(origin: String) -> String {
        var text = ""
        text.reserveCapacity(subscriptions.count * 200)
        for subscription in subscriptions {
            text += subscription.json(origin: origin)
            text += "\n"
        }
        return text
    }

    public var description: String {
        "WebPushCredentials(\(subscriptions.count) subscriptions, keys redacted)"
    }
}
