public import Foundation
import Crypto
import _CryptoExtras
import PushlineCore

/// The folder `pushline-emulator` keeps its keys and certificate in, so that `--print-config`
/// and a later serving run (or a restart) agree on the key files and the CA file.
///
/// Files: `emulator-ca.pem` (the certificate: `ca_file`), `emulator-tls-key.pem`,
/// `apns-auth-key.p8`, `fcm-service-account.json`, `vapid-private-key.pem`,
/// `webpush-subscription-keys.json`, `webpush-subscriptions.ndjson`, `adm-client-secret.txt`,
/// `webhook-secret.txt`, `providers.yaml`; all written with mode 0600.
public struct EmulatorStateDirectory: Sendable {
    public let path: String

    public init(path: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        self.path = URL(fileURLWithPath: absolute).standardizedFileURL.path
    }

    public var caFilePath: String { path + "/emulator-ca.pem" }
    public var tlsKeyPath: String { path + "/emulator-tls-key.pem" }
    public var apnsKeyPath: String { path + "/apns-auth-key.p8" }
    public var serviceAccountPath: String { path + "/fcm-service-account.json" }

    /// A certificate is made anew when the one on disk expires within this.
    public static let certificateRenewalMargin: TimeInterval = 3_600

    /// Reads the keys and certificate, making and writing whatever is missing or expiring; writes
    /// the service-account file and the Web Push subscriptions anew so that they name `endpoint`.
    public func prepare(
        teamID: String, topic: String, projectID: String, endpoint: String,
        certificateValidity: TimeInterval = TLSIdentity.defaultValidity, now: Date = Date()
    ) throws(EmulatorError) -> (credentials: EmulatorCredentials, tls: TLSIdentity) {
        try StateFiles.makeDirectory(path)
        let apnsKey: P256.Signing.PrivateKey
        if let text = try StateFiles.read(apnsKeyPath) {
            do {
                apnsKey = try P256.Signing.PrivateKey(pemRepresentation: text)
            } catch {
                throw .stateFile(apnsKeyPath, "not a PEM P-256 private key (remove it to make a new one)")
            }
        } else {
            apnsKey = P256.Signing.PrivateKey()
            try StateFiles.writeFile(apnsKeyPath, apnsKey.pemRepresentation)
        }
        let rsaKey: _RSA.Signing.PrivateKey
        if let text = try StateFiles.read(serviceAccountPath) {
            rsaKey = try Self.serviceAccountKey(text, path: serviceAccountPath)
        } else {
            do {
                rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            } catch {
                throw .startFailed("could not make an RSA key")
            }
        }
        let webPush = try prepareWebPush()
        let admClientSecret = try prepareADMClientSecret()
        let webhookKey = try prepareWebhookKey()
        let credentials = EmulatorCredentials(
            teamID: teamID, topic: topic, projectID: projectID, apnsPrivateKey: apnsKey, fcmPrivateKey: rsaKey, webPush: webPush,
            admClientSecret: admClientSecret, webhookKey: webhookKey
        )
        try StateFiles.writeFile(serviceAccountPath, credentials.serviceAccountJSON(tokenURI: endpoint + "/token"))
        try writeWebPushSubscriptions(credentials: credentials, endpoint: endpoint)

        var tls: TLSIdentity?
        if let certificate = try StateFiles.read(caFilePath), let key = try StateFiles.read(tlsKeyPath) {
            // A broken or expiring pair is replaced rather than refused: it holds nothing anyone
            // else depends on until it is printed again.
            if let existing = try? TLSIdentity(certificatePEM: certificate, privateKeyPEM: key),
               existing.notValidAfter.timeIntervalSince(now) > Self.certificateRenewalMargin {
                tls = existing
            }
        }
        if tls == nil {
            let fresh = try TLSIdentity.generate(validity: certificateValidity, now: now)
            try StateFiles.writeFile(tlsKeyPath, fresh.privateKeyPEM)
            try StateFiles.writeFile(caFilePath, fresh.certificatePEM)
            tls = fresh
        }
        guard let tls else { throw .startFailed("no certificate") }
        return (credentials, tls)
    }

    /// Writes the service-account file again with `token_uri` at `endpoint` (after binding an
    /// ephemeral port).
    public func rewriteServiceAccount(credentials: EmulatorCredentials, endpoint: String) throws(EmulatorError) {
        try StateFiles.writeFile(serviceAccountPath, credentials.serviceAccountJSON(tokenURI: endpoint + "/token"))
    }

    /// `providers.yaml` in the folder: the block of `providersYAML`, written on every start with the
    /// bound endpoint, for `pushline run PIPELINE --providers <state-dir>/providers.yaml`.
    public var providersFilePath: String { path + "/providers.yaml" }

    public func writeProvidersFile(credentials: EmulatorCredentials, endpoint: String) throws(EmulatorError) {
        try StateFiles.writeFile(providersFilePath, providersYAML(credentials: credentials, endpoint: endpoint))
    }

    /// The `providers:` block of a pipeline file that sends to an emulator at `endpoint` with
    /// these credentials (values quoted, so any path is safe YAML).
    public func providersYAML(credentials: EmulatorCredentials, endpoint: String) -> String {
        let q = JSONText.quoted
        return """
        providers:
          apns: { team_id: \(q(credentials.teamID)), key_id: \(q(credentials.keyID)), key_file: \(q(apnsKeyPath)), topic: \(q(credentials.topic)), endpoint: \(q(endpoint)), ca_file: \(q(caFilePath)) }
          fcm: { service_account: \(q(serviceAccountPath)), endpoint: \(q(endpoint)), ca_file: \(q(caFilePath)) }
          webpush: { vapid_private_key: \(q(vapidKeyPath)), subject: \(q(WebPushCredentials.subject)), ca_file: \(q(caFilePath)), allow_private_endpoints: true }
          adm: { client_id: \(q(EmulatorCredentials.admClientID)), client_secret_file: \(q(admClientSecretPath)), token_uri: \(q(endpoint + ADMTokenEndpoint.path)), endpoint: \(q(endpoint)), ca_file: \(q(caFilePath)) }
          sms: { url: \(q(endpoint + WebhookEndpoint.pathPrefix + "sms")), secret_file: \(q(webhookSecretPath)), ca_file: \(q(caFilePath)) }
          email: { url: \(q(endpoint + WebhookEndpoint.pathPrefix + "email")), secret_file: \(q(webhookSecretPath)), ca_file: \(q(caFilePath)) }

        """
    }

    static func serviceAccountKey(_ text: String, path: String) throws(EmulatorError) -> _RSA.Signing.PrivateKey {
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: text)
        } catch {
            throw .stateFile(path, "not a service-account JSON file: \(error.description)")
        }
        guard let pem = document.root["private_key"]?.stringValue else {
            throw .stateFile(path, "no private_key string (remove it to make a new one)")
        }
        do {
            return try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .stateFile(path, "private_key is not a PEM RSA key of at least 2048 bits (remove the file to make a new one)")
        }
    }
}
