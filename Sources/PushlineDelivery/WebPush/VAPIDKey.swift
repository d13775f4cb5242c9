import PushlineCore
public import Crypto

/// The application server's VAPID key pair (RFC 8292) and its contact (`sub`): what Web Push
/// requests are signed with. Subscriptions are bound to the public key the site used when
/// subscribing, so it must be that key. Redacts itself: printing it shows the public key only.
public struct VAPIDKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The private scalar (`P256.Signing.PrivateKey` is Sendable only from swift-crypto 4).
    let privateKeyScalar: [UInt8]
    /// The uncompressed public point, base64url: the `k=` of every `Authorization` header.
    public let publicKeyText: String
    /// `mailto:…` or `https:…`: who the push service can contact about this sender.
    public let subject: String

    /// A PEM key is about 250 bytes; anything past this is not one.
    static let fileLimit = 16 * 1024

    public init(privateKey: P256.Signing.PrivateKey, subject: String) throws(VAPIDError) {
        try Self.checkSubject(subject)
        privateKeyScalar = Array(privateKey.rawRepresentation)
        publicKeyText = String(decoding: Base64URL.encode(privateKey.publicKey.x963Representation), as: UTF8.self)
        self.subject = subject
    }

    /// Loads the private key from `path`: a PEM file (`-----BEGIN EC PRIVATE KEY-----` as
    /// `openssl ecparam -name prime256v1 -genkey` writes it, or PKCS#8 `-----BEGIN PRIVATE
    /// KEY-----`), or a file holding the 32-byte scalar in base64url (what `web-push
    /// generate-vapid-keys` prints as the private key).
    public static func load(file path: String, subject: String) throws(VAPIDError) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try CredentialFile.read(path, limit: fileLimit)
        } catch {
            throw .keyFile(path: path, problem: CredentialFile.describe(error))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .keyFile(path: path, problem: "is not text (a PEM file or a base64url key)")
        }
        let trimmed = text.trimmingWhitespace()
        let key: P256.Signing.PrivateKey
        if trimmed.hasPrefix("-----BEGIN") {
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: trimmed)
            } catch {
                // swift-crypto's error is not quoted: it may describe the bytes it read.
                throw .keyFile(path: path, problem: "is not a P-256 private key in PEM form")
            }
        } else {
            var raw = Array(trimmed.utf8)
            while raw.last == UInt8(ascii: "=") { raw.removeLast() }
            guard let scalar = Base64URL.decode(raw), scalar.count == 32,
                  let parsed = try? P256.Signing.PrivateKey(rawRepresentation: scalar)
            else {
                throw .keyFile(path: path, problem: "holds neither a PEM key nor a 32-byte P-256 private key in base64url")
            }
            key = parsed
        }
        return try Self(privateKey: key, subject: subject)
    }

    /// RFC 8292 §2.1: a `mailto:` or `https:` URI. It lands in the JWT's JSON as it is, so
    /// nothing that would need escaping is taken.
    /// Why `subject` cannot be a VAPID subject, or nil.
    public static func subjectProblem(_ subject: String) -> String? {
        do {
            try checkSubject(subject)
            return nil
        } catch {
            return error.description
        }
    }

    static func checkSubject(_ subject: String) throws(VAPIDError) {
        let bytes = Array(subject.utf8)
        let lower = subject.lowercased()
        guard lower.hasPrefix("mailto:") || lower.hasPrefix("https:") else {
            throw .subject("'\(PrintableText.bounded(subject, limit: 100, redactingTokens: false))' must be a mailto: or https: URI (RFC 8292)")
        }
        guard bytes.count <= 256, bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw .subject("must be at most 256 printable ASCII characters without spaces, quotes or backslashes")
        }
    }

    public var description: String { "VAPIDKey(public: \(publicKeyText), subject: \(subject), private: redacted)" }
    public var debugDescription: String { description }
}

/// Why VAPID signing cannot be set up. Names the file, never key bytes.
public struct VAPIDError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case keyFile(path: String, problem: String)
        case subject(String)
        case signingFailed
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func keyFile(path: String, problem: String) -> Self { .init(.keyFile(path: path, problem: problem)) }
    static func subject(_ problem: String) -> Self { .init(.subject(problem)) }
    static var signingFailed: Self { .init(.signingFailed) }

    public var description: String {
        switch kind {
        case .keyFile(let path, let problem): "VAPID key file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(problem)"
        case .subject(let problem): "VAPID subject \(problem)"
        case .signingFailed: "a VAPID token could not be signed"
        }
    }
}
