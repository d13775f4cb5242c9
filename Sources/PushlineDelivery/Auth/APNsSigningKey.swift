public import Crypto
import Foundation

/// An APNs token-auth key: the .p8 private key with its key id and the team id it belongs to.
/// Redacts itself: printing it shows the ids only.
public struct APNsSigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let keyID: String
    public let teamID: String
    /// The key's raw scalar, not the swift-crypto value: `P256.Signing.PrivateKey` is Sendable
    /// only from swift-crypto 4, and the key is rebuilt only once per token (50 minutes).
    let privateKeyScalar: [UInt8]

    /// A .p8 is about 250 bytes; anything past this is not one.
    static let fileLimit = 16 * 1024

    public init(privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) throws(APNsAuthError) {
        try Self.checkIdentifier(keyID, field: "key_id")
        try Self.checkIdentifier(teamID, field: "team_id")
        self.privateKeyScalar = Array(privateKey.rawRepresentation)
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Loads the key from a .p8 file (PKCS#8 PEM holding a P-256 key).
    public static func load(keyFile path: String, keyID: String, teamID: String) throws(APNsAuthError) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try CredentialFile.read(path, limit: fileLimit)
        } catch {
            throw .keyFile(path: path, problem: CredentialFile.describe(error))
        }
        return try Self(pem: bytes, path: path, keyID: keyID, teamID: teamID)
    }

    /// Parses PEM text; `path` names its origin in errors.
    public init(pem bytes: [UInt8], path: String, keyID: String, teamID: String) throws(APNsAuthError) {
        guard let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") else {
            throw .keyFile(path: path, problem: "does not hold a PEM key (-----BEGIN PRIVATE KEY-----)")
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: text)
        } catch {
            // swift-crypto's error is not quoted: it may describe the bytes it read.
            throw .keyNotP256(path: path)
        }
        try self.init(privateKey: key, keyID: keyID, teamID: teamID)
    }

    public var description: String { "APNsSigningKey(key_id: \(keyID), team_id: \(teamID), key: redacted)" }
    public var debugDescription: String { description }

    /// Apple's key and team ids are 10 uppercase letters and digits; any ASCII letters and
    /// digits up to 64 are taken (an emulator may use others), nothing that needs escaping in
    /// the JWT's JSON.
    static func checkIdentifier(_ value: String, field: String) throws(APNsAuthError) {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty else { throw .invalidIdentifier(field: field, problem: "is empty") }
        guard bytes.count <= 64 else { throw .invalidIdentifier(field: field, problem: "is longer than 64 characters") }
        guard bytes.allSatisfy({ isASCIIAlphanumeric($0) }) else {
            throw .invalidIdentifier(field: field, problem: "'\(PrintableText.bounded(value, limit: 64))' must be ASCII letters and digits (Apple's are 10 characters)")
        }
    }
}

func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
    default: false
    }
}
