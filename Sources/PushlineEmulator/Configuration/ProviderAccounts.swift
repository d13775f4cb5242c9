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
