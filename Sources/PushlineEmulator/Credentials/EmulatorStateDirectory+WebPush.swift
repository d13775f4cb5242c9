import Crypto
import PushlineCore

/// The Web Push part of the state folder: the VAPID key a sender signs with, the subscriptions'
/// private keys (kept, so an audience made from `webpush-subscriptions.ndjson` stays valid
/// across restarts) and that NDJSON file itself, rewritten on every start with the endpoint.
extension EmulatorStateDirectory {
    /// `P256.Signing.PrivateKey.pemRepresentation` (0600): providers.webpush.vapid_private_key.
    public var vapidKeyPath: String { path + "/vapid-private-key.pem" }
    /// The subscriptions' ids, private keys and auth secrets (0600).
    public var webPushKeysPath: String { path + "/webpush-subscription-keys.json" }
    /// One subscription per line, as a browser gives it: what an audience's web devices name.
    public var webPushSubscriptionsPath: String { path + "/webpush-subscriptions.ndjson" }

    /// The keys file is read whole (at most 1 MiB, `StateFiles`): about 120 bytes per entry.
    static let maxSubscriptions = 4_096

    /// Reads the VAPID key and the subscriptions, making and writing whichever is missing.
    func prepareWebPush() throws(EmulatorError) -> WebPushCredentials {
        let vapidKey: P256.Signing.PrivateKey
        if let text = try StateFiles.read(vapidKeyPath) {
            do {
                vapidKey = try P256.Signing.PrivateKey(pemRepresentation: text)
            } catch {
                throw .stateFile(vapidKeyPath, "not a PEM P-256 private key (remove it to make a new one)")
            }
        } else {
            vapidKey = P256.Signing.PrivateKey()
            try StateFiles.writeFile(vapidKeyPath, vapidKey.pemRepresentation)
        }
        let subscriptions: [WebPushSubscription]
        if let text = try StateFiles.read(webPushKeysPath) {
            subscriptions = try Self.parseSubscriptionKeys(text, path: webPushKeysPath)
        } else {
            subscriptions = WebPushCredentials.generate().subscriptions
            try StateFiles.writeFile(webPushKeysPath, Self.subscriptionKeysJSON(subscriptions))
        }
        return WebPushCredentials(vapidPrivateKey: vapidKey, subscriptions: subscriptions)
    }

    /// Writes `webpush-subscriptions.ndjson` with endpoints at `endpoint` (the bound origin).
    public func writeWebPushSubscriptions(credentials: EmulatorCredentials, endpoint: String) throws(EmulatorError) {
        try StateFiles.writeFile(webPushSubscriptionsPath, credentials.webPush.subscriptionsNDJSON(origin: endpoint))
    }

    /// `{"subscriptions":[{"id","private_key","auth"},…]}`, the keys base64url: the private
    /// key's raw 32-byte scalar, the 16-byte auth secret.
    static func subscriptionKeysJSON(_ subscriptions: [WebPushSubscription]) -> String {
        let lines = subscriptions.map { subscription in
            "  {\"id\":\(JSONText.quoted(subscription.id)),\"private_key\":\"\(Base64URL.encode(subscription.privateKey.rawRepresentation))\",\"auth\":\"\(Base64URL.encode(subscription.auth))\"}"
        }
        return "{\"subscriptions\":[\n" + lines.joined(separator: ",\n") + "\n]}\n"
    }

    static func parseSubscriptionKeys(_ text: String, path: String) throws(EmulatorError) -> [WebPushSubscription] {
        let hint = "(remove it to make new subscriptions)"
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: text, maxDepth: 8)
        } catch {
            throw .stateFile(path, "not a Web Push subscription keys file: \(error.description) \(hint)")
        }
        guard let list = document.root["subscriptions"], list.kind == .array, (1...maxSubscriptions).contains(list.count) else {
            throw .stateFile(path, "no subscriptions array of 1 to \(maxSubscriptions) entries \(hint)")
        }
        var subscriptions: [WebPushSubscription] = []
        subscriptions.reserveCapacity(list.count)
        var seen = Set<String>()
        for (index, entry) in list.elements.enumerated() {
            guard let id = entry["id"]?.stringValue, WebPushSubscription.isValidID(id), seen.insert(id).inserted,
                  let keyText = entry["private_key"]?.stringValue, let keyBytes = Base64URL.decode(Substring(keyText)),
                  let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: keyBytes),
                  let authText = entry["auth"]?.stringValue, let auth = Base64URL.decode(Substring(authText)), auth.count == 16
            else {
                throw .stateFile(path, "subscription \(index + 1) needs a unique URL-safe id, a base64url P-256 private_key and a 16-byte base64url auth \(hint)")
            }
            subscriptions.append(WebPushSubscription(id: id, privateKey: key, auth: auth))
        }
        return subscriptions
    }
}
