import _CryptoExtras
import PushlineCore

/// A Google service account as its JSON key file describes it, every field checked. Redacts
/// itself: printing it shows the project, the email and the key id, never the key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let projectID: String
    public let privateKeyID: String
    public let clientEmail: String
    public let tokenEndpoint: OAuthTokenEndpoint
    let privateKey: _RSA.Signing.PrivateKey

    /// A service-account file is about 2.3 KB.
    static let fileLimit = 64 * 1024

    public static func load(path: String) throws(OAuthError) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try CredentialFile.read(path, limit: fileLimit)
        } catch {
            throw .serviceAccountFile(path: path, problem: CredentialFile.describe(error))
        }
        return try Self(json: bytes, path: path)
    }

    /// Parses the file's bytes; `path` names it in errors.
    public init(json bytes: [UInt8], path: String) throws(OAuthError) {
        let root: JSONValue
        do {
            root = try JSONDocument(bytes: bytes, maxDepth: 16).root
        } catch {
            throw .serviceAccountFile(path: path, problem: "is not valid JSON (\(error.description))")
        }
        guard root.kind == .object else {
            throw .serviceAccountFile(path: path, problem: "is not a JSON object")
        }
        func field(_ name: String) throws(OAuthError) -> String {
            guard let value = root[name] else {
                throw .serviceAccountField(path: path, field: name, problem: "is missing")
            }
            guard let string = value.stringValue else {
                throw .serviceAccountField(path: path, field: name, problem: "must be a string")
            }
            guard !string.isEmpty else {
                throw .serviceAccountField(path: path, field: name, problem: "is empty")
            }
            return string
        }

        let type = try field("type")
        guard type == "service_account" else {
            throw .serviceAccountField(
                path: path, field: "type",
                problem: "is '\(PrintableText.bounded(type, limit: 64))', expected 'service_account' (a key file of a service account, from the Firebase console or IAM)")
        }

        let projectID = try field("project_id")
        try Self.check(projectID, path: path, field: "project_id", limit: 128,
                       rule: "lowercase letters, digits, '-', '.' and ':' (it goes into the request path)",
                       allowed: { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") })

        let privateKeyID = try field("private_key_id")
        try Self.check(privateKeyID, path: path, field: "private_key_id", limit: 128,
                       rule: "ASCII letters, digits, '-' and '_'",
                       allowed: { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })

        let clientEmail = try field("client_email")
        try Self.check(clientEmail, path: path, field: "client_email", limit: 320,
                       rule: "an email address of printable ASCII without spaces or quotes",
                       allowed: { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        guard clientEmail.utf8.filter({ $0 == UInt8(ascii: "@") }).count == 1,
              clientEmail.utf8.first != UInt8(ascii: "@"), clientEmail.utf8.last != UInt8(ascii: "@")
        else {
            throw .serviceAccountField(path: path, field: "client_email", problem: "is not an email address (name@domain)")
        }

        let tokenURI = try field("token_uri")
        let endpoint: OAuthTokenEndpoint
        do {
            endpoint = try OAuthTokenEndpoint(tokenURI)
        } catch {
            throw .serviceAccountField(path: path, field: "token_uri", problem: error.problem)
        }

        let pem = try field("private_key")
        let key: _RSA.Signing.PrivateKey
        guard pem.utf8.count <= 16 * 1024, pem.contains("-----BEGIN") else {
            throw .serviceAccountField(path: path, field: "private_key", problem: "is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        do {
            // The PEM initializer refuses keys under 2048 bits, as Google issues none.
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // swift-crypto's error is not quoted: it may describe the bytes it read.
            throw .serviceAccountField(path: path, field: "private_key", problem: "is not an RSA private key of at least 2048 bits in PEM form")
        }

        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.clientEmail = clientEmail
        self.tokenEndpoint = endpoint
        self.privateKey = key
    }

    public var description: String {
        "FCMServiceAccount(project_id: \(projectID), client_email: \(clientEmail), private_key_id: \(privateKeyID), private_key: redacted)"
    }
    public var debugDescription: String { description }

    private static func check(
        _ value: String, path: String, field: String, limit: Int, rule: String, allowed: (UInt8) -> Bool
    ) throws(OAuthError) {
        guard value.utf8.count <= limit else {
            throw .serviceAccountField(path: path, field: field, problem: "is longer than \(limit) bytes")
        }
        guard value.utf8.allSatisfy(allowed) else {
            throw .serviceAccountField(path: path, field: field, problem: "'\(PrintableText.bounded(value, limit: 64))' must be \(rule)")
        }
    }
}

func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
    default: false
    }
}
