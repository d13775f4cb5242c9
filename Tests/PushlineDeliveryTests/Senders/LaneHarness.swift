import Crypto
import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import Synchronization
import Testing

/// A running emulator with fresh credentials, its certificate, the .p8 key and the service
/// account file written to a temporary folder: what a lane is configured with in a real run.
final class LaneHarness: Sendable {
    let emulator: ProviderEmulator
    let folder: String
    let caFile: String
    let keyFile: String
    let serviceAccountFile: String

    /// RSA key generation is slow: one set of credentials serves every test.
    static let credentials: EmulatorCredentials = try! EmulatorCredentials.generate()
    static let tls: TLSIdentity = try! TLSIdentity.generate(validity: 86_400)

    var credentials: EmulatorCredentials { Self.credentials }

    private init(emulator: ProviderEmulator, folder: String) throws {
        self.emulator = emulator
        self.folder = folder
        caFile = folder + "/ca.pem"
        keyFile = folder + "/AuthKey.p8"
        serviceAccountFile = folder + "/service-account.json"
        try Self.tls.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        try Self.credentials.apnsKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try Self.credentials.serviceAccountJSON(tokenURI: emulator.tokenURI).write(toFile: serviceAccountFile, atomically: true, encoding: .utf8)
    }

    static func start(_ configure: (inout EmulatorConfiguration) -> Void = { _ in }) async throws -> LaneHarness {
        var configuration = EmulatorConfiguration(tls: tls)
        configuration.apns = credentials.apnsAccount
        configuration.fcm = credentials.fcmAccount
        configuration.threads = 2
        configure(&configuration)
        let folder = NSTemporaryDirectory() + "pushline-lane-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let emulator = try await ProviderEmulator.start(configuration)
        return try LaneHarness(emulator: emulator, folder: folder)
    }

    func stop() async {
        await emulator.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Fast retries for tests: the policy's logic is tested on its own.
    static let quickRetry = RetryPolicy(maximumAttempts: 5, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(40), maximumTotalTime: .seconds(600))

    func settings(
        connections: Int = 2, streams: Int = 100, rate: String = "100000/s", retry: RetryPolicy = LaneHarness.quickRetry,
        requestTimeout: Duration = .seconds(30)
    ) -> SenderSettings {
        SenderSettings(
            endpoint: emulator.endpoint, caFile: caFile, connections: connections, streamsPerConnection: streams,
            // A hang guard only: a busy machine must not turn slow answers into timeouts.
            rate: try! SendRate(parsing: rate), requestTimeout: requestTimeout, retry: retry
        )
    }

    func apnsConfiguration(_ settings: SenderSettings? = nil, key: APNsSigningKey? = nil) throws -> ProviderSendConfiguration {
        let key = try key ?? APNsSigningKey.load(keyFile: keyFile, keyID: credentials.keyID, teamID: credentials.teamID)
        return ProviderSendConfiguration(provider: .apns, credentials: .apns(key), settings: settings ?? self.settings())
    }

    func fcmConfiguration(_ settings: SenderSettings? = nil, accountFile: String? = nil) throws -> ProviderSendConfiguration {
        let account = try FCMServiceAccount.load(path: accountFile ?? serviceAccountFile)
        return ProviderSendConfiguration(provider: .fcm, credentials: .fcm(account), settings: settings ?? self.settings())
    }
}

/// Runs `body` against a fresh emulator and always stops it.
func withLaneHarness<T>(_ configure: (inout EmulatorConfiguration) -> Void = { _ in }, _ body: (LaneHarness) async throws -> T) async throws -> T {
    let harness = try await LaneHarness.start(configure)
    do {
        let result = try await body(harness)
        await harness.stop()
        return result
    } catch {
        await harness.stop()
        throw error
    }
}

/// The campaign side of a test: a route table with one APNs and one FCM route (the production
/// origins, which the lane's `endpoint` replaces) and requests encoded into one arena.
enum TestCampaign {
    static let apnsRoute = RouteID(0)
    static let fcmRoute = RouteID(1)
    static let topic = EmulatorCredentials.defaultTopic
    static let project = EmulatorCredentials.defaultProjectID

    static var routes: RouteTable {
        let framing = DryRunFraming(beforeTarget: [], targetInURL: false, afterTarget: [], headersHaveMembers: false, platformText: 0..<0)
        return RouteTable(routes: [
            RequestRoute(
                id: apnsRoute, platform: .ios, platformName: "ios", provider: .apns, method: "POST",
                url: RouteURL(shape: .targetInPath, origin: "https://api.push.apple.com", pathBeforeTarget: "/3/device/"),
                constantHeaders: [HTTPHeaderField("apns-push-type", "alert"), HTTPHeaderField("apns-priority", "10"), HTTPHeaderField("apns-topic", topic)],
                dryRun: framing
            ),
            RequestRoute(
                id: fcmRoute, platform: .android, platformName: "android", provider: .fcm, method: "POST",
                url: .fixed("https://fcm.googleapis.com/v1/projects/\(project)/messages:send"),
                constantHeaders: [HTTPHeaderField("content-type", "application/json")], dryRun: framing
            ),
        ])
    }

    static func apnsToken(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "ab" + String(repeating: "0", count: 62 - hex.count) + hex
    }

    static func fcmToken(_ n: Int) -> String { "fcm-token-\(n)-" + String(repeating: "x", count: 32) }

    /// One request per token (tag = its position, line = position + 1), all in one arena.
    static func requests(provider: Provider, tokens: [String], collapseID: String? = nil, validateOnly: Bool = false) -> [OutgoingRequest] {
        var index = RequestIndex()
        for (i, token) in tokens.enumerated() {
            let recipientStart = index.arena.count
            append("\"user-\(i)\"", to: &index.arena)
            let recipient = ByteRange(recipientStart, index.arena.count)!
            let body: ByteRange
            let target: ByteRange
            let route: RouteID
            if provider == .apns {
                let targetStart = index.arena.count
                append(token, to: &index.arena)
                target = ByteRange(targetStart, index.arena.count)!
                let bodyStart = index.arena.count
                append(#"{"aps":{"alert":"Hello \#(i)"}}"#, to: &index.arena)
                body = ByteRange(bodyStart, index.arena.count)!
                route = apnsRoute
            } else {
                let bodyStart = index.arena.count
                let prefix = validateOnly ? #"{"validate_only":true,"message":{"token":""# : #"{"message":{"token":""#
                append(prefix, to: &index.arena)
                let targetStart = index.arena.count
                append(token, to: &index.arena)
                target = ByteRange(targetStart, index.arena.count)!
                append(#"","notification":{"title":"Hi","body":"Hello \#(i)"}}}"#, to: &index.arena)
                body = ByteRange(bodyStart, index.arena.count)!
                route = fcmRoute
            }
            let headersStart = index.arena.count
            if let collapseID {
                Array(collapseID.utf8).withUnsafeBytes { _ = RequestHeaderBlock.append(.apnsCollapseID, value: $0, to: &index.arena) }
            }
            let headers = ByteRange(headersStart, index.arena.count)!
            index.append(RequestEntry(line: i + 1, device: 0, route: route, flags: [], recipient: recipient, target: target, body: body, headers: headers))
        }
        let bytes = RequestBytes.arena(of: index)
        return (0..<index.count).map { OutgoingRequest(tag: UInt64($0), index: index, at: $0, bytes: bytes) }
    }
}

private func append(_ text: String, to writer: inout JSONWriter) {
    for byte in text.utf8 { writer.appendRaw(byte: byte) }
}

/// What a lane reported about each request.
struct LaneRun: Sendable {
    var settled: [UInt64: SettledRequest] = [:]
    var deferred: Set<UInt64> = []
    /// Protocol violations seen (a second settle, a defer after the settle, a second defer).
    var violations: [String] = []
    var report: LaneReport?

    func outcome(_ tag: Int) -> DeliveryOutcome? { settled[UInt64(tag)]?.outcome }

    var counts: [DeliveryOutcome.Kind: Int] {
        var counts: [DeliveryOutcome.Kind: Int] = [:]
        for request in settled.values { counts[request.outcome.kind, default: 0] += 1 }
        return counts
    }
}

enum LaneDriver {
    /// Sends `requests` in batches of `batchSize`, finishes, and reads every event until the
    /// stream ends; cancels the lane (and records an issue) if that takes longer than `timeout`:
    /// a hang guard only, far above what a run takes even while other builds share the cores
    /// (alone each run takes a few seconds).
    static func run(_ lane: any DeliveryLane, _ requests: [OutgoingRequest], batchSize: Int = 500, timeout: Duration = .seconds(300)) async -> LaneRun {
        // The lane's own work (an OAuth lane's token fetches), as the sink runs it.
        async let running: Void = lane.run()
        let reader = Task { () -> LaneRun in
            var run = LaneRun()
            for await events in lane.events {
                for event in events {
                    switch event {
                    case .deferred(let tag, _):
                        if run.settled[tag] != nil { run.violations.append("deferred after settled: \(tag)") }
                        if !run.deferred.insert(tag).inserted { run.violations.append("deferred twice: \(tag)") }
                    case .settled(let settled):
                        let tag = settled.request.tag
                        if run.settled[tag] != nil { run.violations.append("settled twice: \(tag)") }
                        if settled.wasDeferred != run.deferred.contains(tag) { run.violations.append("wasDeferred mismatch: \(tag)") }
                        run.settled[tag] = settled
                    }
                }
            }
            return run
        }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            Issue.record("the lane did not end within \(timeout): cancelling it")
            await lane.cancel()
        }
        var start = 0
        while start < requests.count {
            let end = min(start + batchSize, requests.count)
            await lane.send(Array(requests[start..<end]))
            start = end
        }
        await lane.finish()
        var run = await reader.value
        watchdog.cancel()
        await running
        run.report = await lane.report()
        return run
    }

    /// Runs `lane`'s own work (`DeliveryLane.run()`: an OAuth lane's token fetches) beside
    /// `body`, as the sink does. `body` ends the lane (finish or cancel) before it returns;
    /// if it throws, the work is cancelled with it.
    static func whileRunning<T: Sendable>(_ lane: any DeliveryLane, _ body: () async throws -> T) async rethrows -> T {
        async let running: Void = lane.run()
        let result = try await body()
        await running
        return result
    }
}

/// The system clock with a movable monotonic offset: the lane runs in real time, and a test can
/// jump it forward (a limiter's minute-long pause) without waiting. The wall clock is not moved
/// (the emulator checks token `iat`s against its own). The wall clock can be skewed for
/// its first reading only (a provider token signed with a stale `iat`).
final class JumpClock: DeliveryClock {
    private let system = SystemDeliveryClock()
    private let state: Mutex<(offset: Int64, skewFirstWallReading: Int64?)>

    init(skewFirstWallReading: Int64? = nil) {
        state = Mutex((0, skewFirstWallReading))
    }

    func now() -> DeliveryInstant {
        let offset = state.withLock { $0.offset }
        return system.now().advanced(by: .seconds(offset))
    }

    func unixTime() -> Int64 {
        let (offset, skew) = state.withLock { state -> (Int64, Int64?) in
            defer { state.skewFirstWallReading = nil }
            return (state.offset, state.skewFirstWallReading)
        }
        _ = offset
        return system.unixTime() + (skew ?? 0)
    }

    func advance(seconds: Int64) {
        state.withLock { $0.offset += seconds }
    }
}
