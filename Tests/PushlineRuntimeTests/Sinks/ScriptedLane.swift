import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEmulator
import PushlineRuntime

/// A `DeliveryLane` for testing the **delivery sink**, not a sender: it sends nothing. Each
/// request's fate comes from a script (settle now, settle after a delay, or defer to a "retry
/// queue" and settle once the lane has been handed a later line), so a test knows every outcome
/// in advance and checks that the sink accounts for, settles and writes exactly those.
/// It keeps the lane contract the sink relies on: exactly one `.settled` per request, at most
/// one `.deferred` before it, events end after `finish()` once everything settled.
actor ScriptedLane: DeliveryLane {
    enum Step: Sendable {
        /// Settles at once.
        case settle(DeliveryOutcome)
        /// Settles after `delay` (other requests overtake it).
        case slow(DeliveryOutcome, delay: Duration)
        /// Emits `.deferred` at once, then settles (with a detached copy, like a retry) as soon
        /// as the lane is handed a request of line `line` or later (or at `finish()`).
        case deferUntilLine(Int, DeliveryOutcome)
    }

    nonisolated let provider: Provider
    nonisolated let events = LaneEvents()
    private let script: @Sendable (OutgoingRequest) -> Step
    /// After this many requests settled, the lane "stops" with `stopMessage`, as a sender does on
    /// a configuration error: every later request fails unsent with `provider_stopped`.
    private let stopAfter: Int?
    private let stopMessage: String
    private var stopped = false
    private var settledSent = 0
    private var pending = 0
    private var finishing = false
    /// `drain()` came: waiting requests settled unsent, later ones settle unsent at once.
    private var draining = false
    /// Requests settled unsent by the drain.
    private(set) var drainedUnsent = 0
    private var waiting: [(line: Int, request: OutgoingRequest, outcome: DeliveryOutcome)] = []
    /// `.slow` requests not settled yet ("in flight": `cancel()` settles them).
    private var inFlight: [UInt64: OutgoingRequest] = [:]
    private var laneReport: LaneReport

    /// Highest line handed over so far.
    private(set) var highestLine = 0 {
        didSet { handedThrough.update { $0 = highestLine } }
    }
    /// `highestLine`, for a test to wait on from outside the actor.
    nonisolated let handedThrough = Watched(0)
    /// For each deferred request, the highest line the lane had been handed when it settled it.
    private(set) var highestLineAtRelease: [Int] = []
    /// Deferred requests still waiting when `finish()` came (their wait did not end by itself).
    private(set) var releasedAtFinish = 0
    private(set) var received = 0
    /// Bodies handed over, when `keepBodies` (to check what the encoder produced).
    private(set) var bodies: [String] = []
    private let keepBodies: Bool

    /// Awaited at the start of each `send` (a lane that is full: `send` suspends).
    private let sendGate: (@Sendable () async -> Void)?

    init(
        provider: Provider, stopAfter: Int? = nil, stopMessage: String = "", keepBodies: Bool = false,
        sendGate: (@Sendable () async -> Void)? = nil, script: @escaping @Sendable (OutgoingRequest) -> Step
    ) {
        self.provider = provider
        self.sendGate = sendGate
        self.script = script
        self.stopAfter = stopAfter
        self.stopMessage = stopMessage
        self.keepBodies = keepBodies
        laneReport = LaneReport(provider: provider)
    }

    func send(_ requests: [OutgoingRequest]) async {
        if let sendGate { await sendGate() }
        var out: [SendEvent] = []
        for request in requests {
            received += 1
            highestLine = max(highestLine, request.entry.line)
            if keepBodies { bodies.append(request.bytes.string(request.entry.body)) }
            if stopped {
                out.append(settled(request, .failed(reason: "provider_stopped", httpStatus: 0, attempts: 0), deferred: false, sent: false))
                continue
            }
            if draining {
                drainedUnsent += 1
                out.append(settled(request, .unsent(attempts: 0, possibleDuplicate: false), deferred: false, sent: false))
                continue
            }
            switch script(request) {
            case .settle(let outcome):
                out.append(settled(request, outcome, deferred: false, sent: true))
            case .slow(let outcome, let delay):
                pending += 1
                inFlight[request.tag] = request
                Task {
                    try? await Task.sleep(for: delay)
                    self.completeSlow(request, outcome)
                }
            case .deferUntilLine(let line, let outcome):
                pending += 1
                laneReport.retries += 1
                out.append(.deferred(tag: request.tag, line: request.entry.line))
                waiting.append((line, request.detached(), outcome))
            }
        }
        out += releaseWaiting(all: false)
        if !out.isEmpty { events.yield(out) }
    }

    private func completeSlow(_ request: OutgoingRequest, _ outcome: DeliveryOutcome) {
        // Cancelled meanwhile: already settled.
        guard inFlight.removeValue(forKey: request.tag) != nil else { return }
        pending -= 1
        events.yield([settled(request, outcome, deferred: false, sent: true)])
        endIfDone()
    }

    private func releaseWaiting(all: Bool) -> [SendEvent] {
        var out: [SendEvent] = []
        waiting.removeAll { item in
            guard all || highestLine >= item.line else { return false }
            pending -= 1
            highestLineAtRelease.append(highestLine)
            if all { releasedAtFinish += 1 }
            out.append(settled(item.request, item.outcome, deferred: true, sent: true))
            return true
        }
        return out
    }

    private func settled(_ request: OutgoingRequest, _ outcome: DeliveryOutcome, deferred: Bool, sent: Bool) -> SendEvent {
        if sent {
            laneReport.attempts += max(1, outcome.attempts)
            settledSent += 1
        }
        if sent, let stopAfter, !stopped, settledSent >= stopAfter {
            stopped = true
            laneReport.stoppedBecause = stopMessage
        }
        return .settled(SettledRequest(request: request, provider: provider, outcome: outcome, latency: sent ? .milliseconds(request.entry.line) : nil, wasDeferred: deferred))
    }

    func run() async {}

    func finish() async {
        finishing = true
        let out = releaseWaiting(all: true)
        if !out.isEmpty { events.yield(out) }
        endIfDone()
    }

    /// Like a sender's drain: the "retry queue" settles as unsent now (one attempt made, as a
    /// deferred request had), later requests at once; slow ones (in flight) still get their outcome.
    func drain() async {
        guard !draining else { return }
        draining = true
        let out = waiting.map { settled($0.request, .unsent(attempts: 1, possibleDuplicate: false), deferred: true, sent: false) }
        drainedUnsent += waiting.count
        pending -= waiting.count
        waiting = []
        if !out.isEmpty { events.yield(out) }
        endIfDone()
    }

    /// Like a sender's cancel, with or without a drain before: the "retry queue" settles unsent
    /// after its one attempt, what is in flight unsent and possibly delivered; later requests
    /// unsent at once. A cancel never fails a request.
    func cancel() async {
        finishing = true
        draining = true
        var out = waiting.map { settled($0.request, .unsent(attempts: 1, possibleDuplicate: false), deferred: true, sent: false) }
        pending -= waiting.count
        waiting = []
        // In flight, cancelled after it may have reached the provider, as a sender settles it.
        for request in inFlight.values.sorted(by: { $0.tag < $1.tag }) {
            out.append(settled(request, .unsent(attempts: 1, possibleDuplicate: true), deferred: false, sent: false))
        }
        pending -= inFlight.count
        inFlight = [:]
        if !out.isEmpty { events.yield(out) }
        endIfDone()
    }

    private func endIfDone() {
        if finishing && pending == 0 { events.finish() }
    }

    /// Scripted outcomes put nothing on a wire: no log to keep.
    nonisolated func recordWireSends(to log: any WireLog) -> Bool { false }

    func report() async -> LaneReport {
        var report = laneReport
        report.finalRatePerSecond = 1000
        return report
    }
}

/// Credentials for building `ProviderSendConfiguration`s in tests (the scripted lanes ignore them).
enum TestCredentials {
    static let emulator: EmulatorCredentials = try! EmulatorCredentials.generate(projectID: "demo")

    static func configuration(_ provider: Provider) throws -> ProviderSendConfiguration {
        let settings = SenderSettings(connections: 1, streamsPerConnection: 10, rate: try SendRate(perSecond: 1000), retry: RetryPolicy())
        switch provider {
        case .apns:
            let key = try APNsSigningKey(privateKey: emulator.apnsPrivateKey, keyID: emulator.keyID, teamID: emulator.teamID)
            return ProviderSendConfiguration(provider: .apns, credentials: .apns(key), settings: settings)
        default:
            let account = try FCMServiceAccount(json: Array(emulator.serviceAccountJSON(tokenURI: "https://127.0.0.1:1/token").utf8), path: "test-account.json")
            return ProviderSendConfiguration(provider: provider, credentials: .fcm(account), settings: settings)
        }
    }
}
