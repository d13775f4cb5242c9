import PushlineCore

/// The security profile an ADM sender authenticates with: its client id and secret, exchanged
/// at Login with Amazon's token endpoint (client credentials grant, scope `messaging:push`) for
/// an access token of an hour. Redacts itself: printing it shows the client id, never the secret.
public struct ADMClientCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public static let defaultTokenURI = "https://api.amazon.com/auth/O2/token"
    public static let scope = "messaging:push"
    /// Amazon's client ids and secrets are about 80 bytes; a file is read up to this much.
    static let secretFileLimit = 4096

    public let clientID: String
    let clientSecret: String
    public let tokenEndpoint: OAuthTokenEndpoint

    /// `clientSecret` is the secret itself (trimmed of surrounding whitespace); `secretSource`
    /// names where it came from in errors.
    public init(clientID: String, clientSecret: String, tokenURI: String = defaultTokenURI) throws(OAuthError) {
        guard !clientID.isEmpty, clientID.utf8.count <= 512 else {
            throw .admSetting("client_id", problem: "must be 1 to 512 bytes (the security profile's client id)")
        }
        guard clientID.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .admSetting("client_id", problem: "must be printable ASCII without spaces")
        }
        guard !clientSecret.isEmpty, clientSecret.utf8.count <= 512, clientSecret.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .admSetting("client_secret", problem: "must be 1 to 512 printable ASCII characters without spaces (the security profile's client secret)")
        }
        do {
            tokenEndpoint = try OAuthTokenEndpoint(tokenURI)
        } catch {
            throw .admSetting("token_uri", problem: error.problem)
        }
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    /// Reads the secret from `path` (a file holding it alone; surrounding whitespace and a final
    /// newline are ignored).
    public static func load(clientID: String, secretFile path: String, tokenURI: String = defaultTokenURI) throws(OAuthError) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try CredentialFile.read(path, limit: secretFileLimit)
        } catch {
            throw .clientSecretFile(path: path, problem: CredentialFile.describe(error))
        }
        let secret = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard !secret.isEmpty else { throw .clientSecretFile(path: path, problem: "is empty") }
        do {
            return try Self(clientID: clientID, clientSecret: secret, tokenURI: tokenURI)
        } catch {
            throw error
        }
    }

    public var description: String {
        "ADMClientCredentials(client_id: \(clientID), token_uri: \(tokenEndpoint.uri), client_secret: redacted)"
    }
    public var debugDescription: String { description }
}

extension ADMClientCredentials: OAuthGrant {
    public var service: OAuthService { .adm }
    public var clientName: String { clientID }

    /// `grant_type=client_credentials&scope=messaging%3Apush&client_id=…&client_secret=…`, every
    /// value form-encoded.
    public func tokenRequest(issuedAt: Int64) throws(OAuthError) -> OAuthTokenRequest {
        var body: [UInt8] = []
        for (index, (name, value)) in [("grant_type", "client_credentials"), ("scope", Self.scope), ("client_id", clientID), ("client_secret", clientSecret)].enumerated() {
            if index > 0 { body.append(UInt8(ascii: "&")) }
            body.append(contentsOf: name.utf8)
            body.append(UInt8(ascii: "="))
            FormEncoding.append(value, to: &body)
        }
        return OAuthTokenRequest(url: tokenEndpoint.uri, body: body)
    }
}

/// `application/x-www-form-urlencoded` values: unreserved bytes as they are, every other byte
/// `%XX` (upper-case hex), so a secret holding `&`, `=` or `+` reaches the server intact.
enum FormEncoding {
    static func append(_ value: String, to body: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in value.utf8 {
            if LaneRoutes.isPathSafe(byte) {
                body.append(byte)
            } else {
                body.append(UInt8(ascii: "%"))
                body.append(hex[Int(byte >> 4)])
                body.append(hex[Int(byte & 0x0F)])
            }
        }
    }
}
