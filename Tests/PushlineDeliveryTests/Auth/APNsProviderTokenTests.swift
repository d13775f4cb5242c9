import Crypto
import Foundation
import PushlineCore
import PushlineDelivery
import Testing

@Suite("APNs provider token")
struct APNsProviderTokenTests {
    let privateKey = P256.Signing.PrivateKey()

    func signingKey() throws -> APNsSigningKey {
        try APNsSigningKey(privateKey: privateKey, keyID: "KEY1234567", teamID: "ABCDE12345")
    }

    @Test("the JWT is ES256 over {alg, kid}.{iss, iat}, raw r||s, unpadded base64url, verified with the public key")
    func jwtVerifies() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("AuthKey_KEY1234567.p8", privateKey.pemRepresentation)
        let key = try APNsSigningKey.load(keyFile: path, keyID: "KEY1234567", teamID: "ABCDE12345")
        var state = APNsProviderTokenState(key: key)
        let token = try state.token(now: .seconds(10), unixTime: 1_700_000_123)

        #expect(token.authorizationHeaderValue.hasPrefix("bearer "))
        let jwt = try JWTParts(token.jwt)
        #expect(JWTParts.keys(jwt.header) == ["alg", "kid"])
        #expect(jwt.header["alg"]?.stringValue == "ES256")
        #expect(jwt.header["kid"]?.stringValue == "KEY1234567")
        #expect(JWTParts.keys(jwt.claims) == ["iat", "iss"])
        #expect(jwt.claims["iss"]?.stringValue == "ABCDE12345")
        #expect(jwt.claims["iat"]?.int64Value == 1_700_000_123)
        // Raw r||s: 64 bytes, not DER.
        #expect(jwt.signature.count == 64)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        #expect(privateKey.publicKey.isValidSignature(signature, for: jwt.signingInput))
        // Another key's public key does not verify it.
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: jwt.signingInput))
    }

    @Test("reused until 50 minutes old (49 min: same token), replaced at 50, with a new iat")
    func refreshTiming() throws {
        let clock = TestClock(unixTime: 1_700_000_000)
        let source = APNsProviderTokenSource(key: try signingKey(), clock: clock)
        let first = try source.token()
        #expect(first.generation == 1)
        #expect(first.issuedAtUnixTime == 1_700_000_000)

        clock.advance(seconds: 49 * 60)
        #expect(try source.token() == first)
        clock.advance(seconds: 59)
        #expect(try source.token() == first)

        clock.advance(seconds: 1)  // 50:00
        let second = try source.token()
        #expect(second.generation == 2)
        #expect(second.issuedAtUnixTime == 1_700_000_000 + 50 * 60)
        #expect(second.jwt != first.jwt)
        #expect(!second.isForcedRefresh)
    }

    @Test("ages are measured on the monotonic clock: a stepped wall clock neither hastens nor delays a refresh")
    func wallClockStep() throws {
        let clock = TestClock(unixTime: 1_700_000_000)
        let source = APNsProviderTokenSource(key: try signingKey(), clock: clock)
        let first = try source.token()
        clock.stepWallClock(by: 2 * 3600)
        #expect(try source.token() == first)
        clock.advance(seconds: 50 * 60)
        let second = try source.token()
        #expect(second.generation == 2)
        #expect(second.issuedAtUnixTime == 1_700_000_000 + 2 * 3600 + 50 * 60)
    }

    @Test("ExpiredProviderToken: a new token once; expired again within 20 minutes stops the provider")
    func expiredTwiceStops() throws {
        let clock = TestClock()
        let source = APNsProviderTokenSource(key: try signingKey(), clock: clock)
        let first = try source.token()
        clock.advance(seconds: 5 * 60)

        guard case .resend(let forced) = try source.providerTokenExpired(first) else {
            Issue.record("first ExpiredProviderToken must make a new token")
            return
        }
        #expect(forced.generation == 2)
        #expect(forced.isForcedRefresh)
        #expect(try source.token() == forced)

        // Many requests in flight with the first token report it too: they resend with the new
        // one, no third token.
        #expect(try source.providerTokenExpired(first) == .resend(with: forced))

        clock.advance(seconds: 19 * 60 + 59)
        guard case .stopProvider(let error) = try source.providerTokenExpired(forced) else {
            Issue.record("a forced token called expired within 20 minutes must stop the provider")
            return
        }
        #expect(error.stopsProvider)
        #expect(error.description.contains("ExpiredProviderToken"))
        #expect(error.description.contains("clock"))
        #expect(error.description.contains("KEY1234567"))
        // The token in use is unchanged: no third signature.
        #expect(try source.token() == forced)
    }

    @Test("a forced token that lasted 20 minutes is ordinary: expired again makes a new one")
    func forcedTokenAfterProbation() throws {
        let clock = TestClock()
        let source = APNsProviderTokenSource(key: try signingKey(), clock: clock)
        let first = try source.token()
        guard case .resend(let forced) = try source.providerTokenExpired(first) else {
            Issue.record("expected a resend")
            return
        }
        clock.advance(seconds: 20 * 60)
        guard case .resend(let third) = try source.providerTokenExpired(forced) else {
            Issue.record("expected a resend after 20 minutes")
            return
        }
        #expect(third.generation == 3)
        // The routine refresh counts from the newest token.
        clock.advance(seconds: 49 * 60)
        #expect(try source.token() == third)
    }

    @Test("key files: missing, a folder, not PEM, not P-256 (P-384, RSA), each error names the file and no key bytes")
    func keyFileErrors() throws {
        let folder = try TemporaryFolder()
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        let p384File = try folder.write("p384.p8", p384)
        let garbage = try folder.write("garbage.p8", "hello\u{0}\u{1}")
        let truncated = try folder.write("truncated.p8", String(privateKey.pemRepresentation.prefix(90)))
        let cases: [(String, String)] = [
            (folder.path + "/missing.p8", "no such file"),
            (folder.path, "is not a regular file"),
            (garbage, "does not hold a PEM key"),
            (p384File, "is not a PKCS#8 P-256 private key"),
            (truncated, "is not a PKCS#8 P-256 private key"),
        ]
        for (path, expected) in cases {
            do {
                _ = try APNsSigningKey.load(keyFile: path, keyID: "KEY1234567", teamID: "ABCDE12345")
                Issue.record("\(path) loaded")
            } catch {
                #expect(error.description.contains(path), "\(error)")
                #expect(error.description.contains(expected), "\(error)")
                for line in p384.split(separator: "\n") where !line.hasPrefix("-----") {
                    #expect(!error.description.contains(line))
                }
            }
        }
    }

    @Test(
        "an unreadable key file says so",
        .enabled(if: geteuid() != 0, "skipped: root reads a file whatever its permissions")
    )
    func unreadableKey() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("locked.p8", privateKey.pemRepresentation, permissions: 0o000)
        #expect(throws: APNsAuthError.self) { try APNsSigningKey.load(keyFile: path, keyID: "K", teamID: "T") }
    }

    @Test("key and team ids: ASCII letters and digits, 1…64")
    func identifiers() throws {
        for bad in ["", "KEY 123", "KEY\"1", "ÄBC", String(repeating: "A", count: 65)] {
            #expect(throws: APNsAuthError.self) {
                try APNsSigningKey(privateKey: privateKey, keyID: bad, teamID: "ABCDE12345")
            }
            #expect(throws: APNsAuthError.self) {
                try APNsSigningKey(privateKey: privateKey, keyID: "KEY1234567", teamID: bad)
            }
        }
        _ = try APNsSigningKey(privateKey: privateKey, keyID: String(repeating: "A", count: 64), teamID: "t1")
    }
}

@Suite("APNs provider token source, shared")
struct APNsProviderTokenSourceSharingTests {
    @Test("many tasks at the 50-minute mark get one new token between them")
    func oneRefreshForAll() async throws {
        let clock = TestClock()
        let key = try APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "ABCDE12345")
        let source = APNsProviderTokenSource(key: key, clock: clock)
        let first = try source.token()
        clock.advance(seconds: 50 * 60)
        let tokens = try await withThrowingTaskGroup(of: APNsProviderToken.self) { group in
            for _ in 0..<64 { group.addTask { try source.token() } }
            return try await group.reduce(into: [APNsProviderToken]()) { $0.append($1) }
        }
        #expect(Set(tokens.map(\.generation)) == [first.generation + 1])
        #expect(Set(tokens.map(\.authorizationHeaderValue)).count == 1)
    }
}
