import Crypto
import Foundation
import PushlineCore
@testable import PushlineDelivery
import PushlineEmulator
import Testing

/// The APNs lane against the emulator over TLS: each response class of PROVIDERS.md ends as it
/// says. Expected outcomes come from the table (and the scripted faults), not from the lane.
@Suite("APNs lane against the emulator")
struct APNsLaneTests {
    @Test("200: every request is sent once, with the apns-id APNs answers, and the report counts them")
    func sent() async throws {
        try await withLaneHarness { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
            let tokens = (0..<40).map(TestCampaign.apnsToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens, collapseID: "news"))
            #expect(run.violations.isEmpty)
            #expect(run.settled.count == 40)
            for tag in 0..<40 {
                let outcome = try #require(run.outcome(tag))
                #expect(outcome.kind == .sent)
                #expect(outcome.attempts == 1)
                #expect(!outcome.possibleDuplicate)
                // A canonical UUID (8-4-4-4-12), which the emulator makes when the request has none.
                let id = try #require(outcome.providerID)
                #expect(id.count == 36 && id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
                #expect(run.settled[UInt64(tag)]?.latency != nil)
            }
            #expect(run.deferred.isEmpty)
            let stats = harness.emulator.stats()
            #expect(stats.apns.delivered == 40)
            #expect(stats.apns.tokens.count == 40)
            #expect(stats.apns.tokens.values.allSatisfy { $0.requests == 1 && $0.delivered == 1 })
            let report = try #require(run.report)
            #expect(report.attempts == 40)
            #expect(report.retries == 0)
            #expect(report.stoppedBecause == nil)
            #expect(report.connectionsOpened >= 1 && report.connectionsOpened <= 2)
        }
    }

    @Test("two transfer threads: each request sent once, the threads' connections and attempts add up, one stream of events ends after both")
    func twoTransferThreads() async throws {
        try await withLaneHarness { harness in
            var settings = harness.settings(connections: 2, streams: 50, rate: "100000/s")
            settings.transferThreads = 2
            let lane = try ProviderSenders.make(harness.apnsConfiguration(settings), routes: TestCampaign.routes)
            let tokens = (0..<3_000).map(TestCampaign.apnsToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            #expect(run.violations.isEmpty)
            #expect(run.counts[.sent] == 3_000)
            let stats = harness.emulator.stats()
            #expect(stats.apns.requests == 3_000)
            #expect(stats.apns.tokens.values.allSatisfy { $0.requests == 1 })
            let report = try #require(run.report)
            #expect(report.attempts == 3_000)
            // One connection per thread at least: each thread has its own multi handle.
            #expect(report.connectionsOpened >= 2)
            // The rate is shared: the two shares add up to the configured rate.
            #expect(report.finalRatePerSecond == 100_000)
        }
    }

    @Test("410 Unregistered is an invalid token with its timestamp; 400 BadDeviceToken an invalid token; 400 reasons of our own are permanent failures")
    func invalidTokens() async throws {
        let tokens = (0..<6).map(TestCampaign.apnsToken)
        try await withLaneHarness({ configuration in
            configuration.faults.scripted[tokens[1]] = [.apnsUnregistered]
            configuration.faults.scripted[tokens[2]] = [.apnsBadDeviceToken]
        }) { harness in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
            // Request 3 carries a collapse id over APNs' 64 bytes: the emulator answers 400
            // BadCollapseId, a request of ours that is wrong (permanent, not retried).
            var requests = TestCampaign.requests(provider: .apns, tokens: tokens)
            requests[3] = TestCampaign.requests(provider: .apns, tokens: tokens, collapseID: String(repeating: "c", count: 65))[3]
            let run = await LaneDriver.run(lane, requests)
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(run.violations.isEmpty)
            #expect(run.outcome(0)?.kind == .sent)
            let unregistered = try #require(run.outcome(1))
            #expect(unregistered.kind == .invalidToken)
            #expect(unregistered.reasonCode == "Unregistered")
            let timestamp = try #require(unregistered.invalidTokenTimestamp)
            #expect(timestamp >= before - 1000 && timestamp <= after + 1000)
            let bad = try #require(run.outcome(2))
            #expect(bad.kind == .invalidToken)
            #expect(bad.reasonCode == "BadDeviceToken")
            #expect(bad.invalidTokenTimestamp == nil)
            let collapse = try #require(run.outcome(3))
            #expect(collapse.kind == .failed)
            #expect(collapse.reasonCode == "BadCollapseId")
            #expect(collapse.httpStatus == 400)
            #expect(collapse.attempts == 1)
            #expect(run.outcome(4)?.kind == .sent)
            let stats = harness.emulator.stats()
            // Nothing was retried: one request per token.
            #expect(stats.apns.tokens.values.allSatisfy { $0.requests == 1 })
        }
    }

    @Test("429 TooManyRequests with Retry-After: that device is deferred, retried after its Retry-After, sent; the lane's rate is not halved")
    func tooManyRequests() async throws {
        let tokens = (0..<4).map(TestCampaign.apnsToken)
        try await withLaneHarness({ configuration in
            configuration.faults.scripted[tokens[0]] = [.tooManyRequests]
            configuration.faults.retryAfterSeconds = 1
        }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(rate: "1000/s")), routes: TestCampaign.routes)
            let started = ContinuousClock.now
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            let elapsed = ContinuousClock.now - started
            #expect(run.violations.isEmpty)
            let outcome = try #require(run.outcome(0))
            #expect(outcome.kind == .sent)
            #expect(outcome.attempts == 2)
            #expect(run.deferred == [0])
            #expect(run.settled[0]?.wasDeferred == true)
            // Retry-After: 1 holds this device's retry for a second; the others went at once.
            #expect(elapsed >= .milliseconds(900))
            for i in 1..<4 { #expect(run.outcome(i)?.attempts == 1) }
            let report = try #require(run.report)
            // APNs says TooManyRequests is about one device token: the provider is not slowed.
            #expect(report.slowdowns == 0)
            #expect(report.pauses == 0)
            #expect(report.retries == 1)
            #expect(report.attempts == 5)
            #expect(harness.emulator.stats().apns.tokens[tokens[0]]?.answers == ["429 TooManyRequests", "200"])
        }
    }

    @Test("500 and 503 are retried with backoff and then sent; five failures in a row give up as retries_exhausted")
    func serverErrors() async throws {
        let tokens = (0..<3).map(TestCampaign.apnsToken)
        try await withLaneHarness({ configuration in
            configuration.faults.retryAfterSeconds = 0
            configuration.faults.scripted[tokens[0]] = [.internalServerError]
            configuration.faults.scripted[tokens[1]] = [.serviceUnavailable, .internalServerError]
            configuration.faults.scripted[tokens[2]] = Array(repeating: .serviceUnavailable, count: 5)
        }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
            let requests = TestCampaign.requests(provider: .apns, tokens: tokens)
            let run = await LaneDriver.run(lane, requests)
            #expect(run.violations.isEmpty)
            #expect(run.outcome(0)?.kind == .sent)
            #expect(run.outcome(0)?.attempts == 2)
            // A deferred request settles with its own copy of its bytes (the batch's could be
            // released), and the copy says the same.
            let settled = try #require(run.settled[0])
            #expect(settled.request.bytes !== requests[0].bytes)
            #expect(settled.request.bytes.string(settled.request.entry.recipient) == "\"user-0\"")
            #expect(settled.request.bytes.string(settled.request.entry.target) == tokens[0])
            #expect(settled.request.entry.line == 1)
            #expect(run.outcome(1)?.kind == .sent)
            #expect(run.outcome(1)?.attempts == 3)
            let exhausted = try #require(run.outcome(2))
            #expect(exhausted.kind == .failed)
            #expect(exhausted.reasonCode == "retries_exhausted")
            #expect(exhausted.httpStatus == 503)
            #expect(exhausted.attempts == 5)
            #expect(run.deferred == [0, 1, 2])
            #expect(harness.emulator.stats().apns.tokens[tokens[2]]?.requests == 5)
        }
    }

    @Test("a dropped connection: the request is resent once and marked possible duplicate; dropped again it fails, never a third copy")
    func droppedConnection() async throws {
        let tokens = (0..<3).map(TestCampaign.apnsToken)
        try await withLaneHarness({ configuration in
            configuration.faults.scripted[tokens[0]] = [.dropConnection]
            configuration.faults.scripted[tokens[1]] = [.dropConnection, .dropConnection]
        }) { harness in
            // One stream at a time: a dropped connection takes no other request with it.
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            #expect(run.violations.isEmpty)
            let resent = try #require(run.outcome(0))
            #expect(resent.kind == .sent)
            #expect(resent.attempts == 2)
            // The body was written before the connection dropped: APNs may have delivered it.
            #expect(resent.possibleDuplicate)
            let twice = try #require(run.outcome(1))
            #expect(twice.kind == .failed)
            #expect(twice.reasonCode == "no_response_after_resend")
            #expect(twice.httpStatus == 0)
            #expect(twice.attempts == 2)
            let clean = try #require(run.outcome(2))
            #expect(clean.kind == .sent)
            #expect(!clean.possibleDuplicate)
            let stats = harness.emulator.stats()
            #expect(stats.apns.tokens[tokens[1]]?.requests == 2)
            #expect(stats.connectionsOpened >= 3)
        }
    }

    @Test("a refused stream (REFUSED_STREAM) is resent by the lane and sent once; two attempts, not marked: the server proved it did not process the first")
    func refusedStream() async throws {
        let tokens = (0..<3).map(TestCampaign.apnsToken)
        try await withLaneHarness({ configuration in
            configuration.faults.scripted[tokens[0]] = [.refusedStream]
        }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            #expect(run.violations.isEmpty)
            let outcome = try #require(run.outcome(0))
            #expect(outcome.kind == .sent)
            // What the server received: two requests, the first refused unprocessed, which the
            // engine reports (docs/delivery.md, "The HTTP/2 engine"): no mark.
            #expect(outcome.attempts == 2)
            #expect(!outcome.possibleDuplicate)
            let history = harness.emulator.stats().apns.tokens[tokens[0]]
            #expect(history?.answers == ["refused_stream", "200"])
            #expect(history?.delivered == 1)
            #expect(run.counts[.sent] == 3)
        }
    }

    @Test("a key that is not the team's: 403 InvalidProviderToken stops the lane after one request; everything else fails provider_stopped")
    func wrongKey() async throws {
        try await withLaneHarness { harness in
            let logged = LogLines()
            let wrongKey = try APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: harness.credentials.keyID, teamID: harness.credentials.teamID)
            let lane = try ProviderSenders.make(
                harness.apnsConfiguration(key: wrongKey), routes: TestCampaign.routes, logger: { logged.append($0) }
            )
            let tokens = (0..<300).map(TestCampaign.apnsToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: tokens))
            #expect(run.violations.isEmpty)
            #expect(run.settled.count == 300)
            #expect(run.counts[.failed] == 300)
            let rejected = run.settled.values.filter { $0.outcome.reasonCode == "InvalidProviderToken" }
            // The first request goes alone (warming): the key is known bad before a window is spent.
            #expect(rejected.count == 1)
            #expect(rejected.first?.outcome.httpStatus == 403)
            #expect(run.settled.values.filter { $0.outcome.reasonCode == "provider_stopped" }.count == 299)
            let stats = harness.emulator.stats()
            #expect(stats.apns.requests == 1)
            #expect(stats.apns.delivered == 0)
            let message = try #require(run.report?.stoppedBecause)
            #expect(message.contains("403"))
            #expect(message.contains("InvalidProviderToken"))
            #expect(message.contains(harness.credentials.keyID))
            #expect(message.contains(harness.credentials.teamID))
            #expect(!message.contains("bearer"))
            #expect(!message.contains("eyJ"))
            #expect(logged.lines.contains { $0.contains("InvalidProviderToken") })
            #expect(!logged.lines.contains { $0.contains("eyJ") })
        }
    }

    @Test("ExpiredProviderToken: one new token, the request resent and sent")
    func expiredProviderTokenOnce() async throws {
        try await withLaneHarness { harness in
            // The first token is signed with an iat two hours old: the emulator calls it expired.
            let clock = JumpClock(skewFirstWallReading: -7200)
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes, clock: clock)
            let token = TestCampaign.apnsToken(7)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: [token, TestCampaign.apnsToken(8)]))
            #expect(run.violations.isEmpty)
            let outcome = try #require(run.outcome(0))
            #expect(outcome.kind == .sent)
            #expect(outcome.attempts == 2)
            #expect(run.outcome(1)?.kind == .sent)
            #expect(run.outcome(1)?.attempts == 1)
            #expect(harness.emulator.stats().apns.tokens[token]?.answers == ["403 ExpiredProviderToken", "200"])
            #expect(run.report?.stoppedBecause == nil)
        }
    }

    @Test("ExpiredProviderToken to a freshly signed token too: the lane stops with the clock hint, after two requests")
    func expiredProviderTokenTwice() async throws {
        try await withLaneHarness({ configuration in
            // The emulator's clock runs two hours ahead: every token we sign is two hours old to it.
            configuration.clock = EmulatorClock { Int64(Date().timeIntervalSince1970 * 1000) + 7_200_000 }
        }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .apns, tokens: (0..<50).map(TestCampaign.apnsToken)))
            #expect(run.violations.isEmpty)
            #expect(run.counts[.failed] == 50)
            #expect(harness.emulator.stats().apns.requests == 2)
            let message = try #require(run.report?.stoppedBecause)
            #expect(message.contains("ExpiredProviderToken"))
            #expect(message.contains("clock"))
            #expect(message.contains(harness.credentials.keyID))
        }
    }

    @Test("a request with a target that is not hex, or for a route the lane does not serve, fails without being sent")
    func unsendable() async throws {
        try await withLaneHarness { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
            var requests = TestCampaign.requests(provider: .apns, tokens: ["abcd/../../x", TestCampaign.apnsToken(1), TestCampaign.apnsToken(2)])
            requests[2].entry.route = TestCampaign.fcmRoute
            let run = await LaneDriver.run(lane, requests)
            #expect(run.outcome(0)?.reasonCode == "bad_target")
            #expect(run.outcome(0)?.httpStatus == 0)
            #expect(run.settled[0]?.latency == nil)
            #expect(run.outcome(1)?.kind == .sent)
            #expect(run.outcome(2)?.reasonCode == "no_route")
            #expect(harness.emulator.stats().apns.requests == 1)
        }
    }

    @Test("send suspends while the lane's queue is full, and cancel releases it")
    func backpressure() async throws {
        try await withLaneHarness({ $0.faults.latencyMilliseconds = 400 }) { harness in
            // One request in flight at a time, each answered after 400 ms: the lane holds at most
            // its machine's capacity and as much again in its inbox, so a send of more than that
            // cannot return before a hundred are answered.
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes)
            let count = 2 * LaneStateMachine.capacity(inFlight: 1) + 100
            let requests = TestCampaign.requests(provider: .apns, tokens: (0..<count).map(TestCampaign.apnsToken))
            let reader = Task { () -> Int in
                var settled = 0
                for await events in lane.events {
                    for case .settled in events { settled += 1 }
                }
                return settled
            }
            let returned = Mutex(false)
            let sender = Task {
                await lane.send(requests)
                returned.withLock { $0 = true }
            }
            // Two requests reached the server, so the first answer (400 ms) came: a send that
            // did not wait for room would have returned long before.
            #expect(await harness.emulator.waitForStats { $0.apns.requests >= 2 })
            #expect(returned.withLock { $0 } == false)
            await lane.cancel()
            await sender.value
            #expect(returned.withLock { $0 })
            #expect(await reader.value == count)
        }
    }

    @Test("cancel: what is queued settles unsent at once (never attempted, never failed), every request still settles exactly once")
    func cancel() async throws {
        // Answers take 10 s: however late a busy machine runs the cancel, the warm-up's one
        // request is still in flight and nothing has been answered.
        try await withLaneHarness({ $0.faults.latencyMilliseconds = 10_000 }) { harness in
            let lane = try ProviderSenders.make(harness.apnsConfiguration(harness.settings(connections: 1, streams: 4)), routes: TestCampaign.routes)
            let requests = TestCampaign.requests(provider: .apns, tokens: (0..<100).map(TestCampaign.apnsToken))
            let reader = Task { () -> [UInt64: DeliveryOutcome] in
                var outcomes: [UInt64: DeliveryOutcome] = [:]
                for await events in lane.events {
                    for case .settled(let settled) in events { outcomes[settled.request.tag] = settled.outcome }
                }
                return outcomes
            }
            // Cancelled as soon as it has them: at most the warm-up's one request is in flight.
            await lane.send(requests)
            await lane.cancel()
            let outcomes = await reader.value
            #expect(outcomes.count == 100)
            let unsent = outcomes.values.filter { $0.kind == .unsent && $0.reasonCode == "run_stopped" }
            let sent = outcomes.values.filter { $0.kind == .sent }.count
            #expect(unsent.count + sent == 100)
            #expect(unsent.count >= 90)
            // Never attempted, or the one cut off on the wire (marked when it may have been delivered).
            #expect(unsent.allSatisfy { $0.attempts == 0 ? !$0.possibleDuplicate : $0.attempts == 1 })
            // Given after cancel: settled at once.
            let late = TestCampaign.requests(provider: .apns, tokens: [TestCampaign.apnsToken(500)])
            await lane.send(late)
        }
    }
}

/// Log lines a lane wrote.
final class LogLines: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}

import Synchronization
