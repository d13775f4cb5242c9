import Crypto
import Foundation
import PushlineEmulator
import Testing

@Suite("Web Push state files: VAPID key, subscription keys, subscriptions NDJSON")
struct WebPushStateDirectoryTests {
    struct Line: Decodable, Equatable {
        struct Keys: Decodable, Equatable {
            var p256dh: String
            var auth: String
        }

        var endpoint: String
        var keys: Keys
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test("prepare writes the VAPID key and 256 subscriptions 0600, reuses them on the next start, and names the endpoint in every line")
    func prepareAndReuse() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let first = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:8443")
        #expect(directory.vapidKeyPath == path + "/vapid-private-key.pem")
        #expect(directory.webPushKeysPath == path + "/webpush-subscription-keys.json")
        #expect(directory.webPushSubscriptionsPath == path + "/webpush-subscriptions.ndjson")
        for file in [directory.vapidKeyPath, directory.webPushKeysPath, directory.webPushSubscriptionsPath] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        let pem = try String(contentsOfFile: directory.vapidKeyPath, encoding: .utf8)
        let vapid = try P256.Signing.PrivateKey(pemRepresentation: pem)
        #expect(vapid.publicKey.rawRepresentation == first.credentials.webPush.vapidPrivateKey.publicKey.rawRepresentation)

        let written = try Self.lines(directory.webPushSubscriptionsPath)
        #expect(written.count == 256)
        for (index, text) in written.enumerated() {
            let id = index < 10 ? "s00\(index)" : index < 100 ? "s0\(index)" : "s\(index)"
            let line = try JSONDecoder().decode(Line.self, from: Data(text.utf8))
            #expect(line.endpoint == "https://127.0.0.1:8443/push/\(id)")
            // Exactly this shape and order: what a browser's PushSubscription.toJSON() gives.
            #expect(text == #"{"endpoint":"\#(line.endpoint)","keys":{"p256dh":"\#(line.keys.p256dh)","auth":"\#(line.keys.auth)"}}"#)
            let p256dh = TestWebPush.decodeBase64URL(line.keys.p256dh)
            #expect(p256dh.count == 65 && p256dh.first == 4)
            #expect(TestWebPush.decodeBase64URL(line.keys.auth).count == 16)
            #expect(!line.keys.p256dh.contains("=") && !line.keys.auth.contains("="))
            #expect(p256dh == first.credentials.webPush.subscriptions[index].p256dh)
        }

        // The next start (another port) keeps every key and rewrites the endpoints.
        let second = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:9000")
        #expect(try String(contentsOfFile: directory.vapidKeyPath, encoding: .utf8) == pem)
        let again = try Self.lines(directory.webPushSubscriptionsPath)
        #expect(again == written.map { $0.replacingOccurrences(of: "https://127.0.0.1:8443/", with: "https://127.0.0.1:9000/") })
        #expect(second.credentials.webPush.subscriptions.map(\.auth) == first.credentials.webPush.subscriptions.map(\.auth))
        #expect(second.credentials.webPush.subscriptions.map(\.id) == first.credentials.webPush.subscriptions.map(\.id))

        let yaml = directory.providersYAML(credentials: second.credentials, endpoint: "https://127.0.0.1:9000")
        #expect(yaml.contains("\n  webpush: { vapid_private_key: \"\(directory.vapidKeyPath)\", subject: \"mailto:emulator@pushline.invalid\", ca_file: \"\(directory.caFilePath)\", allow_private_endpoints: true }\n"))
        #expect(!yaml.contains("PRIVATE KEY"))
        let keysFile = try String(contentsOfFile: directory.webPushKeysPath, encoding: .utf8)
        #expect(!"\(second.credentials.webPush)".contains(String(keysFile.prefix(80).suffix(20))))
    }

    @Test("a corrupt VAPID key or subscription keys file is an error naming the file")
    func corruptFiles() throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        _ = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        let keys = try String(contentsOfFile: directory.webPushKeysPath, encoding: .utf8)
        for broken in ["{", #"{"subscriptions":[]}"#, #"{"subscriptions":[{"id":"a b","private_key":"AA","auth":"AA"}]}"#,
                       keys.replacingOccurrences(of: "\"s001\"", with: "\"s000\"")] {
            try broken.write(toFile: directory.webPushKeysPath, atomically: true, encoding: .utf8)
            let error = #expect(throws: EmulatorError.self) { try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1") }
            #expect(error?.description.hasPrefix(directory.webPushKeysPath + ": ") == true, "\(broken.prefix(40))")
        }
        try keys.write(toFile: directory.webPushKeysPath, atomically: true, encoding: .utf8)
        try "not a key".write(toFile: directory.vapidKeyPath, atomically: true, encoding: .utf8)
        let error = #expect(throws: EmulatorError.self) { try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1") }
        #expect(error?.description.hasPrefix(directory.vapidKeyPath + ": ") == true)
    }

    @Test("what the state folder holds is what a sender needs: its VAPID key and a line of the NDJSON file get a 201")
    func writtenFilesWork() async throws {
        let path = try StateDirectoryTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = EmulatorStateDirectory(path: path)
        let (credentials, tls) = try directory.prepare(teamID: "T", topic: "t", projectID: "p", endpoint: "https://127.0.0.1:1")
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.webPush = credentials.webPushAccount
        let emulator = try await ProviderEmulator.start(configuration)
        try directory.writeWebPushSubscriptions(credentials: credentials, endpoint: emulator.endpoint)

        let line = try JSONDecoder().decode(Line.self, from: Data(try #require(try Self.lines(directory.webPushSubscriptionsPath).dropFirst(42).first).utf8))
        #expect(line.endpoint == emulator.endpoint + "/push/s042")
        let vapid = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: directory.vapidKeyPath, encoding: .utf8))
        let jwt = TestWebPush.jwt(key: vapid, claims: TestWebPush.claims(audience: emulator.endpoint))
        let body = try TestWebPush.encrypt(Array(#"{"hello":"world"}"#.utf8), p256dh: TestWebPush.decodeBase64URL(line.keys.p256dh), auth: TestWebPush.decodeBase64URL(line.keys.auth))
        let response = try Curl.request(
            "POST", line.endpoint, caFile: directory.caFilePath,
            headers: [("authorization", TestWebPush.authorization(jwt, key: vapid.publicKey)), ("ttl", "30"), ("content-encoding", "aes128gcm")], body: body
        )
        #expect(response.status == 201, "\(response.bodyText)")
        #expect(emulator.stats().webpush.tokens["s042"]?.delivered == 1)
        await emulator.stop()
    }
}
