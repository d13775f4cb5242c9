import Foundation
import PushlineEmulator

/// Real credential files for configuration tests: an APNs .p8, a service-account JSON (project
/// `pushline-demo`) and a CA certificate, written once per test process by the emulator's state
/// folder (an RSA key takes a moment to make).
enum CredentialFixture {
    struct Files: Sendable {
        var keyFile: String
        var keyID: String
        var teamID: String
        var serviceAccount: String
        var projectID: String
        var caFile: String
        var folder: String
    }

    static let shared: Result<Files, EmulatorError> = Result { () throws(EmulatorError) -> Files in
        // Shared by the whole test process, so it goes when the process exits (every test run
        // left one folder of keys in the temporary directory before).
        atexit { try? FileManager.default.removeItem(atPath: CredentialFixture.folder) }
        let directory = EmulatorStateDirectory(path: folder)
        let (credentials, _) = try directory.prepare(
            teamID: "PUSHLINE01", topic: "com.example.pushline", projectID: "pushline-demo", endpoint: "https://127.0.0.1:8443"
        )
        return Files(
            keyFile: directory.apnsKeyPath, keyID: credentials.keyID, teamID: credentials.teamID,
            serviceAccount: directory.serviceAccountPath, projectID: credentials.projectID,
            caFile: directory.caFilePath, folder: directory.path
        )
    }

    static func files() throws -> Files { try shared.get() }

    private static let folder = NSTemporaryDirectory() + "pushline-config-fixture-" + UUID().uuidString
}
