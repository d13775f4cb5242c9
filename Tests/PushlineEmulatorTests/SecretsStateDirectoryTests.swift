import Crypto
import Foundation
import PushlineEmulator
import Testing

@Suite("State files: ADM client secret, webhook secret, their providers lines")
struct SecretsStateDirectoryTests {
    @Test("prepare writes both secrets 0600 without a newline, keeps them on the next start, and prints adm, sms and email lines naming them")
    func prepareAndReuse() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let first = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:8443")
        #expect(directory.admClientSecretPath == path + "/adm-client-secret.txt")
        #expect(directory.webhookSecretPath == path + "/webhook-secret.txt")
        for file in [directory.admClientSecretPath, directory.webhookSecretPath] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        let admSecret = try String(contentsOfFile: directory.admClientSecretPath, encoding: .utf8)
        #expect(admSecret.count == 64 && admSecret.allSatisfy(\.isHexDigit), "\(admSecret.count)")
        #expect(admSecret == first.credentials.admClientSecret)
        let webhookSecret = try String(contentsOfFile: directory.webhookSecretPath, encoding: .utf8)
        #expect(webhookSecret.hasPrefix("whsec_"))
        #expect(Data(base64Encoded: String(webhookSecret.dropFirst(6)))?.count == 32, "standard base64 with padding")
        #expect(webhookSecret == first.credentials.webhookSecret)

        let second = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:9000")
        #expect(second.credentials.admClientSecret == admSecret)
        #expect(second.credentials.webhookSecret == webhookSecret)
        #expect(try String(contentsOfFile: directory.admClientSecretPath, encoding: .utf8) == admSecret)

        let yaml = directory.providersYAML(credentials: second.credentials, endpoint: "https://127.0.0.1:9000")
        let ca = directory.caFilePath
        #expect(yaml.contains("\n  adm: { client_id: \"amzn1.application-oa2-client.pushline-emulator\", client_secret_file: \"\(path)/adm-client-secret.txt\", token_uri: \"https://127.0.0.1:9000/auth/O2/token\", endpoint: \"https://127.0.0.1:9000\", ca_file: \"\(ca)\" }\n"))
        #expect(yaml.contains("\n  sms: { url: \"https://127.0.0.1:9000/webhooks/sms\", secret_file: \"\(path)/webhook-secret.txt\", ca_file: \"\(ca)\" }\n"))
        #expect(yaml.contains("\n  email: { url: \"https://127.0.0.1:9000/webhooks/email\", secret_file: \"\(path)/webhook-secret.txt\", ca_file: \"\(ca)\" }\n"))
        #expect(!yaml.contains(admSecret) && !yaml.contains(webhookSecret))
        for text in ["\(second.credentials)", "\(second.credentials.admAccount)", "\(second.credentials.webhookAccount)"] {
            #expect(!text.contains(admSecret) && !text.contains(String(webhookSecret.dropFirst(6).prefix(16))), "\(text)")
        }
    }

    @Test("a secret saved with a newline is read; a corrupt one is an error naming the file")
    func editedAndCorruptFiles() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        let admSecret = String(repeating: "ab", count: 32)
        let webhookSecret = "whsec_" + Data(repeating: 7, count: 24).base64EncodedString()
        try (admSecret + "\n").write(toFile: directory.admClientSecretPath, atomically: true, encoding: .utf8)
        try (webhookSecret + "\r\n").write(toFile: directory.webhookSecretPath, atomically: true, encoding: .utf8)
        let edited = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        #expect(edited.credentials.admClientSecret == admSecret)
        #expect(edited.credentials.webhookKey == [UInt8](repeating: 7, count: 24))

        for broken in ["", "abc", String(repeating: "g", count: 64), String(repeating: "a", count: 65)] {
            try broken.write(toFile: directory.admClientSecretPath, atomically: true, encoding: .utf8)
            let error = #expect(throws: EmulatorError.self) { try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1") }
            #expect(error?.description.hasPrefix(directory.admClientSecretPath + ": ") == true, "'\(broken)'")
        }
        try admSecret.write(toFile: directory.admClientSecretPath, atomically: true, encoding: .utf8)
        for broken in ["", "whsec_", "whsec_***", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_" + Data(count: 16).base64EncodedString(), "whsec_" + Data(count: 65).base64EncodedString()] {
            try broken.write(toFile: directory.webhookSecretPath, atomically: true, encoding: .utf8)
            let error = #expect(throws: EmulatorError.self) { try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1") }
            #expect(error?.description.hasPrefix(directory.webhookSecretPath + ": ") == true, "'\(broken)'")
        }
    }

    @Test("what the state folder holds is what a sender needs: the client secret file buys an ADM token, the webhook secret file signs a delivery")
    func writtenSecretsWork() async throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let (credentials, tls) = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.adm = credentials.admAccount
        configuration.webhooks = credentials.webhookAccount
        let emulator = try await ProviderEmulator.start(configuration)

        let clientSecret = try String(contentsOfFile: directory.admClientSecretPath, encoding: .utf8)
        let token = try Curl.request(
            "POST", emulator.admTokenURI, caFile: directory.caFilePath, headers: [TestADM.formType], body: TestADM.tokenForm(secret: clientSecret)
        )
        #expect(token.status == 200, "\(token.bodyText)")
        let accessToken = try #require(try token.json()["access_token"] as? String)
        let send = try Curl.request(
            "POST", emulator.endpoint + TestADM.path("device-1"), caFile: directory.caFilePath,
            headers: TestADM.headers(accessToken: accessToken), body: TestADM.message
        )
        #expect(send.status == 200, "\(send.bodyText)")

        let secret = try String(contentsOfFile: directory.webhookSecretPath, encoding: .utf8)
        let body = TestWebhooks.body()
        let delivery = try Curl.request(
            "POST", emulator.webhookURL("sms"), caFile: directory.caFilePath,
            headers: TestWebhooks.headers(secret: secret, id: "msg_file", body: body), body: body
        )
        #expect(delivery.status == 200, "\(delivery.bodyText)")
        await emulator.stop()
    }
}
