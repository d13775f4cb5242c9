import PushlineCore

/// One provider's lane (APNs or FCM): `send` → bounded queue → rate limiter → in-flight limit
/// → `HTTP2Transport`; one reader of the transport's completions; retries in a heap of their
/// own. Built by `ProviderSenders.make`. The decisions live in `LaneCore` (an actor); this
/// class owns the two tasks around it:
///
/// - the pump: asks the core for a batch of requests it may send now, puts the credential on
///   them (`authorization`), and submits them to the transport;
/// - the reader: hands each batch of completions to the core, which classifies them and emits
///   the events.
///
/// Call `finish()` or `cancel()` once (`drain()` may come before either): until then the tasks
/// wait for work.
final class ProviderLane: DeliveryLane {
    let provider: Provider
    let events: AsyncStream<[SendEvent]>
    private let core: LaneCore
    private let transport: HTTP2Transport

    init(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, authenticator: LaneAuthenticator,
        transport: HTTP2Transport, oauth: OAuthExchange?, clock: any DeliveryClock, seed: UInt64,
        logger: (@Sendable (String) -> Void)?
    ) {
        self.provider = provider
        self.transport = transport
        let (stream, continuation) = AsyncStream<[SendEvent]>.makeStream(bufferingPolicy: .unbounded)
        events = stream
        core = LaneCore(
            provider: provider, settings: settings, routes: routes, authenticator: authenticator, clock: clock, seed: seed,
            logger: logger, output: continuation, connectionsOpened: { transport.counters.connectionsOpened },
            onDone: {
                await transport.shutdown(.finishInFlight)
                await oauth?.shutdown()
            }
        )
        let core = self.core
        Task { await Self.pump(core: core, transport: transport, authenticator: authenticator) }
        Task {
            for await batch in transport.completions { await core.completed(batch) }
            await oauth?.shutdown()
            await core.transportEnded()
        }
    }

    private static func pump(core: LaneCore, transport: HTTP2Transport, authenticator: LaneAuthenticator) async {
        while let items = await core.nextBatch() {
            let credential: LaneCredential
            do {
                credential = try await authenticator.credential()
            } catch {
                await core.credentialFailed(items, error)
                continue
            }
            await core.credentialSucceeded()
            let requests = await core.dispatch(items, credential: credential)
            guard !requests.isEmpty else { continue }
            do {
                let taken = try await transport.submit(contentsOf: requests)
                if taken < requests.count { await core.notTaken(requests[taken...].map(\.slot)) }
            } catch {
                // Shut down (or a request the transport refused, which the lane's own checks
                // exclude): none of them was taken.
                await core.notTaken(requests.map(\.slot))
            }
        }
    }

    func send(_ requests: [OutgoingRequest]) async {
        await core.enqueue(requests)
    }

    func finish() async {
        await core.finish()
    }

    func drain() async {
        await core.drain()
    }

    func cancel() async {
        await core.cancel()
        await transport.shutdown(.cancelInFlight)
        await core.waitForEnd()
    }

    func report() async -> LaneReport {
        await core.report()
    }
}
