import Crypto
import Foundation
import PushlineEmulator
import _CryptoExtras

/// A running emulator with fresh credentials and its certificate written to a temporary file
/// (the `ca_file` a client trusts).
final class EmulatorFixture: Sendable {
    let emulator: ProviderEmulator
    let credentials: EmulatorCredentials
    let directory: URL
    let caFile: String
    /// The emulator's clock: the tokens the fixture makes are timed by it, so a test holding a
    /// manual clock gets tokens valid at that clock's time however long it waited to run.
    let clock: EmulatorClock

    var port: Int { emulator.port }
    var endpoint: String { emulator.endpoint }

    /// RSA key generation is slow; one set of credentials serves every test.
    static let sharedCredentials: EmulatorCredentials = try! EmulatorCredentials.generate()
    static let sharedTLS: TLSIdentity = try! TLSIdentity.generate(validity: 86_400)

    private init(emulator: ProviderEmulator, credentials: EmulatorCredentials, directory: URL, caFile: String, clock: EmulatorClock) {
        self.clock = clock
        self.emulator = emulator
        self.credentials = credentials
        self.directory = directory
        self.caFile = caFile
    }

    static func start(_ configure: (inout EmulatorConfiguration) -> Void = { _ in }) async throws -> EmulatorFixture {
        let credentials = sharedCredentials
        var configuration = EmulatorConfiguration(tls: sharedTLS)
        configuration.apns = credentials.apnsAccount
        configuration.fcm = credentials.fcmAccount
        configuration.webPush = credentials.webPushAccount
        configuration.adm = credentials.admAccount
        configuration.webhooks = credentials.webhookAccount
        configuration.threads = 2
        configure(&configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-emulator-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let caFile = directory.appendingPathComponent("ca.pem").path
        try configuration.tls.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        let emulator = try await ProviderEmulator.start(configuration)
        return EmulatorFixture(emulator: emulator, credentials: credentials, directory: directory, caFile: caFile, clock: configuration.clock)
    }

    func stop() async {
        await emulator.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A provider token the emulator must accept.
    func providerToken(issuedAt: Int64? = nil) -> String {
        TestJWT.apnsProviderToken(key: credentials.apnsPrivateKey, keyID: credentials.keyID, teamID: credentials.teamID, issuedAt: issuedAt ?? clock.seconds)
    }

    /// Headers of a valid APNs alert request.
    func apnsHeaders(token: String? = nil, extra: [(String, String)] = []) -> [(String, String)] {
        [("authorization", "bearer \(token ?? providerToken())"), ("apns-topic", credentials.topic), ("apns-push-type", "alert")] + extra
    }

    static let alertPayload = Array(#"{"aps":{"alert":"Hello"}}"#.utf8)
}

/// Runs `body` against a fresh emulator and always stops it.
func withEmulator<T>(_ configure: (inout EmulatorConfiguration) -> Void = { _ in }, _ body: (EmulatorFixture) async throws -> T) async throws -> T {
    let fixture = try await EmulatorFixture.start(configure)
    do {
        let result = try await body(fixture)
        await fixture.stop()
        return result
    } catch {
        await fixture.stop()
        throw error
    }
}
