import _CryptoExtras
import Foundation
import PushlineCore
import PushlineDelivery
import Testing

@Suite("FCM OAuth assertion")
struct FCMAssertionTests {
    @Test("RS256 (PKCS#1 v1.5, SHA-256) verified with the RSA public key; header kid, claims iss, scope, aud, iat, exp")
    func assertionVerifies() throws {
        let account = try FCMServiceAccount(json: Array(ServiceAccountFixture.json().utf8), path: "sa.json")
        let request = try FCMAssertion.tokenRequest(account: account, issuedAt: 1_700_000_000)
        #expect(request.url == "https://oauth2.googleapis.com/token")
        #expect(request.method == "POST")
        #expect(request.headers.contains { $0.name == "content-type" && $0.value == "application/x-www-form-urlencoded" })

        let body = String(decoding: request.body, as: UTF8.self)
        let prefix = "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion="
        #expect(body.hasPrefix(prefix))
        let jwt = try JWTParts(body.dropFirst(prefix.count))

        #expect(JWTParts.keys(jwt.header) == ["alg", "kid", "typ"])
        #expect(jwt.header["alg"]?.stringValue == "RS256")
        #expect(jwt.header["typ"]?.stringValue == "JWT")
        #expect(jwt.header["kid"]?.stringValue == "0123456789abcdef0123456789abcdef01234567")
        #expect(JWTParts.keys(jwt.claims) == ["aud", "exp", "iat", "iss", "scope"])
        #expect(jwt.claims["iss"]?.stringValue == "sender@pushline-demo.iam.gserviceaccount.com")
        #expect(jwt.claims["scope"]?.stringValue == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(jwt.claims["aud"]?.stringValue == "https://oauth2.googleapis.com/token")
        #expect(jwt.claims["iat"]?.int64Value == 1_700_000_000)
        #expect(jwt.claims["exp"]?.int64Value == 1_700_003_600)

        let publicKey = ServiceAccountFixture.key.publicKey
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        #expect(jwt.signature.count == 256)
        #expect(publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .insecurePKCS1v1_5))
        // Not PSS: the padding is the one Google requires.
        #expect(!publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .PSS))
        // A changed claim does not verify.
        var tampered = jwt.signingInput
        tampered[tampered.count - 1] ^= 1
        #expect(!publicKey.isValidSignature(signature, for: tampered, padding: .insecurePKCS1v1_5))
    }

    @Test("aud follows the file's token_uri (an emulator's)")
    func audienceIsTokenURI() throws {
        let json = ServiceAccountFixture.json(["token_uri": "http://127.0.0.1:8443/token"])
        let account = try FCMServiceAccount(json: Array(json.utf8), path: "sa.json")
        let request = try FCMAssertion.tokenRequest(account: account, issuedAt: 5)
        let body = String(decoding: request.body, as: UTF8.self)
        let jwt = try JWTParts(body.split(separator: "=").last!)
        #expect(jwt.claims["aud"]?.stringValue == "http://127.0.0.1:8443/token")
        #expect(request.url == "http://127.0.0.1:8443/token")
        #expect(!request.description.contains(jwt.segments[2]))
        #expect(request.description.contains("redacted"))
    }
}
