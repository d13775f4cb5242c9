import Crypto
import Foundation
import PushlineCore
@testable import PushlineDelivery
import PushlineHostileServer
import Testing

/// Issue 35, items 2, 3 and 6: a whole APNs lane against the hostile server, one scenario each,
/// and the lane's account held device by device against what the server received and did:
///
/// - every device has exactly one outcome;
/// - the copies the server received for a device equal the attempts reported for it;
/// - no device the server answered 2xx (an answer the client could read) is reported failed;
/// - no copy after two that may have been processed (a "third copy");
/// - `possible_duplicate` exactly on the devices the server may have processed twice: a sent
///   device is marked when at least two of its copies may have been processed, a failed one
///   when at least one may have (refused copies and readable non-2xx answers were certainly
///   not processed; copies answered 2xx, reset, left unanswered or answered unreadably may have
///   been).
///
/// Each scenario runs on both engines. libcurl 7.88 cannot keep some of these (it resends by
/// itself, cannot see a GOAWAY's last-stream-id, fails a whole connection on a header it cannot
/// take): those checks are known issues for `.curl` only, each with the reason; `.nghttp2` must
/// keep them all.
@Suite("Hostile scenarios, device by device", .timeLimit(.minutes(3)))
struct HostileScenarioTests {
    // MARK: Connection faults

    /// GOAWAY with a last-stream-id below streams in flight, on the first three connections:
    /// the streams above it were never processed, so their resends carry no mark.
    @Test(arguments: TransportEngine.allCases)
    func goawayBelowStreamsInFlight(engine: TransportEngine) async throws {
        let scenario = try await HostileScenario.run(
            HostilePlan(fault: .goaway(streams: 40, answered: 15), hostileConnections: 3, maxConcurrentStreams: 40, warmUp: 1), engine: engine
        )
        #expect(scenario.counts.unprocessed > 0, "the server refused nothing: the scenario did not happen")
        scenario.expectAccount(curlKnownIssues: [
            .marks: "libcurl 7.88 does not report a GOAWAY and resends the streams above its last-stream-id itself: the lane marks them",
        ])
        // Nothing was lost: a refused copy is resent, so every device is delivered.
        scenario.expectDevices("sent", where: { _ in true }) { $0.outcome?.kind == .sent }
    }

    /// RST_STREAM REFUSED_STREAM on every 7th request of the first three connections, and the
    /// first two copies of every 25th device refused wherever they arrive: provably not
    /// processed, resent without a mark.
    @Test(arguments: TransportEngine.allCases)
    func refusedStreams(engine: TransportEngine) async throws {
        let twiceRefused = Set(stride(from: 5, to: HostileScenario.devices, by: 25))
        let scenario = try await HostileScenario.run(
            HostilePlan(
                fault: .refuseEvery(7), hostileConnections: 3,
                rules: [HostileRule(.tokens(HostileScenario.tokens(twiceRefused)), arrivals: 1...2, .refuse)]
            ),
            engine: engine
        )
        #expect(scenario.counts.unprocessed > 0)
        let curlResends = "libcurl 7.88 resends a refused stream itself and cannot tell that resend from one after a lost connection: the lane marks it"
        scenario.expectAccount(curlKnownIssues: [.marks: curlResends])
        scenario.expectDevices("sent", where: { _ in true }) { $0.outcome?.kind == .sent }
        scenario.expectDevices("refused at least twice, then answered, unmarked", where: { twiceRefused.contains($0.tag) }, curl: curlResends) {
            $0.answers.count >= 3 && $0.answers.last == .status(200) && $0.answers.dropLast().allSatisfy { $0 == .refused }
                && $0.outcome?.possibleDuplicate == false
        }
    }

    /// RST_STREAM INTERNAL_ERROR once the whole request arrived: the first copy of every 10th
    /// device (resent once, marked, then answered), and every copy of every 50th (given up
    /// after its second, marked: a third is never risked).
    @Test(arguments: TransportEngine.allCases)
    func resetsAfterTheRequestArrived(engine: TransportEngine) async throws {
        let resetOnce = Set(stride(from: 3, to: HostileScenario.devices, by: 10)).subtracting(stride(from: 3, to: HostileScenario.devices, by: 50))
        let resetAlways = Set(stride(from: 3, to: HostileScenario.devices, by: 50))
        let scenario = try await HostileScenario.run(
            HostilePlan(rules: [
                HostileRule(.tokens(HostileScenario.tokens(resetAlways)), .reset(errorCode: 0x2)),
                HostileRule(.tokens(HostileScenario.tokens(resetOnce)), arrivals: 1...1, .reset(errorCode: 0x2)),
            ]),
            engine: engine
        )
        scenario.expectAccount()
        scenario.expectDevices("reset once: resent once, marked, sent", where: { resetOnce.contains($0.tag) }) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == true && $0.answers.count == 2
        }
        scenario.expectDevices("reset on every copy: failed after two copies, marked", where: { resetAlways.contains($0.tag) }) {
            $0.outcome?.kind == .failed && $0.outcome?.possibleDuplicate == true && $0.answers.count == 2
        }
        scenario.expectDevices("untouched: sent once, unmarked", where: { !resetOnce.contains($0.tag) && !resetAlways.contains($0.tag) }) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == false && $0.answers == [.status(200)]
        }
    }

    /// The first three connections: once 40 requests are open, 15 are answered, the server
    /// reads (without answering) for a second, then drops the TCP connection with the other
    /// streams open. Those may have been processed: resent at most once, marked.
    @Test(arguments: TransportEngine.allCases)
    func connectionDropsMidStream(engine: TransportEngine) async throws {
        let scenario = try await HostileScenario.run(
            HostilePlan(
                fault: .dropAfterReading(streams: 40, answered: 15, quietMilliseconds: 1_000), hostileConnections: 3, maxConcurrentStreams: 40,
                warmUp: 1
            ),
            engine: engine
        )
        #expect(scenario.counts.connections >= 4)
        // libcurl 7.88 keeps these too (every run so far) on a drop that comes after the server
        // read every request written to the connection.
        scenario.expectAccount()
        // A device fails only when two of its copies were lost with their connections.
        scenario.expectDevices("failed only after two lost copies", where: { $0.outcome?.kind != .sent }, tagged: false) {
            $0.answers.filter(\.mayHaveBeenProcessed).count == 2 && $0.outcome?.reasonCode == "no_response_after_resend"
        }
    }

    // MARK: Answers a client cannot take

    /// A 100 KB response header on every copy of three devices: HPACK cannot decode it, so each
    /// answer kills its connection with every stream on it (RFC 9113 §4.3). Only the streams
    /// lost with it are resent, once and marked; the poisoned devices fail (marked: the server
    /// processed them) after a bounded number of connections, never taking a device through a
    /// third copy.
    @Test(arguments: TransportEngine.allCases)
    func oversizedHeaderOnSomeTokens(engine: TransportEngine) async throws {
        let poisoned: Set = [60, 200, 330]
        let scenario = try await HostileScenario.run(
            HostilePlan(maxConcurrentStreams: 40, rules: [HostileRule(.tokens(HostileScenario.tokens(poisoned)), .oversizedHeader())]), engine: engine
        )
        #expect(scenario.counts.connections >= 2)
        let curlResends = "libcurl 7.88 fails the connection and silently resends every unanswered stream on a new one, the poisoned one included"
        scenario.expectAccount(curlKnownIssues: [
            .noThirdCopy: curlResends, .answeredNotFailed: curlResends, .marks: curlResends, .attempts: curlResends,
        ])
        scenario.expectDevices("poisoned: failed, marked, with a reason of its own", where: { poisoned.contains($0.tag) }, curl: curlResends) {
            $0.outcome?.kind == .failed && $0.outcome?.possibleDuplicate == true
                && !["no_response_after_resend", "retries_exhausted"].contains($0.outcome?.reasonCode ?? "")
        }
        scenario.expectDevices(
            "failed only after two lost copies", where: { !poisoned.contains($0.tag) && $0.outcome?.kind != .sent }, tagged: false, curl: curlResends
        ) {
            $0.answers.filter(\.mayHaveBeenProcessed).count == 2 && $0.outcome?.reasonCode == "no_response_after_resend"
        }
    }

    /// The same poisoned devices, on a server that ignores the client's GOAWAY and never
    /// closes a connection: the client must close the session it ended itself (and its
    /// requests' timeouts still run), or the lane hangs.
    @Test(arguments: TransportEngine.allCases)
    func oversizedHeaderOnAServerThatNeverCloses(engine: TransportEngine) async throws {
        let poisoned: Set = [60, 200, 330]
        var plan = HostilePlan(maxConcurrentStreams: 40, rules: [HostileRule(.tokens(HostileScenario.tokens(poisoned)), .oversizedHeader())])
        plan.closesOnClientError = false
        // libcurl waits out its own timers before it gives a dead connection up (about 25 s on
        // an idle machine, more on a loaded one).
        let scenario = try await HostileScenario.run(plan, engine: engine, timeout: engine == .curl ? .seconds(150) : .seconds(45))
        let curlResends = "libcurl 7.88 fails the connection and silently resends every unanswered stream on a new one, the poisoned one included"
        scenario.expectAccount(curlKnownIssues: [
            .noThirdCopy: curlResends, .answeredNotFailed: curlResends, .marks: curlResends, .attempts: curlResends,
        ])
        scenario.expectDevices("poisoned: failed, marked", where: { poisoned.contains($0.tag) }, curl: curlResends) {
            $0.outcome?.kind == .failed && $0.outcome?.possibleDuplicate == true
        }
    }

    /// A 200 whose `x-malformed` header value holds a NUL, on every copy of eight devices: a
    /// malformed answer (RFC 9113 §8.2.1) is a stream error; the connection and every other
    /// device go on untouched.
    @Test(arguments: TransportEngine.allCases)
    func malformedHeaderOnSomeTokens(engine: TransportEngine) async throws {
        let poisoned = Set(stride(from: 17, to: HostileScenario.devices, by: 50))
        let scenario = try await HostileScenario.run(
            HostilePlan(rules: [HostileRule(.tokens(HostileScenario.tokens(poisoned)), .malformedHeader(byte: 0x00))]), engine: engine
        )
        scenario.expectAccount()
        scenario.expectDevices("poisoned: failed, marked", where: { poisoned.contains($0.tag) }) {
            $0.outcome?.kind == .failed && $0.outcome?.possibleDuplicate == true
        }
        scenario.expectDevices("untouched: sent once, unmarked", where: { !poisoned.contains($0.tag) }) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == false && $0.answers == [.status(200)]
        }
        #expect(scenario.counts.connections == 1)
    }

    /// A 200 whose header list passes the client's SETTINGS_MAX_HEADER_LIST_SIZE, on every copy
    /// of eight devices: the stream alone is rejected, the connection goes on. A client that
    /// advertises no limit is sent one over 64 KB and must read it (then the server counts it a
    /// readable 200, and the device must be sent).
    @Test(arguments: TransportEngine.allCases)
    func headerListOverTheClientsLimitOnSomeTokens(engine: TransportEngine) async throws {
        let poisoned = Set(stride(from: 23, to: HostileScenario.devices, by: 50))
        let scenario = try await HostileScenario.run(
            HostilePlan(rules: [HostileRule(.tokens(HostileScenario.tokens(poisoned)), .headerListOverClientLimit())]), engine: engine
        )
        scenario.expectAccount()
        // Seen once in a clean-clone CI run: device 273 answered 200 twice, sent and marked.
        let curlResends = "libcurl 7.88 now and then gives up reading a header list this large and silently resends the stream"
        scenario.expectDevices("poisoned: sent once if readable, else failed and marked", where: { poisoned.contains($0.tag) }, curl: curlResends) { device in
            device.answers == [.status(200)]
                ? device.outcome?.kind == .sent && device.outcome?.possibleDuplicate == false
                : device.outcome?.kind == .failed && device.outcome?.possibleDuplicate == true
        }
        scenario.expectDevices("untouched: sent once, unmarked", where: { !poisoned.contains($0.tag) }) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == false && $0.answers == [.status(200)]
        }
        #expect(scenario.counts.connections == 1)
    }

    /// A 503 whose `Retry-After` holds a control byte (0x01: not one RFC 9113 forbids, so the
    /// answer is well-formed) for the first copy of every 10th device: a definite "not
    /// delivered", the header ignored, resent without a mark.
    @Test(arguments: TransportEngine.allCases)
    func retryAfterWithAControlByte(engine: TransportEngine) async throws {
        let unavailable = Set(stride(from: 5, to: HostileScenario.devices, by: 10))
        let scenario = try await HostileScenario.run(
            HostilePlan(rules: [HostileRule(.tokens(HostileScenario.tokens(unavailable)), arrivals: 1...1, .status(503, retryAfter: "1\u{01}"))]),
            engine: engine
        )
        let curlNoAnswer = "libcurl 7.88 takes a 503 whose Retry-After holds a control byte for no answer: the resend is marked"
        scenario.expectAccount(curlKnownIssues: [.marks: curlNoAnswer])
        scenario.expectDevices("503 first: sent on the second copy, unmarked", where: { unavailable.contains($0.tag) }, curl: curlNoAnswer) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == false && $0.answers == [.status(503), .status(200)]
        }
        scenario.expectDevices("untouched: sent once, unmarked", where: { !unavailable.contains($0.tag) }) {
            $0.outcome?.kind == .sent && $0.outcome?.possibleDuplicate == false && $0.answers == [.status(200)]
        }
    }
}

/// A 45 s provider-wide outage, then recovery: with the default retry policy (5 attempts), the
/// budget must span the outage (the lane pauses and probes) instead of being spent in seconds.
/// Takes the outage plus the breaker's last pause (up to 30 s) of real time.
@Suite("Hostile scenarios: a 45 s outage", .timeLimit(.minutes(4)))
struct HostileOutageScenarioTests {
    enum Mode: String, CaseIterable, Sendable {
        /// Every answer 503 on the open connection.
        case everyAnswer503
        /// Nothing answered, the connections dropped, new ones refused.
        case connectionsRefused
    }

    @Test(arguments: TransportEngine.allCases, Mode.allCases)
    func outageThenRecovery(engine: TransportEngine, mode: Mode) async throws {
        let outage = switch mode {
        case .everyAnswer503: HostileOutage(afterAnswers: 100, duration: .seconds(45), status: 503)
        case .connectionsRefused: HostileOutage(afterAnswers: 100, duration: .seconds(45), status: nil, refusesConnections: true)
        }
        let started = ContinuousClock.now
        let scenario = try await HostileScenario.run(
            HostilePlan(outage: outage), engine: engine, retry: RetryPolicy(), requestTimeout: .seconds(20), timeout: .seconds(200)
        )
        let took = ContinuousClock.now - started
        #expect(scenario.counts.outageStarted && scenario.counts.outageEnded)
        scenario.expectAccount()
        // The budget spans the outage: nobody gives up during it.
        scenario.expectDevices("sent", where: { _ in true }) { $0.outcome?.kind == .sent }
        #expect(took > .seconds(45), "the lane ended within the outage (\(took)): it gave its devices up")
        // It held back during the outage (a pause and probes), instead of every device spending
        // its attempts on it.
        #expect(scenario.counts.receivedDuringOutage < HostileScenario.devices / 2, "\(scenario.counts.receivedDuringOutage) requests during the outage")
    }
}

/// One scenario's run: the lane's outcomes and the server's counts.
struct HostileScenario {
    static let devices = 400
    static let key = try! APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "TEAM123456")
    static let quickRetry = RetryPolicy(maximumAttempts: 5, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50), maximumTotalTime: .seconds(120))

    static func token(_ tag: Int) -> String { TestCampaign.apnsToken(tag) }
    static func tokens(_ tags: Set<Int>) -> Set<String> { Set(tags.map(token)) }

    let engine: TransportEngine
    let run: LaneRun
    let counts: HostileCounts

    /// One device: what the lane said, what the server did with each copy.
    struct Device {
        let tag: Int
        let outcome: DeliveryOutcome?
        let answers: [HostileAnswer]

        var description: String {
            "\(tag): \(outcome.map { "\($0)" } ?? "no outcome"); server: \(answers)"
        }
    }

    var devices: [Device] {
        (0..<Self.devices).map { tag in
            Device(tag: tag, outcome: run.outcome(tag), answers: counts.answersByPath["/3/device/" + Self.token(tag)] ?? [])
        }
    }

    /// Runs `devices` APNs requests through one lane (one connection of 40 streams) on `engine`
    /// against a hostile server following `plan`.
    static func run(
        _ plan: HostilePlan, engine: TransportEngine, retry: RetryPolicy = quickRetry, requestTimeout: Duration = .seconds(20),
        timeout: Duration = .seconds(60)
    ) async throws -> HostileScenario {
        let server = try await HostileHTTP2Server.start(plan)
        var settings = SenderSettings(
            endpoint: server.baseURL, caFile: server.certificatePath, connections: 1, streamsPerConnection: 40,
            rate: try SendRate(parsing: "100000/s"), requestTimeout: requestTimeout, retry: retry
        )
        settings.transport = engine
        let lane: any DeliveryLane
        do {
            lane = try ProviderSenders.make(ProviderSendConfiguration(provider: .apns, credentials: .apns(key), settings: settings), routes: TestCampaign.routes)
        } catch {
            await server.stop()
            throw error
        }
        let requests = TestCampaign.requests(provider: .apns, tokens: (0..<devices).map(token))
        let run = await LaneDriver.run(lane, requests, timeout: timeout)
        let counts = server.counts
        await server.stop()
        let scenario = HostileScenario(engine: engine, run: run, counts: counts)
        if ProcessInfo.processInfo.environment["PUSHLINE_SCENARIO_TRACE"] != nil { scenario.trace() }
        return scenario
    }

    /// One line for the scenario, one per device that was not simply sent once.
    func trace() {
        let kinds = run.counts.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", ")
        let marked = run.settled.values.filter(\.outcome.possibleDuplicate).count
        print("scenario \(engine): \(kinds); marked \(marked); server: \(counts.connections) connections, \(counts.received) received")
        for device in devices where device.answers != [.status(200)] || device.outcome?.kind != .sent || device.outcome?.possibleDuplicate == true {
            print("scenario \(engine) device \(device.description)")
        }
    }

    enum Rule: String, CaseIterable, Sendable {
        case oneOutcome = "every device has exactly one outcome"
        case attempts = "the copies the server received equal the attempts reported"
        case answeredNotFailed = "no device the server answered 2xx is reported failed"
        case noThirdCopy = "no copy after two that may have been processed"
        case marks = "possible_duplicate exactly where the server may have processed a sent device twice (a failed one once)"
    }

    /// The devices that break each rule, described.
    func problems() -> [Rule: [String]] {
        var problems: [Rule: [String]] = [:]
        problems[.oneOutcome] = run.violations
        if run.settled.count != Self.devices { problems[.oneOutcome, default: []].append("\(run.settled.count) outcomes for \(Self.devices) devices") }
        for device in devices {
            guard let outcome = device.outcome else {
                problems[.oneOutcome, default: []].append("\(device.tag): no outcome")
                continue
            }
            if outcome.attempts != device.answers.count {
                problems[.attempts, default: []].append("\(device.description): \(outcome.attempts) attempts, \(device.answers.count) received")
            }
            if device.answers.contains(where: \.isReadableSuccess), outcome.kind == .failed {
                problems[.answeredNotFailed, default: []].append(device.description)
            }
            let processed = device.answers.indices.filter { device.answers[$0].mayHaveBeenProcessed }
            if processed.count >= 2, processed[1] < device.answers.count - 1 {
                problems[.noThirdCopy, default: []].append(device.description)
            }
            let expectMark = outcome.kind == .sent ? processed.count >= 2 : processed.count >= 1
            if [.sent, .failed, .unsent].contains(outcome.kind), outcome.possibleDuplicate != expectMark {
                problems[.marks, default: []].append("\(device.description): \(expectMark ? "not marked" : "marked")")
            }
        }
        if let report = run.report, report.attempts != counts.received {
            problems[.attempts, default: []].append("the report says \(report.attempts) attempts, the server received \(counts.received)")
        }
        return problems
    }

    /// Every rule holds; on libcurl, the rules in `curlKnownIssues` are known to break (why).
    func expectAccount(curlKnownIssues: [Rule: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) {
        let problems = problems()
        for rule in Rule.allCases {
            let found = problems[rule] ?? []
            check(found, rule.rawValue, curl: curlKnownIssues[rule], sourceLocation: sourceLocation)
        }
    }

    /// Every device `selected` satisfies `holds`; on libcurl a known issue when `curl` says why.
    /// `tagged`: the selection is made of tags known before the run (else an empty selection is
    /// fine: e.g. "the devices that failed").
    func expectDevices(
        _ what: String, where selected: (Device) -> Bool, tagged: Bool = true, curl: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ holds: (Device) -> Bool
    ) {
        let chosen = devices.filter(selected)
        if tagged { #expect(!chosen.isEmpty, "no device chosen for \(what)", sourceLocation: sourceLocation) }
        check(chosen.filter { !holds($0) }.map(\.description), what, curl: curl, sourceLocation: sourceLocation)
    }

    private func check(_ found: [String], _ what: String, curl knownIssue: String?, sourceLocation: SourceLocation) {
        let expectation = {
            #expect(found.isEmpty, "\(engine): \(what): \(found.count) broken, e.g. \(found.prefix(4))", sourceLocation: sourceLocation)
        }
        if engine == .curl, let knownIssue {
            // Whether libcurl breaks it in a given run depends on timing: intermittent.
            withKnownIssue(Comment(rawValue: knownIssue), isIntermittent: true, sourceLocation: sourceLocation) { expectation() }
        } else {
            expectation()
        }
    }
}
