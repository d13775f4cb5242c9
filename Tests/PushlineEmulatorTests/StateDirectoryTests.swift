import Crypto
import Foundation
import PushlineEmulator
import Testing
import _CryptoExtras

@Suite("State folder, keys, certificate and printed configuration")
struct StateDirectoryTests {
    static func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-emulator-state-\(UUID().uuidString)").path
        return path
    }

    @Test("prepare writes the keys 0600, reuses them on the next run, and prints a providers block naming them")
    func prepareAndReuse() throws {
        let path = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let first = try directory.prepare(teamID: "TEAM123456", topic: "com.example.app", projectID: "demo-project", endpoint: "https://127.0.0.1:8443")
        let second = try directory.prepare(teamID: "TEAM123456", topic: "com.example.app", projectID: "demo-project", endpoint: "https://127.0.0.1:8443")
        #expect(first.credentials.keyID == second.credentials.keyID)
        #expect(first.credentials.privateKeyID == second.credentials.privateKeyID)
        #expect(first.tls.certificatePEM == second.tls.certificatePEM)
        #expect(first.credentials.keyID.count == 10)

        for file in [directory.apnsKeyPath, directory.serviceAccountPath, directory.tlsKeyPath] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        // The .p8 is PKCS#8 PEM; the service account is Google's JSON shape with its token_uri here.
        let p8 = try String(contentsOfFile: directory.apnsKeyPath, encoding: .utf8)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.serviceAccountPath))) as? [String: String])
        #expect(account["type"] == "service_account")
        #expect(account["project_id"] == "demo-project")
        #expect(account["token_uri"] == "https://127.0.0.1:8443/token")
        #expect(account["client_email"] == first.credentials.clientEmail)
        #expect(account["private_key_id"] == first.credentials.privateKeyID)
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: try #require(account["private_key"]))
        #expect(key.publicKey.derRepresentation == first.credentials.fcmAccount.publicKey.derRepresentation)
        #expect(key.keySizeInBits == 2048)

        let yaml = directory.providersYAML(credentials: first.credentials, endpoint: "https://127.0.0.1:8443")
        #expect(yaml.hasPrefix("providers:\n  apns: { team_id: \"TEAM123456\", key_id: \"\(first.credentials.keyID)\", key_file: \"\(directory.apnsKeyPath)\", topic: \"com.example.app\", endpoint: \"https://127.0.0.1:8443\", ca_file: \"\(directory.caFilePath)\" }\n"))
        #expect(yaml.contains("  fcm: { service_account: \"\(directory.serviceAccountPath)\", endpoint: \"https://127.0.0.1:8443\", ca_file: \"\(directory.caFilePath)\" }\n"))
        #expect(!yaml.contains("PRIVATE KEY"))
    }

    @Test("a corrupt key file is an error naming the file, not a crash or a silent new key")
    func corruptKey() throws {
        let path = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        try "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n".write(toFile: directory.apnsKeyPath, atomically: true, encoding: .utf8)
        do {
            _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
            Issue.record("a corrupt key was accepted")
        } catch {
            #expect(error.description.hasPrefix(directory.apnsKeyPath + ": "))
        }
        try "{\"private_key\": 42}".write(toFile: directory.serviceAccountPath, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: directory.apnsKeyPath)
        do {
            _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
            Issue.record("a corrupt service account was accepted")
        } catch {
            #expect(error.description.hasPrefix(directory.serviceAccountPath + ": "))
        }
    }

    @Test("a state folder under a file is an error naming the file")
    func folderUnderAFile() throws {
        let path = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "x".write(toFile: path, atomically: true, encoding: .utf8)
        let directory = EmulatorStateDirectory(path: path + "/state")
        do {
            _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
            Issue.record("a folder under a file was accepted")
        } catch {
            #expect(error.description == "\(path): exists and is not a folder")
        }
    }

    @Test("descriptions of credentials and TLS identities never show key material")
    func redaction() throws {
        let credentials = FixtureCredentials.shared
        let tls = EmulatorFixture.sharedTLS
        for text in [credentials.description, "\(credentials)", tls.description, "\(tls)"] {
            #expect(!text.contains("PRIVATE KEY"))
            #expect(!text.contains(String(credentials.apnsKeyPEM.split(separator: "\n")[1].prefix(20))))
        }
    }

    @Test("keys the emulator wrote sign what it accepts: the .p8 for APNs, the service account for OAuth")
    func writtenKeysWork() async throws {
        let path = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let (credentials, tls) = try directory.prepare(teamID: "TEAM123456", topic: "com.example.app", projectID: "demo", endpoint: "https://127.0.0.1:1")
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.apns = credentials.apnsAccount
        configuration.fcm = credentials.fcmAccount
        let emulator = try await ProviderEmulator.start(configuration)
        try directory.rewriteServiceAccount(credentials: credentials, endpoint: emulator.endpoint)
        let p8 = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: directory.apnsKeyPath, encoding: .utf8))
        let jwt = TestJWT.apnsProviderToken(key: p8, keyID: credentials.keyID, teamID: "TEAM123456", issuedAt: TestJWT.nowSeconds)
        let apns = try Curl.request(
            "POST", "\(emulator.endpoint)/3/device/\(TestDevice.apns(1))", caFile: directory.caFilePath,
            headers: [("authorization", "bearer \(jwt)"), ("apns-topic", "com.example.app")], body: EmulatorFixture.alertPayload
        )
        #expect(apns.status == 200)

        let account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.serviceAccountPath))) as? [String: String])
        let tokenURI = try #require(account["token_uri"])
        #expect(tokenURI == emulator.tokenURI)
        let rsa = try _RSA.Signing.PrivateKey(pemRepresentation: try #require(account["private_key"]))
        let assertion = TestJWT.oauthAssertion(
            key: rsa, keyID: try #require(account["private_key_id"]), clientEmail: try #require(account["client_email"]),
            audience: tokenURI, issuedAt: TestJWT.nowSeconds
        )
        let token = try Curl.request(
            "POST", tokenURI, caFile: directory.caFilePath, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
        )
        #expect(token.status == 200)
        await emulator.stop()
    }

    @Test("the certificate is valid for the requested time only")
    func certificateValidity() throws {
        let now = Date()
        let tls = try TLSIdentity.generate(validity: 3600, now: now)
        #expect(abs(tls.notValidAfter.timeIntervalSince(now) - 3600) < 2)
        #expect(throws: EmulatorError.self) { try TLSIdentity.generate(validity: 10, now: now) }
        #expect(throws: EmulatorError.self) { try TLSIdentity.generate(validity: 1000 * 86_400, now: now) }
    }
}

enum FixtureCredentials {
    static var shared: EmulatorCredentials { EmulatorFixture.sharedCredentials }
}
