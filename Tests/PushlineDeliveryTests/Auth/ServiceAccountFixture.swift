import _CryptoExtras
import Foundation
import PushlineCore

/// A service account made for the tests: a 2048-bit RSA key generated once per process (never
/// committed) and the JSON key file Google would issue for it.
enum ServiceAccountFixture {
    static let key: _RSA.Signing.PrivateKey = {
        do { return try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch { fatalError("RSA key generation failed: \(error)") }
    }()

    static var fields: [String: String] {
        [
            "type": "service_account",
            "project_id": "pushline-demo",
            "private_key_id": "0123456789abcdef0123456789abcdef01234567",
            // PKCS#8 ("BEGIN PRIVATE KEY"), as Google issues it.
            "private_key": key.pkcs8PEMRepresentation,
            "client_email": "sender@pushline-demo.iam.gserviceaccount.com",
            "client_id": "123456789",
            "token_uri": "https://oauth2.googleapis.com/token",
        ]
    }

    /// The JSON text of `fields` with `changes` applied (nil removes a field); values are
    /// JSON text when `raw`.
    static func json(_ changes: [String: String?] = [:], raw: Set<String> = []) -> String {
        var members = fields.mapValues { Optional($0) }
        for (key, value) in changes { members[key] = value }
        let parts = members.keys.sorted().compactMap { key -> String? in
            guard let value = members[key] ?? nil else { return nil }
            return "\"\(key)\":" + (raw.contains(key) ? value : quoted(value))
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.writeString(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The lines of the PEM bodies (PKCS#8 and PKCS#1): none may appear in any error or description.
    static var keyLines: [Substring] {
        (key.pkcs8PEMRepresentation + key.pemRepresentation).split(separator: "\n").filter { !$0.hasPrefix("-----") }
    }
}
