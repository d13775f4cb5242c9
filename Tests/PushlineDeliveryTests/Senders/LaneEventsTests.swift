import Foundation
import PushlineCore
@testable import PushlineDelivery
import Synchronization
import Testing

@Suite("Lane events: the mailbox between transfer threads and the sink")
struct LaneEventsTests {
    private static func tags(_ batch: [SendEvent]) -> [UInt64] {
        batch.map { event in
            switch event {
            case .deferred(let tag, _): tag
            case .settled(let settled): settled.request.tag
            }
        }
    }

    private static func deferrals(_ tags: Range<Int>) -> [SendEvent] {
        tags.map { .deferred(tag: UInt64($0), line: $0 + 1) }
    }

    @Test("what was added before a read comes as one batch, in order")
    func pendingComesWhole() async {
        let events = LaneEvents()
        #expect(events.yield(Self.deferrals(0..<1)))
        #expect(events.yield(Self.deferrals(1..<3)))
        var reader = events.makeAsyncIterator()
        #expect(Self.tags(await reader.next() ?? []) == [0, 1, 2])
    }

    @Test("a producer thread's events all arrive exactly once and in order, whatever the reader's timing")
    func aThreadAndAReader() async {
        let events = LaneEvents()
        let total = 20_000
        let producer = Thread {
            var next = 0
            var size = 1
            while next < total {
                let end = min(next + size, total)
                events.yield(Self.deferrals(next..<end))
                next = end
                size = size % 7 + 1
            }
            events.finish()
        }
        producer.start()
        var seen: [UInt64] = []
        var batches = 0
        for await batch in events {
            #expect(!batch.isEmpty)
            seen += Self.tags(batch)
            batches += 1
        }
        #expect(seen == (0..<total).map(UInt64.init))
        // Never more batches than yields (about total / 4): a read takes all that came.
        #expect(batches <= total / 4 + 1)
    }

    @Test("finish: what is pending is still read, then the end; a yield after it is refused")
    func finishAfterEvents() async {
        let events = LaneEvents()
        events.yield(Self.deferrals(0..<2))
        events.finish()
        #expect(events.yield(Self.deferrals(2..<3)) == false)
        var reader = events.makeAsyncIterator()
        #expect(Self.tags(await reader.next() ?? []) == [0, 1])
        #expect(await reader.next() == nil)
        #expect(await reader.next() == nil)
    }

    @Test("a reading task that is cancelled ends its read, as AsyncStream's does")
    func cancelledReader() async {
        let events = LaneEvents()
        let reader = Task { () -> [SendEvent]? in
            var iterator = events.makeAsyncIterator()
            return await iterator.next()
        }
        reader.cancel()
        #expect(await reader.value == nil)
        // Events that come later wait for the next read.
        events.yield(Self.deferrals(0..<1))
        var again = events.makeAsyncIterator()
        #expect(Self.tags(await again.next() ?? []) == [0])
    }
}

@Suite("Lane credential requests: an OAuth lane's tokens, fetched by the lane's run()")
struct LaneCredentialRequestsTests {
    private static func authenticator(_ endpoint: FakeTokenEndpoint) throws -> LaneAuthenticator {
        let account = try FCMServiceAccount(json: Array(ServiceAccountFixture.json().utf8), path: "sa.json")
        return .oauth(OAuthAccessTokenProvider(grant: account, clock: TestClock(), exchange: endpoint.exchange))
    }

    private enum Answer: Sendable {
        case token(Result<LaneCredential, LaneAuthenticator.Failure>)
        case verdict(LaneAuthenticator.RefreshDecision)
    }

    @Test("requests asked before and while run() runs are answered; run() returns once the lane ended")
    func answersThenEnds() async throws {
        let endpoint = FakeTokenEndpoint(answers: [FakeTokenEndpoint.grant("first"), FakeTokenEndpoint.grant("second")])
        let requests = LaneCredentialRequests(try Self.authenticator(endpoint))
        let (answers, answer) = AsyncStream<Answer>.makeStream()
        requests.ask(.token { answer.yield(.token($0)) })
        async let running: Void = requests.run()
        await Self.tokenVerdictToken(requests, answers: answers, answer: answer, endpoint: endpoint)
        requests.end()
        await running
    }

    /// A token, the provider refusing it (the verdict: resend), and the next token, a new one.
    private static func tokenVerdictToken(
        _ requests: LaneCredentialRequests, answers: AsyncStream<Answer>, answer: AsyncStream<Answer>.Continuation, endpoint: FakeTokenEndpoint
    ) async {
        var iterator = answers.makeAsyncIterator()
        guard case .token(.success(.oauth(let first)))? = await iterator.next() else {
            Issue.record("expected a token")
            return
        }
        #expect(first.authorizationHeaderValue == "Bearer first")
        requests.ask(.verdict(on: .oauth(first)) { answer.yield(.verdict($0)) })
        guard case .verdict(.resend)? = await iterator.next() else {
            Issue.record("expected a resend verdict")
            return
        }
        requests.ask(.token { answer.yield(.token($0)) })
        guard case .token(.success(.oauth(let second)))? = await iterator.next() else {
            Issue.record("expected a second token")
            return
        }
        #expect(second.authorizationHeaderValue == "Bearer second")
        #expect(second.generation == first.generation + 1)
        #expect(endpoint.exchanges == 2)
    }

    @Test("an endpoint that fails: the token request is answered with the failure, nothing waits")
    func failureIsAnAnswer() async throws {
        let endpoint = FakeTokenEndpoint(answers: [OAuthHTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))])
        let requests = LaneCredentialRequests(try Self.authenticator(endpoint))
        let (answers, answer) = AsyncStream<Answer>.makeStream()
        async let running: Void = requests.run()
        requests.ask(.token { answer.yield(.token($0)) })
        var iterator = answers.makeAsyncIterator()
        let got = await iterator.next()
        requests.end()
        await running
        guard case .token(.failure(.fatal(let message)))? = got else {
            Issue.record("expected a fatal failure, got \(String(describing: got))")
            return
        }
        #expect(message.contains("invalid_grant"))
    }
}
