public import Crypto
public import _CryptoExtras
import Foundation

/// Fresh provider credentials for an emulator run: an APNs .p8 key (P-256), an FCM service
/// account (2048-bit RSA), a VAPID key with Web Push subscriptions, an ADM client secret and a
/// webhook signing secret. The emulator gets the public halves or the shared secrets
/// (`apnsAccount`, `fcmAccount`, `webPushAccount`, `admAccount`, `webhookAccount`); a sender gets
/// the files (`apnsKeyPEM`, `serviceAccountJSON(tokenURI:)`, `webPush.vapidPrivateKeyPEM`,
/// `webPush.subscriptionsNDJSON(origin:)`, `admClientSecret`, `webhookSecret`).
///
/// `description` never shows key material.
public struct EmulatorCredentials: Sendable, CustomStringConvertible {
    public let teamID: String
    public let topic: String
    public let projectID: String
    public let apnsPrivateKey: P256.Signing.PrivateKey
    public let fcmPrivateKey: _RSA.Signing.PrivateKey
    public let webPush: WebPushCredentials
    /// 64 lower-case hex digits: what `client_secret` must be at `/auth/O2/token`.
    public let admClientSecret: String
    /// The HMAC key webhook signatures are made with (`webhookSecret` is its text).
    public let webhookKey: [UInt8]

    public static let defaultTeamID = "PUSHLINE01"
    /// Amazon's client ids look like this; one fixed id, since only the secret is secret.
    public static let admClientID = "amzn1.application-oa2-client.pushline-emulator"
    public static let defaultTopic = "com.example.pushline"
    public static let defaultProjectID = "pushline-demo"

    /// Without `webPush`, a new VAPID key and subscriptions are made; without `admClientSecret`
    /// or `webhookKey`, new random ones.
    public init(
        teamID: String, topic: String, projectID: String, apnsPrivateKey: P256.Signing.PrivateKey, fcmPrivateKey: _RSA.Signing.PrivateKey,
        webPush: WebPushCredentials? = nil, admClientSecret: String? = nil, webhookKey: [UInt8]? = nil
    ) {
        self.teamID = teamID
        self.topic = topic
        self.projectID = projectID
        self.apnsPrivateKey = apnsPrivateKey
        self.fcmPrivateKey = fcmPrivateKey
        self.webPush = webPush ?? .generate()
        self.admClientSecret = admClientSecret ?? Self.hex((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        self.webhookKey = webhookKey ?? WebhookSecret.generateKey()
    }

    /// New keys (the RSA key takes a moment).
    public static func generate(teamID: String = defaultTeamID, topic: String = defaultTopic, projectID: String = defaultProjectID) throws(EmulatorError) -> EmulatorCredentials {
        let rsa: _RSA.Signing.PrivateKey
        do {
            rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            throw .startFailed("could not make an RSA key")
        }
        return EmulatorCredentials(teamID: teamID, topic: topic, projectID: projectID, apnsPrivateKey: P256.Signing.PrivateKey(), fcmPrivateKey: rsa)
    }

    /// Ten upper-case hex characters derived from the public key, the shape of Apple's key ids;
    /// stable for a key, so a state folder keeps its key id.
    public var keyID: String {
        String(Self.hex(SHA256.hash(data: apnsPrivateKey.publicKey.derRepresentation)).prefix(10)).uppercased()
    }

    /// Forty hex characters derived from the public key, the shape of Google's private_key_id.
    public var privateKeyID: String {
        String(Self.hex(SHA256.hash(data: fcmPrivateKey.publicKey.derRepresentation)).prefix(40))
    }

    public var clientEmail: String { "pushline-emulator@\(projectID).iam.gserviceaccount.com" }

    public var apnsAccount: APNsAccount {
        APNsAccount(teamID: teamID, keyID: keyID, publicKey: apnsPrivateKey.publicKey, topic: topic)
    }

    public var fcmAccount: FCMAccount {
        FCMAccount(projectID: projectID, clientEmail: clientEmail, privateKeyID: privateKeyID, publicKey: fcmPrivateKey.publicKey)
    }

    public var webPushAccount: WebPushAccount { webPush.account }

    public var admAccount: ADMAccount {
        ADMAccount(clientID: Self.admClientID, clientSecret: admClientSecret)
    }

    public var webhookAccount: WebhookAccount { WebhookAccount(key: webhookKey) }

    /// `whsec_<base64 of the key>`: what a webhook sender's `secret_file` holds.
    public var webhookSecret: String { WebhookSecret.text(webhookKey) }

    /// The .p8 file's text: PKCS#8 PEM, as Apple delivers it.
    public var apnsKeyPEM: String { apnsPrivateKey.pemRepresentation }

    /// A Google service-account JSON file whose `token_uri` points at `tokenURI` (the emulator's
    /// `/token`).
    public func serviceAccountJSON(tokenURI: String) -> String {
        let fields: [(String, String)] = [
            ("type", "service_account"),
            ("project_id", projectID),
            ("private_key_id", privateKeyID),
            ("private_key", fcmPrivateKey.pkcs8PEMRepresentation),
            ("client_email", clientEmail),
            ("client_id", "100000000000000000000"),
            ("auth_uri", "https://127.0.0.1/o/oauth2/auth"),
            ("token_uri", tokenURI),
        ]
        return "{\n" + fields.map { "  \(JSONText.quoted($0.0)): \(JSONText.quoted($0.1))" }.joined(separator: ",\n") + "\n}\n"
    }

    public var description: String {
        "EmulatorCredentials(team \(teamID), key \(keyID), topic \(topic), project \(projectID), keys redacted)"
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
