import Foundation
import PushlineCore
@testable import PushlineDelivery
import PushlineEmulator
import Synchronization
import Testing
import _CryptoExtras

/// The FCM lane against the emulator over TLS, OAuth included (the emulator's `/token` is the
/// service account's `token_uri`).
@Suite("FCM lane against the emulator")
struct FCMLaneTests {
    @Test("200: sent with the message name; one access token serves every request")
    func sent() async throws {
        try await withLaneHarness { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(), routes: TestCampaign.routes)
            let tokens = (0..<30).map(TestCampaign.fcmToken)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: tokens))
            #expect(run.violations.isEmpty)
            #expect(run.counts[.sent] == 30)
            for tag in 0..<30 {
                let id = try #require(run.outcome(tag)?.providerID)
                #expect(id.hasPrefix("projects/\(TestCampaign.project)/messages/"))
                #expect(id.count > "projects/\(TestCampaign.project)/messages/".count)
            }
            let stats = harness.emulator.stats()
            #expect(stats.fcm.delivered == 30)
            #expect(stats.oauth.issued == 1)
            #expect(stats.oauth.rejected == 0)
        }
    }

    @Test("validate_only: FCM checks and delivers nothing; the lane reports sent with the name FCM gives (…/fake_message_id)")
    func validateOnly() async throws {
        try await withLaneHarness { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: (0..<5).map(TestCampaign.fcmToken), validateOnly: true))
            #expect(run.counts[.sent] == 5)
            #expect(run.settled.values.allSatisfy { $0.outcome.providerID == "projects/\(TestCampaign.project)/messages/fake_message_id" })
            let stats = harness.emulator.stats()
            #expect(stats.fcm.validated == 5)
            #expect(stats.fcm.delivered == 0)
        }
    }

    @Test("UNREGISTERED is an invalid token; INTERNAL and UNAVAILABLE are retried and sent")
    func classes() async throws {
        let tokens = (0..<4).map(TestCampaign.fcmToken)
        try await withLaneHarness({ configuration in
            configuration.faults.retryAfterSeconds = 0
            configuration.faults.scripted[tokens[0]] = [.fcmUnregistered]
            configuration.faults.scripted[tokens[1]] = [.internalServerError]
            configuration.faults.scripted[tokens[2]] = [.serviceUnavailable, .serviceUnavailable]
        }) { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: tokens))
            #expect(run.violations.isEmpty)
            let invalid = try #require(run.outcome(0))
            #expect(invalid.kind == .invalidToken)
            #expect(invalid.reasonCode == "UNREGISTERED")
            #expect(invalid.invalidTokenTimestamp == nil)
            #expect(run.outcome(1)?.kind == .sent)
            #expect(run.outcome(1)?.attempts == 2)
            #expect(run.outcome(2)?.kind == .sent)
            #expect(run.outcome(2)?.attempts == 3)
            #expect(run.outcome(3)?.attempts == 1)
            #expect(run.deferred == [1, 2])
        }
    }

    @Test("QUOTA_EXCEEDED pauses the whole project for at least a minute (the limiter's clock moved, not waited) and halves the rate")
    func quotaExceeded() async throws {
        let tokens = (0..<3).map(TestCampaign.fcmToken)
        try await withLaneHarness({ configuration in
            configuration.faults.retryAfterSeconds = 1
            configuration.faults.scripted[tokens[0]] = [.quotaExceeded]
        }) { harness in
            let clock = JumpClock()
            let lane = try ProviderSenders.make(
                harness.fcmConfiguration(harness.settings(connections: 1, streams: 1, rate: "100/s")), routes: TestCampaign.routes, clock: clock
            )
            try await LaneDriver.whileRunning(lane) {
                var outcomes: [UInt64: DeliveryOutcome] = [:]
                var events = lane.events.makeAsyncIterator()
                await lane.send(TestCampaign.requests(provider: .fcm, tokens: tokens))
                // The first answer is QUOTA_EXCEEDED: the request is deferred.
                let first = await events.next() ?? []
                guard case .deferred(let tag, _)? = first.first else {
                    Issue.record("expected a deferred event first, got \(first)")
                    await lane.cancel()
                    return
                }
                #expect(tag == 0)
                // Two seconds later on the lane's clock (Retry-After was 1 s) the lane starts
                // nothing: the project is paused for a minute.
                clock.advance(seconds: 2)
                let paused = try #require(lane as? ProviderLane)
                await paused.nextTurn()
                #expect(await lane.report().inFlight == 0)
                #expect(harness.emulator.stats().fcm.requests == 1)
                let slowed = await lane.report()
                #expect(slowed.slowdowns == 1)
                #expect(slowed.finalRatePerSecond == 50)
                // 61 s later on the lane's clock: the retry and the others go.
                clock.advance(seconds: 61)
                let finishing = Task { await lane.finish() }
                while let batch = await events.next() {
                    for case .settled(let settled) in batch { outcomes[settled.request.tag] = settled.outcome }
                }
                await finishing.value
                #expect(outcomes.count == 3)
                #expect(outcomes[0]?.kind == .sent)
                #expect(outcomes[0]?.attempts == 2)
                #expect(outcomes[1]?.kind == .sent)
                #expect(outcomes[2]?.kind == .sent)
                #expect(harness.emulator.stats().fcm.tokens[tokens[0]]?.answers == ["429 QUOTA_EXCEEDED", "200"])
            }
        }
    }

    @Test("a paused FCM project does not hold up APNs: the APNs lane sends everything meanwhile")
    func quotaPauseIsPerProvider() async throws {
        let fcmTokens = (0..<3).map(TestCampaign.fcmToken)
        try await withLaneHarness({ configuration in
            configuration.faults.scripted[fcmTokens[0]] = [.quotaExceeded]
        }) { harness in
            let clock = JumpClock()
            let fcm = try ProviderSenders.make(harness.fcmConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes, clock: clock)
            try await LaneDriver.whileRunning(fcm) {
                var fcmEvents = fcm.events.makeAsyncIterator()
                await fcm.send(TestCampaign.requests(provider: .fcm, tokens: fcmTokens))
                guard case .deferred? = (await fcmEvents.next() ?? []).first else {
                    Issue.record("expected the FCM request to be deferred")
                    await fcm.cancel()
                    return
                }
                let apns = try ProviderSenders.make(harness.apnsConfiguration(), routes: TestCampaign.routes)
                let run = await LaneDriver.run(apns, TestCampaign.requests(provider: .apns, tokens: (0..<50).map(TestCampaign.apnsToken)))
                #expect(run.counts[.sent] == 50)
                // FCM is still paused: only its first request reached the emulator.
                #expect(harness.emulator.stats().fcm.requests == 1)
                clock.advance(seconds: 61)
                let finishing = Task { await fcm.finish() }
                var sent = 0
                while let batch = await fcmEvents.next() {
                    for case .settled(let settled) in batch where settled.outcome.kind == .sent { sent += 1 }
                }
                await finishing.value
                #expect(sent == 3)
            }
        }
    }

    @Test("a service account whose key is not the project's: the token endpoint refuses it, the lane stops before any message is sent")
    func wrongServiceAccountKey() async throws {
        try await withLaneHarness { harness in
            // The same account with another RSA key: the emulator cannot verify the assertion.
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let other = EmulatorCredentials(
                teamID: harness.credentials.teamID, topic: harness.credentials.topic, projectID: harness.credentials.projectID,
                apnsPrivateKey: harness.credentials.apnsPrivateKey, fcmPrivateKey: otherKey
            )
            let json = other.serviceAccountJSON(tokenURI: harness.emulator.tokenURI)
                .replacingOccurrences(of: other.privateKeyID, with: harness.credentials.privateKeyID)
            let file = harness.folder + "/wrong-account.json"
            try json.write(toFile: file, atomically: true, encoding: .utf8)
            let lane = try ProviderSenders.make(harness.fcmConfiguration(accountFile: file), routes: TestCampaign.routes)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: (0..<100).map(TestCampaign.fcmToken)))
            #expect(run.violations.isEmpty)
            #expect(run.settled.count == 100)
            #expect(run.settled.values.allSatisfy { $0.outcome.reasonCode == "provider_stopped" })
            #expect(run.settled.values.allSatisfy { $0.latency == nil })
            let stats = harness.emulator.stats()
            #expect(stats.fcm.requests == 0)
            #expect(stats.oauth.rejected == 1)
            let message = try #require(run.report?.stoppedBecause)
            #expect(message.contains("token endpoint"))
            #expect(!message.contains("PRIVATE KEY"))
            #expect(!message.contains("eyJ"))
        }
    }

    @Test("the project is not the account's: 403 PERMISSION_DENIED stops the lane after one message, naming the service account")
    func wrongProject() async throws {
        try await withLaneHarness { harness in
            var table = RouteTable()
            var route = TestCampaign.routes[TestCampaign.fcmRoute]
            route.url = .fixed("https://fcm.googleapis.com/v1/projects/another-project/messages:send")
            table.add(TestCampaign.routes[TestCampaign.apnsRoute])
            table.add(route)
            let lane = try ProviderSenders.make(harness.fcmConfiguration(), routes: table)
            let run = await LaneDriver.run(lane, TestCampaign.requests(provider: .fcm, tokens: (0..<50).map(TestCampaign.fcmToken)))
            #expect(run.settled.count == 50)
            #expect(run.settled.values.filter { $0.outcome.httpStatus == 403 }.count == 1)
            #expect(run.settled.values.filter { $0.outcome.reasonCode == "provider_stopped" }.count == 49)
            #expect(harness.emulator.stats().fcm.requests == 1)
            let message = try #require(run.report?.stoppedBecause)
            #expect(message.contains("403"))
            #expect(message.contains("PERMISSION_DENIED"))
            #expect(message.contains(harness.credentials.clientEmail))
        }
    }

    @Test("an access token the server no longer accepts: 401, one new token, resent and sent")
    func unauthorizedOnce() async throws {
        // The emulator's clock jumps ten minutes ahead after the first message: the access token
        // it issued (600 s) has expired there, while the lane's cache still holds it.
        let offset = Mutex<Int64>(0)
        try await withLaneHarness({ configuration in
            configuration.accessTokenLifetimeSeconds = 600
            configuration.clock = EmulatorClock { Int64(Date().timeIntervalSince1970 * 1000) + offset.withLock { $0 } }
        }) { harness in
            let lane = try ProviderSenders.make(harness.fcmConfiguration(harness.settings(connections: 1, streams: 1)), routes: TestCampaign.routes)
            try await LaneDriver.whileRunning(lane) {
                var events = lane.events.makeAsyncIterator()
                var outcomes: [UInt64: DeliveryOutcome] = [:]
                let tokens = (0..<2).map(TestCampaign.fcmToken)
                let requests = TestCampaign.requests(provider: .fcm, tokens: tokens)
                await lane.send([requests[0]])
                for case .settled(let settled) in await events.next() ?? [] { outcomes[settled.request.tag] = settled.outcome }
                #expect(outcomes[0]?.kind == .sent)
                offset.withLock { $0 = 601_000 }
                await lane.send([requests[1]])
                let finishing = Task { await lane.finish() }
                while let batch = await events.next() {
                    for case .settled(let settled) in batch { outcomes[settled.request.tag] = settled.outcome }
                }
                await finishing.value
                let resent = try #require(outcomes[1])
                #expect(resent.kind == .sent)
                #expect(resent.attempts == 2)
                let stats = harness.emulator.stats()
                #expect(stats.oauth.issued == 2)
                #expect(stats.fcm.answers["401 UNAUTHENTICATED"] == 1)
                #expect(stats.fcm.delivered == 2)
                #expect(await lane.report().stoppedBecause == nil)
            }
        }
    }
}
