import Crypto
import Foundation
import PushlineEmulator
import Testing

@Suite("State files: the ADM client secret and its providers line")
struct SecretsStateDirectoryTests {
    @Test("prepare writes the client secret 0600 without a newline, keeps it on the next start, and prints an adm line naming it")
    func prepareAndReuse() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let first = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:8443")
        #expect(directory.admClientSecretPath == path + "/adm-client-secret.txt")
        let mode = try FileManager.default.attributesOfItem(atPath: directory.admClientSecretPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let admSecret = try String(contentsOfFile: directory.admClientSecretPath, encoding: .utf8)
        #expect(admSecret.count == 64 && admSecret.allSatisfy(\.isHexDigit), "\(admSecret.count)")
        #expect(admSecret == first.credentials.admClientSecret)

        let second = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:9000")
        #expect(second.credentials.admClientSecret == admSecret)
        #expect(try String(contentsOfFile: directory.admClientSecretPath, encoding: .utf8) == admSecret)

        let yaml = directory.providersYAML(credentials: second.credentials, endpoint: "https://127.0.0.1:9000")
        let ca = directory.caFilePath
        #expect(yaml.contains("\n  adm: { client_id: \"amzn1.application-oa2-client.pushline-emulator\", client_secret_file: \"\(path)/adm-client-secret.txt\", token_uri: \"https://127.0.0.1:9000/auth/O2/token\", endpoint: \"https://127.0.0.1:9000\", ca_file: \"\(ca)\" }\n"))
        #expect(!yaml.contains(admSecret))
        for text in ["\(second.credentials)", "\(second.credentials.admAccount)"] {
            #expect(!text.contains(admSecret), "\(text)")
        }
    }

    @Test("a secret saved with a newline is read; a corrupt one is an error naming the file")
    func editedAndCorruptFiles() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        let admSecret = String(repeating: "ab", count: 32)
        try (admSecret + "\n").write(toFile: directory.admClientSecretPath, atomically: true, encoding: .utf8)
        let edited = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        #expect(edited.credentials.admClientSecret == admSecret)

        for broken in ["", "abc", String(repeating: "g", count: 64), String(repeating: "a", count: 65)] {
            try broken.write(toFile: directory.admClientSecretPath, atomically: true, encoding: .utf8)
            let error = #expect(throws: EmulatorError.self) { try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1") }
            #expect(error?.description.hasPrefix(directory.admClientSecretPath + ": ") == true, "'\(broken)'")
        }
    }

    @Test("what the state folder holds is what a sender needs: the client secret file buys an ADM token")
    func writtenSecretsWork() async throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let (credentials, tls) = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.adm = credentials.admAccount
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
        await emulator.stop()
    }
}
