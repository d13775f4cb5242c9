import Crypto
import Foundation
import PushlineCore
import PushlineDelivery
import PushlineTestSupport
import Testing

@Suite("VAPID (RFC 8292)")
struct VAPIDTests {
    let privateKey = P256.Signing.PrivateKey()

    @Test("vapid t=<ES256 JWT over {typ, alg}.{aud, exp, sub}>, k=<the public key>; verified with the public key")
    func tokenVerifies() throws {
        let clock = TestClock(unixTime: 1_800_000_000)
        let key = try VAPIDKey(privateKey: privateKey, subject: "mailto:ops@example.com")
        let source = VAPIDTokenSource(key: key, audience: "https://fcm.googleapis.com", clock: clock)
        let token = try source.token()
        let value = token.authorizationHeaderValue
        #expect(value.hasPrefix("vapid t="))
        let parts = value.dropFirst("vapid t=".count).components(separatedBy: ", k=")
        #expect(parts.count == 2)
        #expect(parts[1] == WebPushCheck.base64url(privateKey.publicKey.x963Representation))
        let jwt = try JWTParts(parts[0])
        #expect(JWTParts.keys(jwt.header) == ["alg", "typ"])
        #expect(jwt.header["alg"]?.stringValue == "ES256")
        #expect(JWTParts.keys(jwt.claims) == ["aud", "exp", "sub"])
        #expect(jwt.claims["aud"]?.stringValue == "https://fcm.googleapis.com")
        #expect(jwt.claims["exp"]?.int64Value == Int64(1_800_043_200))
        #expect(jwt.claims["sub"]?.stringValue == "mailto:ops@example.com")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        #expect(privateKey.publicKey.isValidSignature(signature, for: jwt.signingInput))
        #expect(!token.description.contains(parts[0]), "the token redacts itself")
    }

    @Test("an independent verifier (Python cryptography) accepts the token for its audience",
          .enabled(if: WebPushCheck.isAvailable, "needs /usr/bin/python3 with the cryptography package (apt install python3-cryptography)"))
    func independentVerification() throws {
        let clock = TestClock(unixTime: 1_800_000_000)
        let key = try VAPIDKey(privateKey: privateKey, subject: "https://example.com/contact")
        let token = try VAPIDTokenSource(key: key, audience: "https://updates.push.services.mozilla.com", clock: clock).token()
        let result = try WebPushCheck.run(["verify-vapid", token.authorizationHeaderValue, "https://updates.push.services.mozilla.com", "1800000000"])
        #expect(result.status == 0, "\(result.stderr)")
        let other = try WebPushCheck.run(["verify-vapid", token.authorizationHeaderValue, "https://web.push.apple.com", "1800000000"])
        #expect(other.status == 1, "another audience is refused")
    }

    @Test("one token per origin for an hour, then a new one; each origin its own aud")
    func refreshAndAudience() throws {
        let clock = TestClock(unixTime: 1_800_000_000)
        let key = try VAPIDKey(privateKey: privateKey, subject: "mailto:ops@example.com")
        let source = VAPIDTokenSource(key: key, audience: "https://a.example", clock: clock)
        let first = try source.token()
        clock.advance(seconds: 3599)
        #expect(try source.token() == first)
        clock.advance(seconds: 1)
        let second = try source.token()
        #expect(second != first)
        #expect(second.expiresAtUnixTime == 1_800_000_000 + 3600 + 12 * 3600)
        let elsewhere = try VAPIDTokenSource(key: key, audience: "https://b.example", clock: clock).token()
        #expect(try JWTParts(Self.jwt(elsewhere)).claims["aud"]?.stringValue == "https://b.example")
    }

    static func jwt(_ token: VAPIDToken) -> String {
        String(token.authorizationHeaderValue.dropFirst("vapid t=".count).prefix { $0 != "," })
    }

    @Test("the key file: SEC1 PEM, PKCS#8 PEM or base64url scalar; anything else is a clear error naming the file")
    func keyFiles() throws {
        let folder = try TemporaryFolder()
        let pkcs8 = try folder.write("pkcs8.pem", privateKey.pemRepresentation)
        let raw = try folder.write("raw.txt", WebPushCheck.base64url(privateKey.rawRepresentation) + "\n")
        let publicText = WebPushCheck.base64url(privateKey.publicKey.x963Representation)
        #expect(try VAPIDKey.load(file: pkcs8, subject: "mailto:a@b.c").publicKeyText == publicText)
        #expect(try VAPIDKey.load(file: raw, subject: "mailto:a@b.c").publicKeyText == publicText)
        // openssl's SEC1 form (`ecparam -genkey`).
        let sec1Path = folder.path + "/sec1.pem"
        let openssl = ChildProcess()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", sec1Path]
        try openssl.run()
        openssl.waitUntilExit()
        if openssl.terminationStatus == 0 {
            let loaded = try VAPIDKey.load(file: sec1Path, subject: "mailto:a@b.c")
            #expect(loaded.publicKeyText.count == 87)
        }
        let notAKey = try folder.write("junk.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        #expect(throws: VAPIDError.self) { try VAPIDKey.load(file: notAKey, subject: "mailto:a@b.c") }
        do {
            _ = try VAPIDKey.load(file: folder.path + "/missing.pem", subject: "mailto:a@b.c")
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.description.contains("missing.pem"))
            #expect(error.description.contains("no such file"))
        }
        let loaded = try VAPIDKey.load(file: pkcs8, subject: "mailto:a@b.c")
        #expect(!String(describing: loaded).contains(WebPushCheck.base64url(privateKey.rawRepresentation)))
    }

    @Test("the subject is a mailto: or https: URI that needs no escaping in the JWT")
    func subjects() {
        #expect(VAPIDKey.subjectProblem("mailto:ops@example.com") == nil)
        #expect(VAPIDKey.subjectProblem("https://example.com/push-contact") == nil)
        #expect(VAPIDKey.subjectProblem("ops@example.com") != nil)
        #expect(VAPIDKey.subjectProblem("mailto:a\"b@example.com") != nil)
        #expect(VAPIDKey.subjectProblem("mailto:a b@example.com") != nil)
        #expect(VAPIDKey.subjectProblem("mailto:" + String(repeating: "a", count: 300)) != nil)
    }
}
