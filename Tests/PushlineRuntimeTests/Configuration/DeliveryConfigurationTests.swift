import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineRuntime
import Testing

/// The `providers:` credentials schema: what a sending run gets, and every key's diagnostics.
@Suite("Delivery configuration: providers credentials and lane settings")
struct DeliveryConfigurationTests {
    static let header = """
    name: send
    device_types: [ios, android]
    notification:
      alert: "Hi {{ id }}"
    providers:

    """

    /// A pipeline whose providers block is `apns` + `fcm` lines given; line 6 is the first.
    static func pipeline(_ providers: String, deviceTypes: String = "[ios, android]") -> String {
        header.replacingOccurrences(of: "[ios, android]", with: deviceTypes) + providers
    }

    static func apns(_ f: CredentialFixture.Files, extra: String = "") -> String {
        "  apns: { team_id: \"\(f.teamID)\", key_id: \"\(f.keyID)\", key_file: \"\(f.keyFile)\", topic: com.example.pushline\(extra) }\n"
    }

    static func fcm(_ f: CredentialFixture.Files, extra: String = "") -> String {
        "  fcm: { service_account: \"\(f.serviceAccount)\"\(extra) }\n"
    }

    static func load(_ yaml: String, in scratch: Scratch, environment: [String: String] = [:]) throws -> LoadedPipeline {
        try PipelineLoader.load(path: try writePipeline(yaml, in: scratch), now: 1_800_000_000, environment: environment)
    }

    /// The diagnostics (`line:column: error: path: message`) of a pipeline that must not load.
    static func diagnostics(_ yaml: String, in scratch: Scratch, environment: [String: String] = [:]) throws -> [String] {
        let path = try writePipeline(yaml, in: scratch)
        do {
            _ = try PipelineLoader.load(path: path, now: 1_800_000_000, environment: environment)
            Issue.record("the pipeline loaded")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func bothProvidersLoadWithTheirDefaults() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let loaded = try Self.load(Self.pipeline(Self.apns(f) + Self.fcm(f)), in: scratch)
        let configurations = try DeliveryConfiguration.load(pipeline: loaded)
        #expect(configurations.map(\.provider) == [.apns, .fcm])

        let apns = configurations[0]
        guard case .apns(let key) = apns.credentials else { Issue.record("APNs credentials"); return }
        #expect(key.keyID == f.keyID && key.teamID == "PUSHLINE01")
        // PROVIDERS.md: few long-lived APNs connections, hundreds of streams; no published quota.
        #expect(apns.settings.connections == 2 && apns.settings.streamsPerConnection == 500)
        #expect(apns.settings.rate.perSecond == 10_000 && apns.settings.rate.burst == 1_000)
        #expect(apns.settings.endpoint == nil && apns.settings.caFile == nil)
        #expect(apns.settings.requestTimeout == .seconds(30))

        let fcm = configurations[1]
        guard case .fcm(let account) = fcm.credentials else { Issue.record("FCM credentials"); return }
        #expect(account.projectID == "pushline-demo")
        // ~100 streams per connection, ten connections, 600,000 a minute = 10,000/s.
        #expect(fcm.settings.connections == 10 && fcm.settings.streamsPerConnection == 100)
        #expect(fcm.settings.rate.perSecond == 10_000 && fcm.settings.rate.burst == 1_000)

        // project_id left out: the FCM URL names the service account's project.
        let fcmRoutes = loaded.campaign.routeTable.routes.filter { $0.provider == .fcm }
        #expect(!fcmRoutes.isEmpty)
        for route in fcmRoutes {
            #expect(route.url.fullPrefix == "https://fcm.googleapis.com/v1/projects/pushline-demo/messages:send")
        }
        #expect(loaded.delivery.sendingProblems.isEmpty)
    }

    @Test func settingsAsGivenWithFilesRelativeToThePipeline() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("keys"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: f.keyFile, toPath: scratch.file("keys/AuthKey.p8"))
        try FileManager.default.copyItem(atPath: f.caFile, toPath: scratch.file("ca.pem"))
        let yaml = Self.pipeline("""
          apns: { team_id: T1, key_id: K1, key_file: keys/AuthKey.p8, topic: t, endpoint: "HTTPS://127.0.0.1:8443/", ca_file: ca.pem, connections: 3, streams: 50, rate: 120/min, burst: 7, transfer_threads: 2 }
          fcm: { service_account: "\(f.serviceAccount)", project_id: pushline-demo, rate: 5000/s }

        """)
        let configurations = try DeliveryConfiguration.load(pipeline: try Self.load(yaml, in: scratch))
        let apns = try #require(configurations.first)
        #expect(apns.settings.endpoint == "https://127.0.0.1:8443")
        #expect(apns.settings.caFile == scratch.file("ca.pem"))
        #expect(apns.settings.connections == 3 && apns.settings.streamsPerConnection == 50)
        #expect(apns.settings.transferThreads == 2)
        #expect(apns.settings.rate.perSecond == 2 && apns.settings.rate.burst == 7)
        let fcm = try #require(configurations.last)
        // 5000/s, default burst a tenth of a second.
        #expect(fcm.settings.rate.perSecond == 5_000 && fcm.settings.rate.burst == 500)
        #expect(fcm.settings.transferThreads == 1)
    }

    @Test func variablesFillTheBlock() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.pipeline("""
          apns:
            team_id: ${TEAM}
            key_id: ${KEY_ID}
            key_file: ${APNS_KEY_FILE}
            topic: com.example.pushline
            connections: ${APNS_CONNECTIONS}
          fcm: { service_account: "${FCM_SERVICE_ACCOUNT}", endpoint: "https://${EMULATOR_HOST}" }

        """)
        let environment = ["TEAM": f.teamID, "KEY_ID": f.keyID, "APNS_KEY_FILE": f.keyFile, "APNS_CONNECTIONS": "1",
                           "FCM_SERVICE_ACCOUNT": f.serviceAccount, "EMULATOR_HOST": "127.0.0.1:9443"]
        let configurations = try DeliveryConfiguration.load(pipeline: try Self.load(yaml, in: scratch, environment: environment))
        #expect(configurations.map(\.provider) == [.apns, .fcm])
        #expect(configurations[0].settings.connections == 1)
        #expect(configurations[1].settings.endpoint == "https://127.0.0.1:9443")
    }

    // MARK: every key's diagnostics

    /// One APNs key varied in block style: a credential key is moved to line 10, any other is added
    /// at line 11; its value starts at column 5 + key + 2.
    static func apnsBlock(_ f: CredentialFixture.Files, replacing key: String, with value: String) -> String {
        var members = [("team_id", "\"\(f.teamID)\""), ("key_id", "\"\(f.keyID)\""), ("key_file", "\"\(f.keyFile)\"")].filter { $0.0 != key }
        members.append((key, value))
        return Self.pipeline("  apns:\n    topic: com.example.pushline\n" + members.map { "    \($0.0): \($0.1)\n" }.joined() + Self.fcm(f))
    }

    @Test func aMissingKeyFileNamesTheFileAndTheKeyPath() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.apnsBlock(f, replacing: "key_file", with: "missing/AuthKey.p8")
        // Relative to the pipeline file's folder (the scratch folder).
        #expect(try Self.diagnostics(yaml, in: scratch) == [
            "10:15: error: providers.apns.key_file: APNs key file '\(scratch.path)/missing/AuthKey.p8' no such file",
        ])
    }

    @Test func keyFilesThatAreNotP256KeysAreRefusedWithoutQuotingThem() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try "hello\n".write(toFile: scratch.file("text.p8"), atomically: true, encoding: .utf8)
        // The service account's RSA key, as PEM: a key, but not an APNs one.
        let account = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.serviceAccount))) as? [String: Any]
        let rsa = try #require(account?["private_key"] as? String)
        try rsa.write(toFile: scratch.file("rsa.p8"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: scratch.file("dir.p8"), withIntermediateDirectories: true)

        #expect(try Self.diagnostics(Self.apnsBlock(f, replacing: "key_file", with: "text.p8"), in: scratch) == [
            "10:15: error: providers.apns.key_file: APNs key file '\(scratch.path)/text.p8' does not hold a PEM key (-----BEGIN PRIVATE KEY-----)",
        ])
        let rsaDiagnostics = try Self.diagnostics(Self.apnsBlock(f, replacing: "key_file", with: "rsa.p8"), in: scratch)
        #expect(rsaDiagnostics == [
            "10:15: error: providers.apns.key_file: APNs key file '\(scratch.path)/rsa.p8' is not a PKCS#8 P-256 private key in PEM form (an AuthKey_<key id>.p8 file from Apple)",
        ])
        let keyLines = rsa.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        #expect(!keyLines.isEmpty && keyLines.allSatisfy { line in !rsaDiagnostics.joined().contains(line) }, "no key material in a diagnostic")
        #expect(try Self.diagnostics(Self.apnsBlock(f, replacing: "key_file", with: "dir.p8"), in: scratch) == [
            "10:15: error: providers.apns.key_file: APNs key file '\(scratch.path)/dir.p8' is not a regular file",
        ])
    }

    @Test(arguments: [
        // (key, value, message): the value at column 5 + key + 2 of line 10 (team_id, key_id,
        // key_file) or 11 (added keys).
        ("team_id", "\"PUSH LINE\"", "providers.apns.team_id: expected 1 to 64 ASCII letters and digits (Apple's are 10 characters), found 'PUSH LINE'"),
        ("key_id", "\"KEY-1\"", "providers.apns.key_id: expected 1 to 64 ASCII letters and digits (Apple's are 10 characters), found 'KEY-1'"),
        ("key_id", "\"\"", "providers.apns.key_id: expected 1 to 64 ASCII letters and digits (Apple's are 10 characters), found ''"),
        ("key_file", "\"\"", "providers.apns.key_file: must not be empty"),
        ("key_file", "\"{{ id }}.p8\"", "providers.apns.key_file: cannot be personalized (it decides the payload's shape)"),
        ("key_file", "${PUSHLINE_TEST_UNSET_VARIABLE}", "providers.apns.key_file: environment variable PUSHLINE_TEST_UNSET_VARIABLE is not set"),
        ("endpoint", "http://127.0.0.1:8443", "providers.apns.endpoint: must be https:// (requests always go over TLS; an emulator serves TLS: trust it with ca_file), found 'http://127.0.0.1:8443'"),
        ("endpoint", "https://127.0.0.1:8443/3/device", "providers.apns.endpoint: must be an origin without a path (https://host[:port]; the provider's request paths are kept), found 'https://127.0.0.1:8443/3/device'"),
        ("endpoint", "https://127.0.0.1:70000", "providers.apns.endpoint: has an invalid port (1 to 65535), found 'https://127.0.0.1:70000'"),
        ("rate", "fast", "providers.apns.rate: rate 'fast' must be written like 10000/s (units: s, min, h)"),
        ("rate", "0/s", "providers.apns.rate: rate '0/s' must start with a positive whole number"),
        ("rate", "100/day", "providers.apns.rate: rate '100/day' has an unknown unit (s, min or h)"),
        ("rate", "99999999/s", "providers.apns.rate: rate must be at most 10000000/s"),
        ("rate", "5000", "providers.apns.rate: expected a string, found an integer"),
        ("burst", "0", "providers.apns.burst: 0 is out of range: expected 1 to 10000000"),
        ("connections", "65", "providers.apns.connections: 65 is out of range: expected 1 to 64"),
        ("connections", "two", "providers.apns.connections: expected an integer from 1 to 64, found 'two'"),
        ("streams", "0", "providers.apns.streams: 0 is out of range: expected 1 to 10000"),
        ("transfer_threads", "17", "providers.apns.transfer_threads: 17 is out of range: expected 1 to 16"),
        ("transfer_threads", "0", "providers.apns.transfer_threads: 0 is out of range: expected 1 to 16"),
        // APNs' default is two connections: a third thread would have none.
        ("transfer_threads", "3", "providers.apns.transfer_threads: each transfer thread needs a connection of its own: 3 threads, 2 connections"),
        ("ca_file", "\"\"", "providers.apns.ca_file: must not be empty"),
        // A line break or escape in a value is shown as `?`: a diagnostic stays one line.
        ("team_id", "\"AB\\r\\nC\"", "providers.apns.team_id: expected 1 to 64 ASCII letters and digits (Apple's are 10 characters), found 'AB??C'"),
        ("endpoint", "\"https://h\\n/x\"", "providers.apns.endpoint: must not hold spaces, control or non-ASCII characters, found 'https://h?/x'"),
    ])
    func everyKeyReportsItsOwnProblemOnce(key: String, value: String, message: String) throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let column = 5 + key.count + 2
        let line = ["team_id", "key_id", "key_file"].contains(key) ? 10 : 11
        #expect(try Self.diagnostics(Self.apnsBlock(f, replacing: key, with: value), in: scratch) == ["\(line):\(column): error: \(message)"])
    }

    @Test func caFilesMustExistAndHoldACertificate() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try "not a certificate\n".write(toFile: scratch.file("text.pem"), atomically: true, encoding: .utf8)
        #expect(try Self.diagnostics(Self.apnsBlock(f, replacing: "ca_file", with: "nope.pem"), in: scratch) == [
            "11:14: error: providers.apns.ca_file: '\(scratch.path)/nope.pem' does not exist",
        ])
        #expect(try Self.diagnostics(Self.apnsBlock(f, replacing: "ca_file", with: "text.pem"), in: scratch) == [
            "11:14: error: providers.apns.ca_file: '\(scratch.path)/text.pem' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        ])
    }

    @Test func apnsCredentialsComeTogether() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.pipeline("  apns: { topic: t, key_file: \"\(f.keyFile)\" }\n" + Self.fcm(f))
        // Reported at the apns object (line 6, column 9), one per missing id.
        #expect(try Self.diagnostics(yaml, in: scratch) == [
            "6:9: error: providers.apns.team_id: is required with key_file (APNs token authentication needs team_id, key_id and key_file)",
            "6:9: error: providers.apns.key_id: is required with key_file (APNs token authentication needs team_id, key_id and key_file)",
        ])
    }

    @Test func serviceAccountProblemsNameTheFileAndField() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try "{\"type\": \"service_account\"".write(toFile: scratch.file("broken.json"), atomically: true, encoding: .utf8)
        var account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.serviceAccount))) as? [String: Any])
        account["client_email"] = nil
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: scratch.file("no-email.json")))

        // Line 7: `  fcm: { service_account: ` puts the value at column 27. No second diagnostic
        // for the project_id the file would have given.
        #expect(try Self.diagnostics(Self.pipeline(Self.apns(f) + "  fcm: { service_account: missing.json }\n"), in: scratch) == [
            "7:27: error: providers.fcm.service_account: FCM service account file '\(scratch.path)/missing.json' no such file",
        ])
        let broken = try Self.diagnostics(Self.pipeline(Self.apns(f) + "  fcm: { service_account: broken.json }\n"), in: scratch)
        #expect(broken.count == 1 && broken[0].hasPrefix("7:27: error: providers.fcm.service_account: FCM service account file '\(scratch.path)/broken.json' is not valid JSON ("))
        let noEmail = try Self.diagnostics(Self.pipeline(Self.apns(f) + "  fcm: { service_account: no-email.json }\n"), in: scratch)
        #expect(noEmail == ["7:27: error: providers.fcm.service_account: FCM service account file '\(scratch.path)/no-email.json': client_email is missing"])
        #expect(!noEmail.joined().contains("PRIVATE KEY"))
    }

    /// The sender exchanges tokens over HTTPS only; `validate` says so rather than the run.
    @Test func aPlainHTTPTokenURIIsRefusedBeforeSending() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        var account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.serviceAccount))) as? [String: Any])
        account["token_uri"] = "http://127.0.0.1:9/token"
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: scratch.file("plain.json")))
        let diagnostics = try Self.diagnostics(Self.pipeline(Self.apns(f) + "  fcm: { service_account: plain.json }\n"), in: scratch)
        #expect(diagnostics == [
            "7:27: error: providers.fcm.service_account: the service account's token_uri 'http://127.0.0.1:9/token' is plain http://: the sender exchanges tokens over HTTPS only (the emulator serves https://…/token)",
        ])
    }

    @Test func aProjectIDThatDisagreesWithTheServiceAccountIsAnError() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.pipeline(Self.apns(f) + Self.fcm(f, extra: ", project_id: other-project"))
        let diagnostics = try Self.diagnostics(yaml, in: scratch)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.hasSuffix("error: providers.fcm.project_id: is 'other-project' but the service account file is for project 'pushline-demo': leave project_id out (the file's is used) or make them agree") == true)
        // Agreeing is fine.
        _ = try Self.load(Self.pipeline(Self.apns(f) + Self.fcm(f, extra: ", project_id: pushline-demo")), in: scratch)
    }

    @Test func fcmNeedsAProjectFromSomewhere() throws {
        let scratch = try Scratch()
        #expect(try Self.diagnostics(Self.pipeline("  apns: { topic: t }\n  fcm: { rate: 10/s }\n"), in: scratch) == [
            "7:8: error: providers.fcm.project_id: is required in providers.fcm (or give service_account: its project_id is used)",
        ])
    }

    @Test func everyProblemIsListedAtOnceInFileOrder() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.pipeline("""
          apns:
            topic: t
            team_id: ${PUSHLINE_TEST_UNSET_TEAM}
            key_id: K1
            key_file: nope.p8
            endpoint: https://h/x
          fcm: { service_account: "\(f.serviceAccount)", rate: 1/fortnight }

        """)
        // fcm's rate: `  fcm: { service_account: "` puts the quote at column 27, the path after it,
        // then `", rate: ` (9 more) before the value: 37 + the path's length.
        #expect(try Self.diagnostics(yaml, in: scratch) == [
            "8:14: error: providers.apns.team_id: environment variable PUSHLINE_TEST_UNSET_TEAM is not set",
            "10:15: error: providers.apns.key_file: APNs key file '\(scratch.path)/nope.p8' no such file",
            "11:15: error: providers.apns.endpoint: must be an origin without a path (https://host[:port]; the provider's request paths are kept), found 'https://h/x'",
            "12:\(37 + f.serviceAccount.utf8.count): error: providers.fcm.rate: rate '1/fortnight' has an unknown unit (s, min or h)",
        ])
    }

    // MARK: sending needs every reached provider

    @Test func aRouteToAProviderWithoutCredentialsIsRefusedForSendingOnly() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        // APNs credentials, FCM only a project: android devices (and iOS devices routed to FCM).
        let loaded = try Self.load(Self.pipeline(Self.apns(f) + "  fcm: { project_id: p1 }\n"), in: scratch)
        let expected = ["7:8: error: providers.fcm.service_account: is required to send: ios, android devices go to FCM; add the service account JSON file to providers.fcm (or run with --dry-run)"]
        #expect(loaded.delivery.sendingProblems.map(\.description) == expected)
        #expect(throws: PipelineError.self) { try DeliveryConfiguration.load(pipeline: loaded) }
        // A dry run does not need them.
        let decision = try RunDecision(pipeline: loaded, dryRun: true, validateOnly: false)
        guard case .dryRun = decision.mode else { Issue.record("dry run expected"); return }
        #expect(throws: RunDecision.Refusal.self) { try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false) }

        let apnsMissing = try Self.load(Self.pipeline("  apns: { topic: t }\n" + Self.fcm(f)), in: scratch)
        #expect(apnsMissing.delivery.sendingProblems.map(\.description) == [
            "6:9: error: providers.apns.key_file: is required to send: ios devices go to APNs; add team_id, key_id and key_file to providers.apns (or run with --dry-run)",
        ])
    }

    @Test func channelsWithoutCredentialsAreRefusedForSendingEachByName() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Self.pipeline(Self.apns(f) + Self.fcm(f) + "  sms: { url: \"https://hooks.example/sms\" }\n", deviceTypes: "[ios, web, amazon, sms]")
        let loaded = try Self.load(yaml, in: scratch)
        #expect(loaded.delivery.sendingProblems.map(\.description) == [
            "6:3: error: providers.webpush.vapid_private_key: is required to send: web devices go to Web Push; add vapid_private_key (the key the site's subscriptions were made with) and subject to providers.webpush (or run with --dry-run)",
            "6:3: error: providers.adm.client_id: is required to send: amazon devices go to ADM; add client_id and client_secret_file (the app's security profile) to providers.adm (or run with --dry-run)",
            "8:8: error: providers.sms.secret_file: is required to send: sms devices go to the webhook at providers.sms.url, and every request is signed (Standard Webhooks); add a file holding the whsec_ secret the receiver verifies with (or run with --dry-run)",
        ])
    }

    static let webhookSecret = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()

    @Test func admAndWebhookCredentialsAreLoadedAndChannelsGetTheirOwnSettings() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try "amzn-secret\n".write(toFile: scratch.file("adm-secret.txt"), atomically: true, encoding: .utf8)
        try (Self.webhookSecret + "\n").write(toFile: scratch.file("hooks.txt"), atomically: true, encoding: .utf8)
        let yaml = Self.pipeline(
            Self.apns(f) + Self.fcm(f)
                + "  adm: { client_id: amzn1.application-oa2-client.x, client_secret_file: adm-secret.txt, rate: 50/s }\n"
                + "  sms: { url: \"https://hooks.example/sms\", secret_file: hooks.txt, rate: 20/s, connections: 2 }\n"
                + "  \"open::chat\": { url: \"https://hooks.example/chat\", secret_file: hooks.txt }\n",
            deviceTypes: "[ios, amazon, sms, \"open::chat\"]"
        )
        let loaded = try Self.load(yaml, in: scratch)
        #expect(loaded.delivery.sendingProblems.isEmpty, "\(loaded.delivery.sendingProblems)")
        let configured = try DeliveryConfiguration.load(pipeline: loaded)
        #expect(configured.map(\.provider) == [.apns, .fcm, .adm, .webhook])
        guard case .adm(let client) = configured[2].credentials else { Issue.record("ADM credentials expected"); return }
        #expect(client.clientID == "amzn1.application-oa2-client.x")
        #expect(client.tokenEndpoint.uri == "https://api.amazon.com/auth/O2/token")
        #expect("\(configured[2].settings.rate)".contains("50"))
        guard case .webhooks(let channels) = configured[3].credentials else { Issue.record("webhook channels expected"); return }
        #expect(channels.map(\.name) == ["sms", "open::chat"])
        #expect(channels[0].settings.connections == 2 && channels[1].settings.connections == 4)
        #expect("\(channels[0].settings.rate)".contains("20") && "\(channels[1].settings.rate)".contains("500"))
        // Nothing secret in what is printed about them.
        let described = RunDecision(mode: .send(configured, validateOnly: false), notice: nil).describeProviders().joined(separator: "\n")
        #expect(!described.contains("amzn-secret") && !described.contains(String(Self.webhookSecret.dropFirst(6).prefix(12))))
        #expect(described.contains("sms 2 connections"))
    }

    @Test func badADMAndWebhookSecretsAreNamed() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try "short".write(toFile: scratch.file("hooks.txt"), atomically: true, encoding: .utf8)
        let yaml = Self.pipeline(
            Self.apns(f) + Self.fcm(f)
                + "  adm: { client_id: x, client_secret_file: nothing-here.txt }\n"
                + "  sms: { url: \"https://hooks.example/sms\", secret_file: hooks.txt }\n",
            deviceTypes: "[ios, amazon, sms]"
        )
        let problems = try Self.diagnostics(yaml, in: scratch)
        #expect(problems.contains { $0.contains("providers.adm.client_secret_file: ADM client secret file '\(scratch.path)/nothing-here.txt'") }, "\(problems)")
        #expect(problems.contains { $0.contains("providers.sms.secret_file: file '\(scratch.path)/hooks.txt'") }, "\(problems)")
    }

    @Test func onlyReachedProvidersAreSentTo() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let loaded = try Self.load(Self.pipeline(Self.apns(f) + Self.fcm(f), deviceTypes: "[ios]"), in: scratch)
        #expect(loaded.delivery.configured.map(\.provider) == [.apns, .fcm])
        // With an FCM project, iOS devices that name FCM go there: both are reached.
        #expect(try DeliveryConfiguration.load(pipeline: loaded).map(\.provider) == [.apns, .fcm])
        let apnsOnly = try Self.load(Self.pipeline(Self.apns(f), deviceTypes: "[ios]"), in: scratch)
        #expect(try DeliveryConfiguration.load(pipeline: apnsOnly).map(\.provider) == [.apns])
    }
}
