import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime
import Testing

/// `--providers FILE`: a file holding only `providers:` replaces the pipeline's block, so
/// credentials live apart from the campaign (and `pushline-emulator` can hand over its own).
@Suite("Providers file: a providers block kept apart from the pipeline")
struct ProvidersFileTests {
    /// The pipeline's own block names a project and a topic but no credentials.
    static let pipeline = """
    name: send
    device_types: [ios, android]
    notification:
      alert: "Hi {{ id }}"
    providers:
      apns: { topic: com.example.other }
      fcm: { project_id: other-project }

    """

    @Test func theFileReplacesThePipelinesBlock() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let pipelinePath = try writePipeline(Self.pipeline, in: scratch)
        let providersPath = scratch.file("providers.yaml")
        try """
        providers:
          apns: { team_id: "\(f.teamID)", key_id: "\(f.keyID)", key_file: "\(f.keyFile)", topic: com.example.pushline, endpoint: "https://127.0.0.1:9" }
          fcm: { service_account: "\(f.serviceAccount)" }
        """.write(toFile: providersPath, atomically: true, encoding: .utf8)
        let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:], providersPath: providersPath)
        let configurations = try DeliveryConfiguration.load(pipeline: loaded)
        #expect(configurations.map(\.provider) == [.apns, .fcm])
        #expect(configurations[0].settings.endpoint == "https://127.0.0.1:9")
        // Nothing of the pipeline's block is left: the topic and the project come from the file
        // (the project from the service account, which names pushline-demo).
        let urls = loaded.campaign.routeTable.routes.map { $0.url.fullPrefix }
        #expect(urls.contains("https://fcm.googleapis.com/v1/projects/pushline-demo/messages:send"))
        #expect(!urls.contains { $0.contains("other-project") })
        #expect(loaded.campaign.routeTable.routes.contains { $0.constantHeaders.contains(HTTPHeaderField("apns-topic", "com.example.pushline")) })
    }

    @Test func relativePathsAreRelativeToTheProvidersFile() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let pipelinePath = try writePipeline(Self.pipeline, in: scratch)
        // The key file sits next to the providers file, in a folder of its own.
        let folder = scratch.file("credentials")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: f.keyFile, toPath: folder + "/key.p8")
        try FileManager.default.copyItem(atPath: f.serviceAccount, toPath: folder + "/account.json")
        try """
        providers:
          apns: { team_id: "\(f.teamID)", key_id: "\(f.keyID)", key_file: key.p8, topic: com.example.pushline }
          fcm: { service_account: account.json }
        """.write(toFile: folder + "/providers.yaml", atomically: true, encoding: .utf8)
        let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:], providersPath: folder + "/providers.yaml")
        #expect(try DeliveryConfiguration.load(pipeline: loaded).count == 2)
    }

    @Test func diagnosticsUnderProvidersNameTheProvidersFile() throws {
        let scratch = try Scratch()
        let pipelinePath = try writePipeline(Self.pipeline, in: scratch)
        let providersPath = scratch.file("providers.yaml")
        try "providers:\n  apns: { team_id: T, key_id: K, key_file: missing.p8, topic: com.example.pushline }\n"
            .write(toFile: providersPath, atomically: true, encoding: .utf8)
        do {
            _ = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:], providersPath: providersPath)
            Issue.record("loaded with a missing key file")
        } catch {
            let text = error.description
            // Line 2, column 44: where `missing.p8` starts in the providers file.
            #expect(text.contains("\(providersPath):2:44: error: providers.apns.key_file:"), "\(text)")
            #expect(!text.contains("\(pipelinePath):2:44"))
            // The FCM project the replaced block gave is gone: android needs one again.
            #expect(text.contains("providers.fcm.project_id"))
        }
    }

    @Test(arguments: [
        ("providers:\n  apns: { topic: a }\nname: other\n", "3:7: error: name: a providers file holds only `providers:`"),
        ("apns: { topic: a }\n", "1:1: error: a providers file holds one key, `providers:`"),
        ("- providers\n", "1:1: error: a providers file holds one key, `providers:`"),
    ])
    func aFileWithMoreOrLessThanProvidersIsRefused(text: String, expected: String) throws {
        let scratch = try Scratch()
        let pipelinePath = try writePipeline(Self.pipeline, in: scratch)
        let providersPath = scratch.file("providers.yaml")
        try text.write(toFile: providersPath, atomically: true, encoding: .utf8)
        do {
            _ = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:], providersPath: providersPath)
            Issue.record("loaded")
        } catch {
            #expect(error.path == providersPath)
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func theEmulatorWritesAFileValidateAccepts() throws {
        let scratch = try Scratch()
        let directory = EmulatorStateDirectory(path: scratch.file("emulator"))
        let (credentials, _) = try directory.prepare(
            teamID: "PUSHLINE01", topic: "com.example.pushline", projectID: "pushline-demo", endpoint: "https://127.0.0.1:8443"
        )
        try directory.writeProvidersFile(credentials: credentials, endpoint: "https://127.0.0.1:8443")
        let pipelinePath = try writePipeline(Self.pipeline, in: scratch)
        let loaded = try PipelineLoader.load(path: pipelinePath, now: 1_800_000_000, environment: [:], providersPath: directory.providersFilePath)
        let configurations = try DeliveryConfiguration.load(pipeline: loaded)
        #expect(configurations.map { $0.settings.endpoint } == ["https://127.0.0.1:8443", "https://127.0.0.1:8443"])
        #expect(configurations.allSatisfy { $0.settings.caFile == directory.caFilePath })
    }
}
