import Crypto
import _CryptoExtras
import Foundation
import PushlineCore
import PushlineDelivery
import Testing

@Suite("FCM service account")
struct FCMServiceAccountTests {
    func parse(_ text: String) throws(OAuthError) -> FCMServiceAccount {
        try FCMServiceAccount(json: Array(text.utf8), path: "/keys/sa.json")
    }

    @Test("a Google key file parses; printing it shows no key")
    func parsesAndRedacts() throws {
        let account = try parse(ServiceAccountFixture.json())
        #expect(account.projectID == "pushline-demo")
        #expect(account.clientEmail == "sender@pushline-demo.iam.gserviceaccount.com")
        #expect(account.privateKeyID == "0123456789abcdef0123456789abcdef01234567")
        #expect(account.tokenEndpoint.uri == "https://oauth2.googleapis.com/token")
        #expect(account.tokenEndpoint.host == "oauth2.googleapis.com")
        for text in [account.description, account.debugDescription, "\(account)", String(reflecting: account)] {
            #expect(text.contains("redacted"))
            for line in ServiceAccountFixture.keyLines { #expect(!text.contains(line)) }
        }
    }

    @Test("the file is read from disk; a missing one is named")
    func loadsFile() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("sa.json", ServiceAccountFixture.json())
        #expect(try FCMServiceAccount.load(path: path).projectID == "pushline-demo")
        let missing = folder.path + "/nope.json"
        #expect {
            _ = try FCMServiceAccount.load(path: missing)
        } throws: { error in
            "\(error)".contains(missing) && "\(error)".contains("no such file")
        }
    }

    @Test("every field is checked; each error names the file and the field, never the key", arguments: [
        (["type": "authorized_user"] as [String: String?], "type"),
        (["type": nil], "type"),
        (["project_id": nil], "project_id"),
        (["project_id": ""], "project_id"),
        (["project_id": "My Project"], "project_id"),
        (["project_id": "a/../b"], "project_id"),
        (["private_key_id": nil], "private_key_id"),
        (["private_key_id": "abc\"def"], "private_key_id"),
        (["client_email": nil], "client_email"),
        (["client_email": "no-at-sign"], "client_email"),
        (["client_email": "a@b@c"], "client_email"),
        (["client_email": "a b@c"], "client_email"),
        (["token_uri": nil], "token_uri"),
        (["token_uri": "http://oauth2.googleapis.com/token"], "token_uri"),
        (["token_uri": "ftp://example.com/token"], "token_uri"),
        (["token_uri": "https://"], "token_uri"),
        (["token_uri": "https://user:pw@example.com/token"], "token_uri"),
        (["token_uri": "https://example.com:99999/token"], "token_uri"),
        (["token_uri": "https://example.com/to ken"], "token_uri"),
        (["token_uri": "https://example.com/token#x"], "token_uri"),
        (["token_uri": "http://127.0.0.1.evil.com/token"], "token_uri"),
        (["private_key": nil], "private_key"),
        (["private_key": "not a key"], "private_key"),
        (["private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"], "private_key"),
    ])
    func fieldErrors(changes: [String: String?], field: String) {
        #expect {
            _ = try parse(ServiceAccountFixture.json(changes))
        } throws: { error in
            let text = "\(error)"
            return text.contains("/keys/sa.json") && text.contains(field)
                && !ServiceAccountFixture.keyLines.contains { text.contains($0) }
        }
    }

    @Test("non-string fields, non-objects and invalid JSON are errors")
    func shapes() {
        for text in [
            ServiceAccountFixture.json(["project_id": "42"], raw: ["project_id"]),
            ServiceAccountFixture.json(["private_key": "{}"], raw: ["private_key"]),
            "[]", "", "{", "\u{FF}\u{FE}", String(repeating: "[", count: 10_000),
        ] {
            #expect(throws: OAuthError.self) { try parse(text) }
        }
    }

    @Test("the key may also be PKCS#1 (BEGIN RSA PRIVATE KEY)")
    func pkcs1() throws {
        #expect(ServiceAccountFixture.fields["private_key"]?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        let pkcs1 = ServiceAccountFixture.key.pemRepresentation
        #expect(pkcs1.hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        let account = try parse(ServiceAccountFixture.json(["private_key": pkcs1]))
        let request = try FCMAssertion.tokenRequest(account: account, issuedAt: 1)
        let jwt = try JWTParts(String(decoding: request.body, as: UTF8.self).components(separatedBy: "assertion=")[1])
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        #expect(ServiceAccountFixture.key.publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .insecurePKCS1v1_5))
    }

    @Test("a P-256 key or an RSA key under 2048 bits is not accepted as the private key")
    func wrongKeys() throws {
        let ec = P256Key.pem
        #expect(throws: OAuthError.self) { try parse(ServiceAccountFixture.json(["private_key": ec])) }
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).pemRepresentation
        #expect(throws: OAuthError.self) { try parse(ServiceAccountFixture.json(["private_key": small])) }
    }

    @Test("token_uri: https anywhere; http only to 127.0.0.1, localhost or [::1] (an emulator)", arguments: [
        ("https://oauth2.googleapis.com/token", true),
        ("HTTPS://example.com:8443/oauth/token?x=1", true),
        ("https://[2001:db8::1]:443/token", true),
        ("http://127.0.0.1:8443/token", true),
        ("http://localhost/token", true),
        ("http://[::1]:9000/token", true),
        ("http://10.0.0.1/token", false),
        ("http://localhost.example.com/token", false),
        ("https://[::1/token", false),
        ("https://:443/token", false),
        ("mailto:x@y", false),
    ])
    func tokenURIs(uri: String, accepted: Bool) {
        let result = Result { () throws(OAuthError) in try parse(ServiceAccountFixture.json(["token_uri": uri])) }
        switch result {
        case .success: #expect(accepted, "\(uri) was accepted")
        case .failure(let error): #expect(!accepted, "\(uri): \(error)")
        }
    }
}

enum P256Key {
    static let pem = P256.Signing.PrivateKey().pemRepresentation
}
