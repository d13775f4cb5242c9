import Crypto
import PushlineCore
@testable import PushlineDelivery
import Testing

/// Drives a `LaneStateMachine` by hand: instants of its own (no clock, no sleeping), answers
/// written here, the actions it asks for carried out the way `LaneRunner` does.
struct LaneMachineDriver {
    var machine: LaneStateMachine
    var now = DeliveryInstant(nanoseconds: 1_000_000_000_000)
    var unixTime: Int64 = 1_800_000_000
    /// Transfers started and not yet answered, in order.
    var inFlight: [TransportRequest] = []
    /// Every transfer ever started, by request tag (what "the server received").
    var sendsByTag: [UInt64: Int] = [:]
    var slotTag: [UInt64: UInt64] = [:]
    var settled: [UInt64: SettledRequest] = [:]
    var settleCount: [UInt64: Int] = [:]
    var deferred: Set<UInt64> = []
    var notices: [String] = []
    var wakeAt: DeliveryInstant?
    var hasRoom = true
    var ended = false
    /// Credential requests not yet answered (answered at once when `autoCredential`).
    var credentialAsked = 0
    var autoCredential = true
    var verdictsAsked: [(check: UInt64, credential: LaneCredential)] = []
    let credential: LaneCredential
    let requests: [OutgoingRequest]
    let tagByToken: [String: UInt64]

    static let key: APNsSigningKey = try! APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "TEAM123456")

    init(
        provider: Provider = .apns, count: Int = 10, connections: Int = 1, streams: Int = 100, rate: String = "100000/s",
        retry: RetryPolicy = RetryPolicy(maximumAttempts: 5, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(60), maximumTotalTime: .seconds(600))
    ) {
        let settings = SenderSettings(
            endpoint: "https://127.0.0.1:8443", connections: connections, streamsPerConnection: streams,
            rate: try! SendRate(parsing: rate), requestTimeout: .seconds(30), retry: retry
        )
        machine = LaneStateMachine(
            provider: provider, settings: settings,
            routes: LaneRoutes(table: TestCampaign.routes, provider: provider, endpoint: settings.endpoint),
            identity: "key id KEY1234567, team id TEAM123456", seed: 42, now: now
        )
        let tokens = (0..<count).map { provider == .apns ? TestCampaign.apnsToken($0) : TestCampaign.fcmToken($0) }
        requests = TestCampaign.requests(provider: provider, tokens: tokens)
        tagByToken = Dictionary(uniqueKeysWithValues: tokens.enumerated().map { ($1, UInt64($0)) })
        let source = APNsProviderTokenSource(key: Self.key, clock: FixedClock())
        credential = .apns(try! source.token())
    }

    // MARK: Events

    mutating func offerAll() {
        let (taken, actions) = machine.offer(requests[...], now: now)
        precondition(taken == requests.count, "offerAll: only \(taken) taken")
        apply(actions)
    }

    @discardableResult
    mutating func offer(_ slice: ArraySlice<OutgoingRequest>) -> Int {
        let (taken, actions) = machine.offer(slice, now: now)
        apply(actions)
        return taken
    }

    mutating func advance(by duration: Duration) {
        now = now.advanced(by: duration)
        unixTime += Int64(duration.components.seconds)
        apply(machine.timerFired(now: now))
    }

    /// Moves to the instant the machine asked to be woken at.
    mutating func wake() {
        guard let at = wakeAt else { Issue.record("no wake-up was asked for"); return }
        let step = at.duration(since: now)
        now = at
        unixTime += Int64(step.components.seconds)
        apply(machine.timerFired(now: now))
    }

    /// Wakes at each instant asked for until `count` transfers are in flight (at most 100 wakes).
    mutating func wake(untilInFlight count: Int) {
        var wakes = 0
        while inFlight.count < count, wakeAt != nil, wakes < 100 {
            wake()
            wakes += 1
        }
    }

    mutating func giveCredential() {
        credentialAsked -= 1
        apply(machine.credentialReady(credential, now: now))
    }

    /// Answers the first in-flight transfer whose request has `tag` (or the oldest one).
    mutating func answer(
        tag: UInt64? = nil, status: Int, body: String = "", bodyTruncatedAt: Int? = nil, retryAfter: String? = nil, apnsID: String? = nil,
        result: TransportResult = .response, wireSends: Int? = nil, provenUnprocessed: Bool = false,
        mayHaveBeenDelivered: Bool? = nil, failure: TransportFailure.Kind? = nil, end: TransportStreamEnd? = nil
    ) {
        guard let index = tag.map({ t in inFlight.firstIndex { slotTag[$0.slot] == t } }) ?? (inFlight.isEmpty ? nil : 0) else {
            Issue.record("nothing in flight for tag \(String(describing: tag))")
            return
        }
        let transfer = inFlight.remove(at: index)
        let completion = LaneStateMachine.Completion(
            slot: transfer.slot, result: result, status: status, body: Array(body.utf8), bodyTruncatedAt: bodyTruncatedAt,
            messageID: apnsID.map { Array($0.utf8) },
            retryAfter: retryAfter.map { Array($0.utf8) }, failure: failure, curlErrorDescription: "curl said no",
            mayHaveBeenDelivered: mayHaveBeenDelivered, wireSends: wireSends, provenUnprocessed: provenUnprocessed, end: end
        )
        if let sends = wireSends, sends > 1 { sendsByTag[slotTag[transfer.slot]!, default: 0] += sends - 1 }
        apply(machine.completed([completion], now: now, unixTime: unixTime))
    }

    mutating func answerAll(status: Int, body: String = "") {
        while !inFlight.isEmpty { answer(status: status, body: body) }
    }

    mutating func apply(_ actions: LaneStateMachine.Actions) {
        for event in actions.events {
            switch event {
            case .deferred(let tag, _):
                if settled[tag] != nil { Issue.record("tag \(tag) deferred after it settled") }
                deferred.insert(tag)
            case .settled(let request):
                settleCount[request.request.tag, default: 0] += 1
                if settleCount[request.request.tag]! > 1 { Issue.record("tag \(request.request.tag) settled twice") }
                settled[request.request.tag] = request
            }
        }
        notices += actions.notices
        for transfer in actions.transfers {
            // The tag of the request behind the slot, from its token: the URL's last segment
            // (APNs) or the body's `"token":"…"` (FCM).
            let token: String
            if transfer.url.hasSuffix("messages:send") {
                let body = String(decoding: transfer.body, as: UTF8.self)
                token = String(body.split(separator: "\"token\":\"", maxSplits: 1)[1].prefix { $0 != "\"" })
            } else {
                token = String(transfer.url.split(separator: "/").last!)
            }
            let tag = tagByToken[token]!
            slotTag[transfer.slot] = tag
            sendsByTag[tag, default: 0] += 1
            inFlight.append(transfer)
        }
        wakeAt = actions.wakeAt
        hasRoom = actions.hasRoom
        if actions.ended {
            if ended { Issue.record("ended twice") }
            ended = true
        }
        verdictsAsked += actions.rejectedCredentials
        if actions.fetchCredential {
            credentialAsked += 1
            if autoCredential { giveCredential() }
        }
    }

    func outcome(_ tag: Int) -> DeliveryOutcome? { settled[UInt64(tag)]?.outcome }
    var allSettled: Bool { settled.count == requests.count }
}

/// A clock for signing test tokens; the machine itself reads no clock.
struct FixedClock: DeliveryClock {
    func now() -> DeliveryInstant { DeliveryInstant(nanoseconds: 1_000_000_000_000) }
    func unixTime() -> Int64 { 1_800_000_000 }
}

@Suite("Lane state machine")
struct LaneStateMachineTests {
    static let quota = #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}"#

    @Test("warm-up: one request until the first answer, then the window opens to connections × streams")
    func warmUp() {
        var lane = LaneMachineDriver(count: 300, connections: 2, streams: 50)
        lane.offerAll()
        #expect(lane.inFlight.count == 1)
        lane.answer(status: 200, apnsID: "A-0")
        // 100 in flight: the limit, not the batch size (256), holds it.
        #expect(lane.inFlight.count == 100)
        #expect(lane.outcome(0) == .sent(providerID: "A-0", attempts: 1))
        lane.answerAll(status: 200)
        lane.answerAll(status: 200)
        lane.answerAll(status: 200)
        #expect(lane.settled.count == 300)
        #expect(!lane.ended)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.ended)
        #expect(lane.machine.wireSends == 300)
    }

    @Test("APNs rows of PROVIDERS.md: 200 sent, 410 and BadDeviceToken invalid tokens, 400 and 413 permanent failures")
    func apnsRows() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(tag: 0, status: 200, apnsID: "id-0")
        lane.answer(tag: 1, status: 410, body: #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        lane.answer(tag: 2, status: 400, body: #"{"reason":"BadDeviceToken"}"#)
        lane.answer(tag: 3, status: 400, body: #"{"reason":"BadCollapseId"}"#)
        lane.answer(tag: 4, status: 413, body: #"{"reason":"PayloadTooLarge"}"#)
        #expect(lane.outcome(0) == .sent(providerID: "id-0", attempts: 1))
        #expect(lane.outcome(1) == .invalidToken(reason: "Unregistered", timestamp: 1_700_000_000_000))
        #expect(lane.outcome(2)?.kind == .invalidToken)
        #expect(lane.outcome(3) == .failed(reason: "BadCollapseId", httpStatus: 400, attempts: 1))
        #expect(lane.outcome(4) == .failed(reason: "PayloadTooLarge", httpStatus: 413, attempts: 1))
        #expect(lane.machine.stoppedBecause == nil)
    }

    @Test("a body the transport cut is not parsed: a 400 whose cut body starts like BadDeviceToken is a permanent failure, not an invalid token")
    func truncatedBodies() {
        var lane = LaneMachineDriver(count: 2)
        lane.offerAll()
        lane.answer(status: 200)
        lane.answer(status: 400, body: #"{"reason":"BadDeviceToken""#, bodyTruncatedAt: 26)
        #expect(lane.outcome(1)?.kind == .failed)
        #expect(lane.outcome(1)?.httpStatus == 400)
    }

    @Test("a configuration error (403 InvalidProviderToken) stops the provider: what waits fails provider_stopped, later offers at once, in-flight answers still count")
    func configurationErrorStops() {
        var lane = LaneMachineDriver(count: 20, connections: 1, streams: 4)
        lane.offer(lane.requests[0..<10])
        lane.answer(status: 200)
        #expect(lane.inFlight.count == 4)
        lane.answer(status: 403, body: #"{"reason":"InvalidProviderToken"}"#)
        let message = lane.machine.stoppedBecause ?? ""
        #expect(message.contains("InvalidProviderToken"))
        #expect(message.contains("KEY1234567"))
        #expect(lane.notices.contains { $0.contains("stopped") })
        // The five still queued failed at once; three in flight wait for their answers.
        #expect((5..<10).allSatisfy { lane.outcome($0) == .failed(reason: "provider_stopped", httpStatus: 0, attempts: 0) })
        #expect(lane.inFlight.count == 3)
        lane.answerAll(status: 200)
        #expect((2..<5).allSatisfy { lane.outcome($0)?.kind == .sent })
        lane.offer(lane.requests[10...])
        #expect((10..<20).allSatisfy { lane.outcome($0)?.reasonCode == "provider_stopped" })
        #expect(lane.inFlight.isEmpty)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.ended)
    }

    @Test("403 ExpiredProviderToken: nothing else starts while the credential is judged; resend → sent with two attempts")
    func expiredProviderToken() {
        var lane = LaneMachineDriver(count: 3)
        lane.offerAll()
        lane.answer(status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
        #expect(lane.verdictsAsked.count == 1)
        // Still warming, and the credential is in question: nothing in flight.
        #expect(lane.inFlight.isEmpty)
        lane.apply(lane.machine.refreshDecided(check: lane.verdictsAsked[0].check, .resend, now: lane.now))
        #expect(lane.inFlight.count == 1)
        lane.answer(tag: 0, status: 200)
        #expect(lane.outcome(0) == .sent(providerID: nil, attempts: 2))
        lane.answerAll(status: 200)
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 1))
        #expect(lane.sendsByTag[1] == 1)
    }

    @Test("a refused credential judged hopeless stops the provider with the authenticator's message")
    func refreshStops() {
        var lane = LaneMachineDriver(count: 3)
        lane.offerAll()
        lane.answer(status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
        lane.apply(lane.machine.refreshDecided(check: lane.verdictsAsked[0].check, .stop("check the system clock"), now: lane.now))
        #expect(lane.machine.stoppedBecause?.contains("check the system clock") == true)
        #expect(lane.outcome(0)?.reasonCode == "ExpiredProviderToken")
        #expect(lane.outcome(1)?.reasonCode == "provider_stopped")
        #expect(lane.sendsByTag.values.reduce(0, +) == 1)
    }

    @Test("503 with Retry-After: that request is deferred, the lane pauses until then (said once), then it and the rest go")
    func retryAfterPauses() {
        var lane = LaneMachineDriver(count: 4)
        lane.offerAll()
        lane.answer(status: 200)
        lane.answer(tag: 1, status: 503, body: #"{"reason":"ServiceUnavailable"}"#, retryAfter: "5")
        lane.answer(tag: 2, status: 503, body: #"{"reason":"ServiceUnavailable"}"#, retryAfter: "5")
        #expect(lane.deferred == [1, 2])
        #expect(lane.notices.filter { $0.contains("pausing") }.count == 1)
        #expect(lane.machine.pauses == 1)
        lane.answerAll(status: 200)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.inFlight.isEmpty)
        let start = lane.now
        lane.wake()
        #expect(lane.now.duration(since: start) >= .seconds(5))
        // The bucket restarts from one request at the pause's end: the second follows at the rate.
        lane.wake(untilInFlight: 2)
        #expect(lane.inFlight.count == 2)
        lane.answerAll(status: 200)
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 2))
        #expect(lane.ended)
    }

    @Test("a Retry-After past the request's budget fails that request at once and neither pauses nor stops the lane")
    func hugeRetryAfter() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(status: 200)
        lane.answer(tag: 1, status: 503, body: #"{"reason":"ServiceUnavailable"}"#, retryAfter: "1000000000000")
        #expect(lane.outcome(1) == .failed(reason: "retry_deadline_exceeded", httpStatus: 503, attempts: 1))
        #expect(lane.machine.pauses == 0)
        #expect(lane.notices.contains { $0.contains("past the request's retry budget") })
        // The others were started without waiting.
        #expect(lane.inFlight.count == 3)
        lane.answerAll(status: 200)
        #expect(lane.settled.count == 5)
    }

    @Test("APNs 429 TooManyRequests delays only that device token: no slowdown, no pause, the others go on")
    func apnsTooManyRequestsIsPerDevice() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(status: 200)
        let rate = lane.machine.currentRate
        lane.answer(tag: 1, status: 429, body: #"{"reason":"TooManyRequests"}"#, retryAfter: "3")
        #expect(lane.deferred == [1])
        #expect(lane.machine.currentRate == rate)
        #expect(lane.machine.slowdowns == 0)
        #expect(lane.machine.pauses == 0)
        lane.answerAll(status: 200)
        #expect(lane.settled.count == 4)
        lane.wake()
        #expect(lane.inFlight.count == 1)
        lane.answerAll(status: 200)
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 2))
    }

    @Test("FCM 429 halves the rate (said once); QUOTA_EXCEEDED pauses the project at least 60 s")
    func fcmThrottles() {
        var lane = LaneMachineDriver(provider: .fcm, count: 6, rate: "1000/s")
        lane.offerAll()
        lane.answer(status: 200, body: #"{"name":"projects/p/messages/0"}"#)
        lane.answer(tag: 1, status: 429)
        #expect(lane.machine.currentRate == 500)
        #expect(lane.machine.slowdowns == 1)
        #expect(lane.notices.contains { $0.contains("slowing down") && $0.contains("429") })
        lane.answer(tag: 2, status: 429, body: Self.quota)
        #expect(lane.machine.pauses == 1)
        lane.answerAll(status: 200, body: #"{"name":"projects/p/messages/x"}"#)
        let start = lane.now
        // The retries come due before the pause ends; the pause holds them.
        lane.wake(untilInFlight: 1)
        #expect(lane.now.duration(since: start) >= .seconds(60))
        #expect(lane.inFlight.count >= 1)
    }

    @Test("timeouts after the warm-up slow the lane but never serialize it")
    func timeoutsDoNotSerialize() {
        var lane = LaneMachineDriver(count: 50, rate: "100000/s")
        lane.offerAll()
        lane.answer(status: 200)
        #expect(lane.inFlight.count == 49)
        for tag in 1...3 {
            lane.answer(tag: UInt64(tag), status: 0, result: .timedOut, mayHaveBeenDelivered: true)
        }
        #expect(lane.machine.slowdowns == 1)
        #expect(lane.notices.contains { $0.contains("no answer within") })
        // Still 46 in flight: a timeout does not make the others wait their turn.
        #expect(lane.inFlight.count == 46)
        lane.answerAll(status: 200)
        // The three retries start at the (halved) rate, none waiting for another's answer.
        lane.wake(untilInFlight: 3)
        #expect(lane.inFlight.count == 3)
        lane.answerAll(status: 200)
        #expect((1...3).allSatisfy { lane.outcome($0) == .sent(providerID: nil, attempts: 2, possibleDuplicate: true) })
    }

    @Test("no answer after the body may have been written: resent once and marked; a second such failure gives up")
    func ambiguousDelivery() {
        var lane = LaneMachineDriver(count: 2)
        lane.offerAll()
        lane.answer(status: 200)
        lane.answer(tag: 1, status: 0, result: .noResponse, mayHaveBeenDelivered: true)
        lane.wake()
        lane.answer(tag: 1, status: 0, result: .noResponse, mayHaveBeenDelivered: true)
        // Either copy may have been processed: the failed row says so.
        #expect(lane.outcome(1) == .failed(reason: "no_response_after_resend", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        #expect(lane.sendsByTag[1] == 2)
    }

    @Test("libcurl's own re-sends count as attempts and mark the request; a proven-unprocessed stream is resent unmarked")
    func wireSendsAndUnprocessed() {
        var lane = LaneMachineDriver(count: 4)
        lane.offerAll()
        lane.answer(status: 200)
        // Sent three times by libcurl (a dropped connection's streams go again), answered 200.
        lane.answer(tag: 1, status: 200, wireSends: 3)
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 3, possibleDuplicate: true))
        // Refused by the server (REFUSED_STREAM / above a GOAWAY's last-stream-id): safe.
        lane.answer(tag: 2, status: 0, result: .noResponse, provenUnprocessed: true, mayHaveBeenDelivered: true)
        // Re-sent by libcurl once, then lost: another copy is never risked.
        lane.answer(tag: 3, status: 0, result: .noResponse, wireSends: 2, mayHaveBeenDelivered: true)
        #expect(lane.outcome(3) == .failed(reason: "no_response_after_resend", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        lane.wake()
        lane.answerAll(status: 200)
        #expect(lane.outcome(2) == .sent(providerID: nil, attempts: 2, possibleDuplicate: false))
        // The attempts reported equal what the server received.
        let reported = lane.settled.values.map(\.outcome.attempts).reduce(0, +)
        #expect(reported == lane.sendsByTag.values.reduce(0, +))
        #expect(lane.machine.wireSends == reported)
    }

    @Test("a server that does not speak HTTP/2 (refused before anything was written) stops the provider, naming it")
    func notHTTP2Stops() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(status: 0, result: .notHTTP2, wireSends: 0, mayHaveBeenDelivered: false)
        #expect(lane.machine.stoppedBecause?.contains("stopping this provider") == true)
        #expect(lane.settled.values.allSatisfy { $0.outcome == .failed(reason: "provider_stopped", httpStatus: 0, attempts: 0) })
        #expect(lane.allSettled)
        #expect(lane.machine.wireSends == 0)
    }

    @Test("drain: what is queued or waiting for a retry settles unsent now, so does what is offered later; in-flight answers still count; the lane ends at finish")
    func drain() {
        var lane = LaneMachineDriver(count: 40, connections: 1, streams: 5)
        lane.offer(lane.requests[0..<30])
        lane.answer(status: 200)
        lane.answer(tag: 1, status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
        #expect(lane.inFlight.count == 5)
        lane.apply(lane.machine.drain(now: lane.now))
        #expect(lane.outcome(1) == .unsent(attempts: 1, possibleDuplicate: false))
        #expect(lane.settled.values.filter { $0.outcome.kind == .unsent }.count == 30 - 1 - 5)
        #expect(lane.settled.values.filter { $0.outcome.kind == .unsent && $0.outcome.attempts == 0 }.count == 30 - 2 - 5)
        // Offered after the drain (they were on their way): unsent at once, never sent.
        lane.offer(lane.requests[30...])
        #expect((30..<40).allSatisfy { lane.outcome($0) == .unsent(attempts: 0, possibleDuplicate: false) })
        lane.answer(status: 200)
        // A retryable answer is not retried while stopping: unsent, with its attempt.
        lane.answer(status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
        // No answer after it may have been written: unsent, and marked.
        lane.answer(status: 0, result: .noResponse, mayHaveBeenDelivered: true)
        #expect(lane.inFlight.count == 2)
        lane.answerAll(status: 200)
        #expect(lane.allSettled)
        #expect(lane.settled.values.filter { $0.outcome == .unsent(attempts: 1, possibleDuplicate: true) }.count == 1)
        #expect(lane.settled.values.filter { $0.outcome.kind == .sent }.count == 4)
        // Nothing new was started after the drain, and the lane waits for finish to end.
        #expect(lane.sendsByTag.count == 7)
        #expect(!lane.ended)
        #expect(lane.wakeAt == nil)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.ended)
    }

    @Test("a cancel after the drain: what is in flight settles unsent, marked when it may have reached the provider")
    func cancelAfterDrain() {
        var lane = LaneMachineDriver(count: 10, connections: 1, streams: 3)
        lane.offerAll()
        lane.answer(status: 200)
        lane.apply(lane.machine.drain(now: lane.now))
        lane.apply(lane.machine.cancel(now: lane.now))
        lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: true)
        lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: false)
        lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: true, failure: .other)
        #expect(lane.allSettled)
        #expect(lane.ended)
        #expect(lane.settled.values.filter { $0.outcome == .unsent(attempts: 1, possibleDuplicate: true) }.count == 2)
        #expect(lane.settled.values.filter { $0.outcome.kind == .unsent }.count == 9)
    }

    @Test("cancel without a drain: what waits settles unsent, never failed; in-flight completions cancelled after they may have been sent are marked")
    func cancel() {
        var lane = LaneMachineDriver(count: 10, connections: 1, streams: 2)
        lane.offerAll()
        lane.answer(status: 200)
        lane.apply(lane.machine.cancel(now: lane.now))
        #expect(lane.settled.count == 10 - 2)
        lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: true)
        lane.answer(status: 0, result: .cancelled, mayHaveBeenDelivered: false)
        #expect(lane.allSettled)
        #expect(lane.ended)
        #expect(lane.settled.values.filter { $0.outcome.kind == .unsent && $0.outcome.reasonCode == "run_stopped" }.count == 9)
        #expect(lane.settled.values.filter { $0.outcome == .unsent(attempts: 1, possibleDuplicate: true) }.count == 1)
        #expect(lane.settled.values.filter { $0.outcome == .unsent(attempts: 0, possibleDuplicate: false) }.count == 8)
    }

    @Test("finish waits for the retries before the lane ends")
    func finishWaitsForRetries() {
        var lane = LaneMachineDriver(count: 2)
        lane.offerAll()
        lane.answer(status: 200)
        lane.answer(status: 500, body: #"{"reason":"InternalServerError"}"#)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(!lane.ended)
        #expect(lane.wakeAt != nil)
        lane.wake()
        lane.answer(status: 200)
        #expect(lane.ended)
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 2))
    }

    @Test("bounded: offers take only what fits, and held requests never pass the capacity while retries pile up")
    func bounded() {
        var lane = LaneMachineDriver(count: 3000, connections: 1, streams: 10)
        let capacity = lane.machine.capacity
        #expect(capacity == LaneStateMachine.capacity(inFlight: 10))
        let taken = lane.offer(lane.requests[...])
        #expect(taken == capacity)
        #expect(!lane.hasRoom)
        lane.answer(status: 200)
        var offered = taken
        // Every answer a retry: the heap grows only by what leaves the flight.
        for _ in 0..<200 {
            while !lane.inFlight.isEmpty {
                lane.answer(status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
                #expect(lane.machine.held <= capacity)
            }
            if offered < lane.requests.count {
                offered += lane.offer(lane.requests[offered...])
            }
            #expect(lane.machine.held <= capacity)
            lane.advance(by: .seconds(1))
        }
        #expect(lane.machine.held <= capacity)
    }

    @Test("the rate paces starts: at 10/s with its burst of one, the next start waits 100 ms")
    func ratePaces() {
        var lane = LaneMachineDriver(count: 5, rate: "10/s")
        lane.offerAll()
        lane.answer(status: 200)
        #expect(lane.inFlight.count == 0)
        let start = lane.now
        lane.wake()
        #expect(lane.now.duration(since: start) == .milliseconds(100))
        #expect(lane.inFlight.count == 1)
    }

    @Test("the token endpoint failing: retried on the credential's own schedule, then the provider stops")
    func credentialFailures() {
        var lane = LaneMachineDriver(provider: .fcm, count: 3)
        lane.autoCredential = false
        lane.offerAll()
        #expect(lane.credentialAsked == 1)
        var tries = 0
        while lane.machine.stoppedBecause == nil, tries < 20 {
            lane.credentialAsked -= 1
            lane.apply(lane.machine.credentialFailed(.retryable("token endpoint answered 503"), now: lane.now, unixTime: lane.unixTime))
            tries += 1
            if lane.machine.stoppedBecause == nil { lane.wake() }
        }
        #expect(tries == LaneStateMachine.credentialRetryPolicy.maximumAttempts)
        #expect(lane.machine.stoppedBecause?.contains("token endpoint answered 503") == true)
        #expect(lane.settled.values.allSatisfy { $0.outcome.reasonCode == "provider_stopped" })
        #expect(lane.allSettled)
        #expect(lane.sendsByTag.isEmpty)
    }

    // MARK: How a stream ended (issue 35, item 3)

    /// Wakes at each instant asked for until a transfer of `tag` is in flight (at most 100 wakes).
    static func wake(_ lane: inout LaneMachineDriver, untilSending tag: UInt64) {
        var wakes = 0
        while !lane.inFlight.contains(where: { lane.slotTag[$0.slot] == tag }), lane.wakeAt != nil, wakes < 100 {
            lane.wake()
            wakes += 1
        }
        #expect(lane.inFlight.contains { lane.slotTag[$0.slot] == tag }, "tag \(tag) was not resent")
    }

    @Test("refused or never written: resent without a mark and without spending an attempt; past maximum_refusals it fails refusals_exhausted, unmarked")
    func refusalsSpendNoAttempts() {
        // Two attempts only: before, the second refusal failed the device (retries_exhausted).
        let retry = RetryPolicy(maximumAttempts: 2, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(60), maximumTotalTime: .seconds(600), maximumRefusals: 4)
        var lane = LaneMachineDriver(count: 4, retry: retry)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        lane.answer(tag: 2, status: 200)
        // Device 1: refused three times (REFUSED_STREAM, above a GOAWAY's last-stream-id), then
        // not written at all once (no connection), then answered.
        for _ in 0..<3 {
            lane.answer(tag: 1, status: 0, result: .noResponse, wireSends: 1, end: .refused)
            Self.wake(&lane, untilSending: 1)
        }
        lane.answer(tag: 1, status: 0, result: .failed, wireSends: 0, failure: .connect, end: .notSent)
        Self.wake(&lane, untilSending: 1)
        lane.answer(tag: 1, status: 200)
        // Its attempts are what reached the wire (three refused copies and the answered one);
        // none may have been processed twice, so it is not marked.
        #expect(lane.outcome(1) == .sent(providerID: nil, attempts: 4, possibleDuplicate: false))
        // Device 3: refused five times, one more than maximum_refusals allows.
        for round in 1...5 {
            lane.answer(tag: 3, status: 0, result: .noResponse, wireSends: 1, end: .refused)
            if round < 5 { Self.wake(&lane, untilSending: 3) }
        }
        #expect(lane.outcome(3) == .failed(reason: "refusals_exhausted", httpStatus: 0, attempts: 5, possibleDuplicate: false))
        #expect(LaneFailureReason.all.contains("refusals_exhausted"))
        #expect(lane.machine.wireSends == 1 + 1 + 4 + 5)
    }

    @Test("lost or reset unanswered: one more copy, marked; lost again it fails marked (no_response_after_resend); never a third copy")
    func lostGetsOneMoreCopy() {
        var lane = LaneMachineDriver(count: 4)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        lane.answer(tag: 1, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        lane.answer(tag: 2, status: 0, result: .noResponse, wireSends: 1, end: .resetByPeer(errorCode: 0x2))
        // The stream's end decides, whatever the older flags say (the engine knows it was reset).
        lane.answer(tag: 3, status: 0, result: .noResponse, wireSends: 1, mayHaveBeenDelivered: false, end: .resetByPeer(errorCode: 0x8))
        #expect(lane.deferred == [1, 2, 3])
        lane.wake(untilInFlight: 3)
        #expect(lane.inFlight.count == 3)
        lane.answer(tag: 1, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        lane.answer(tag: 2, status: 200)
        lane.answer(tag: 3, status: 0, result: .noResponse, wireSends: 1, end: .resetByPeer(errorCode: 0x2))
        #expect(lane.outcome(1) == .failed(reason: "no_response_after_resend", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        #expect(lane.outcome(2) == .sent(providerID: nil, attempts: 2, possibleDuplicate: true))
        #expect(lane.outcome(3) == .failed(reason: "no_response_after_resend", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        // Nothing is left to send: no third copy, however long the lane waits.
        lane.advance(by: .seconds(600))
        #expect(lane.inFlight.isEmpty)
        #expect(lane.sendsByTag.values.allSatisfy { $0 <= 2 })
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.ended)
    }

    @Test("an answer that broke a limit of ours, or its connection, fails that device at once with its own reason, marked; never resent")
    func rejectedAnswersFailAtOnce() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        lane.answer(tag: 1, status: 200, result: .failed, wireSends: 1, failure: .other, end: .answerRejected(.headerListTooLarge))
        // A 503 whose answer we rejected is not retried: the same answer would come again.
        lane.answer(tag: 2, status: 503, result: .failed, wireSends: 1, failure: .other, end: .answerRejected(.badHeaderBytes))
        lane.answer(tag: 3, status: 0, result: .failed, wireSends: 1, failure: .connectionLost, end: .answerBrokeConnection)
        lane.answer(tag: 4, status: 200)
        #expect(lane.outcome(1) == .failed(reason: "answer_rejected_header_list_too_large", httpStatus: 200, attempts: 1, possibleDuplicate: true))
        #expect(lane.outcome(2) == .failed(reason: "answer_rejected_bad_header_bytes", httpStatus: 503, attempts: 1, possibleDuplicate: true))
        #expect(lane.outcome(3) == .failed(reason: "answer_broke_connection", httpStatus: 0, attempts: 1, possibleDuplicate: true))
        #expect(lane.outcome(4) == .sent(providerID: nil, attempts: 1))
        #expect(lane.deferred.isEmpty)
        lane.advance(by: .seconds(60))
        #expect(lane.inFlight.isEmpty)
        #expect(lane.sendsByTag.values.allSatisfy { $0 == 1 })
        for reason in ["answer_rejected_header_list_too_large", "answer_rejected_body_too_large", "answer_rejected_bad_header_bytes", "answer_broke_connection"] {
            #expect(LaneFailureReason.all.contains(reason))
        }
    }

    @Test("every failed row after a copy that may have been processed is marked, only those; the run's counts call them possibly delivered")
    func failedRowsCarryTheMark() {
        var lane = LaneMachineDriver(count: 5)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        lane.answer(tag: 1, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        lane.answer(tag: 2, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        lane.answer(tag: 3, status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
        lane.answer(tag: 4, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        lane.wake(untilInFlight: 4)
        #expect(lane.inFlight.count == 4)
        // Lost, then a permanent answer: the lost copy may have been delivered.
        lane.answer(tag: 1, status: 400, body: #"{"reason":"BadCollapseId"}"#)
        // A definite 503, then a permanent answer: nothing may have been delivered.
        lane.answer(tag: 3, status: 400, body: #"{"reason":"BadCollapseId"}"#)
        // Lost, then a configuration error: the provider stops.
        lane.answer(tag: 2, status: 403, body: #"{"reason":"InvalidProviderToken"}"#)
        #expect(lane.machine.stoppedBecause != nil)
        // Lost, resent, and lost again after the provider stopped.
        lane.answer(tag: 4, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        #expect(lane.outcome(1) == .failed(reason: "BadCollapseId", httpStatus: 400, attempts: 2, possibleDuplicate: true))
        #expect(lane.outcome(2) == .failed(reason: "InvalidProviderToken", httpStatus: 403, attempts: 2, possibleDuplicate: true))
        #expect(lane.outcome(3) == .failed(reason: "BadCollapseId", httpStatus: 400, attempts: 2, possibleDuplicate: false))
        #expect(lane.outcome(4) == .failed(reason: "provider_stopped", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        // summary.json's devices.possibly_delivered: the failed devices that may have been notified.
        var counts = RunCounts()
        for request in lane.settled.values { counts.record(request.outcome, provider: .apns) }
        #expect(counts.possiblyDelivered == 3)
        #expect(counts.possibleDuplicates == 0)
        #expect(counts.failed["BadCollapseId"] == 2)
    }

    @Test("a credential refusal after a lost copy fails marked when the verdict stops the provider")
    func refreshStopAfterLostIsMarked() {
        var lane = LaneMachineDriver(count: 2)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        lane.answer(tag: 1, status: 0, result: .noResponse, wireSends: 1, end: .lost)
        Self.wake(&lane, untilSending: 1)
        lane.answer(tag: 1, status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
        lane.apply(lane.machine.refreshDecided(check: lane.verdictsAsked[0].check, .stop("check the system clock"), now: lane.now))
        #expect(lane.outcome(1) == .failed(reason: "ExpiredProviderToken", httpStatus: 403, attempts: 2, possibleDuplicate: true))
    }

    @Test("a 45 s provider-wide outage (every answer 503), then recovery: the lane pauses and probes, no device runs out of retries, every device is sent")
    func outageThenRecovery() {
        // Five attempts a device: without the breaker every device spent them within about 13 s.
        var lane = LaneMachineDriver(count: 200, connections: 1, streams: 50)
        let start = lane.now
        let recovery = start.advanced(by: .seconds(45))
        lane.offerAll()
        var sendsBeforeRecovery = 0
        var probesOverlapped = false
        var steps = 0
        while !lane.allSettled, steps < 20_000 {
            steps += 1
            if lane.inFlight.isEmpty {
                guard lane.wakeAt != nil else { break }
                lane.wake()
                continue
            }
            if lane.now < recovery { sendsBeforeRecovery = lane.sendsByTag.values.reduce(0, +) }
            // Half-open: one probe at a time (requests sent before the breaker opened are
            // answered at the instant it opened, so whatever is in flight now is a probe).
            if case .halfOpen = lane.machine.breaker.state, lane.inFlight.count > 1 { probesOverlapped = true }
            if lane.now < recovery {
                lane.answer(status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
            } else {
                lane.answer(status: 200)
            }
        }
        #expect(lane.allSettled)
        #expect(lane.settled.values.allSatisfy { $0.outcome.kind == .sent && !$0.outcome.possibleDuplicate })
        #expect(lane.now.duration(since: start) >= .seconds(45))
        #expect(lane.machine.breaker.outages == 1)
        #expect(lane.machine.breaker.state == .closed)
        #expect(!probesOverlapped)
        #expect(lane.notices.contains { $0.contains("provider-wide outage") })
        #expect(lane.notices.contains { $0.contains("outage over") })
        // The lane held still: the first window, the requests it took to see the outage, and a
        // probe per pause (1, 2, 4, 8, 16 s…) — not 200 devices × 5 attempts.
        #expect(sendsBeforeRecovery < 100)
        // Honest attempts: what each device reports is what went on the wire.
        let reported = lane.settled.values.map(\.outcome.attempts).reduce(0, +)
        #expect(reported == lane.sendsByTag.values.reduce(0, +))
        #expect(reported == lane.machine.wireSends)
        lane.apply(lane.machine.finish(now: lane.now))
        #expect(lane.ended)
    }

    @Test("a lane too small to judge an outage (fewer than 20 outcomes in 10 s) spends each device's retries as before")
    func smallLaneSpendsRetries() {
        var lane = LaneMachineDriver(count: 3)
        lane.offerAll()
        var steps = 0
        while !lane.allSettled, steps < 1_000 {
            steps += 1
            if lane.inFlight.isEmpty {
                guard lane.wakeAt != nil else { break }
                lane.wake()
                continue
            }
            lane.answer(status: 503, body: #"{"reason":"ServiceUnavailable"}"#)
        }
        #expect((0..<3).allSatisfy { lane.outcome($0) == .failed(reason: "retries_exhausted", httpStatus: 503, attempts: 5) })
        #expect(lane.machine.breaker.outages == 0)
    }

    @Test("lost copies during an outage still get at most one more copy: the breaker forgives attempts, not duplicates")
    func outageKeepsTheDuplicateRule() {
        var lane = LaneMachineDriver(count: 60, connections: 1, streams: 60)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        // Connection failures: 20 lost streams open the breaker.
        for tag in 1...20 { lane.answer(tag: UInt64(tag), status: 0, result: .noResponse, wireSends: 1, end: .lost) }
        #expect(lane.machine.breaker.holdsLane)
        let recovery = lane.now.advanced(by: .seconds(5))
        var steps = 0
        // Every copy is lost for 5 s (the requests in flight, then the probes); after that only
        // device 1's copies are.
        while lane.outcome(1) == nil, steps < 1_000 {
            steps += 1
            if let transfer = lane.inFlight.first {
                let lost = lane.slotTag[transfer.slot] == 1 || lane.now < recovery
                if lost {
                    lane.answer(status: 0, result: .noResponse, wireSends: 1, end: .lost)
                } else {
                    lane.answer(status: 200)
                }
            } else if lane.wakeAt != nil {
                lane.wake()
            } else {
                break
            }
        }
        #expect(lane.outcome(1) == .failed(reason: "no_response_after_resend", httpStatus: 0, attempts: 2, possibleDuplicate: true))
        #expect(lane.sendsByTag[1] == 2)
    }

    @Test("a 503 whose Retry-After holds a control byte is still a 503: the header is ignored, the backoff decides, nothing pauses")
    func badRetryAfterBytes() {
        var lane = LaneMachineDriver(count: 2)
        lane.offerAll()
        lane.answer(tag: 0, status: 200)
        let answeredAt = lane.now
        lane.answer(tag: 1, status: 503, body: #"{"reason":"ServiceUnavailable"}"#, retryAfter: "5\u{1}")
        #expect(lane.deferred == [1])
        #expect(lane.machine.pauses == 0)
        #expect(!lane.notices.contains { $0.contains("pausing") })
        // The first retry waits at most the first backoff step (0.5 s), not the 5 s the bytes begin with.
        #expect(lane.wakeAt.map { $0.duration(since: answeredAt) <= .milliseconds(500) } == true)
        var rounds = 0
        while lane.outcome(1) == nil, rounds < 10 {
            rounds += 1
            Self.wake(&lane, untilSending: 1)
            lane.answer(tag: 1, status: 503, body: #"{"reason":"ServiceUnavailable"}"#, retryAfter: "\u{7f}")
        }
        // An answer each time: it fails with its status after its attempts, never as "no answer".
        #expect(lane.outcome(1) == .failed(reason: "retries_exhausted", httpStatus: 503, attempts: 5))
    }

    @Test("an endpoint that never answers stops the lane after the retry budget's count of unanswered requests, one at a time")
    func unreachable() {
        var lane = LaneMachineDriver(count: 50)
        lane.offerAll()
        var started = 0
        while lane.machine.stoppedBecause == nil, started < 20 {
            #expect(lane.inFlight.count == 1)
            started += 1
            lane.answer(status: 0, result: .failed, mayHaveBeenDelivered: false, failure: .connect)
            if lane.machine.stoppedBecause == nil, lane.inFlight.isEmpty { lane.wake() }
        }
        #expect(started == 5)
        #expect(lane.machine.stoppedBecause?.contains("cannot reach https://127.0.0.1:8443") == true)
        #expect(lane.allSettled)
        #expect(lane.machine.wireSends == 0)
    }
}
