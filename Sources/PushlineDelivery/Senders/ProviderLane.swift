import PushlineCore

/// One provider's lane (APNs or FCM): `send` → `LaneStateMachine` (queue, rate limiter,
/// in-flight limit, retry heap, warm-up, credentials) → `HTTP2Transport`, with the transport's
/// completions fed back to the machine. Built by `ProviderSenders.make`; `LaneRunner` carries
/// out the machine's actions.
///
/// Call `finish()`, `drain()` or `cancel()` to end it: until then it waits for work.
final class ProviderLane: DeliveryLane {
    let provider: Provider
    let events: AsyncStream<[SendEvent]>
    private let runner: LaneRunner

    init(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, authenticator: LaneAuthenticator,
        transport: HTTP2Transport, oauth: OAuthExchange?, clock: any DeliveryClock, seed: UInt64,
        logger: (@Sendable (String) -> Void)?
    ) {
        self.provider = provider
        // Bounded by what the lane holds: every request it took yields at most two events.
        let (stream, continuation) = AsyncStream<[SendEvent]>.makeStream(bufferingPolicy: .unbounded)
        events = stream
        let machine = LaneStateMachine(
            provider: provider, settings: settings, routes: routes, identity: authenticator.identity, seed: seed, now: clock.now()
        )
        let runner = LaneRunner(
            machine: machine, transport: transport, authenticator: authenticator, clock: clock, output: continuation, logger: logger,
            onEnd: { await oauth?.shutdown() }
        )
        self.runner = runner
        Task {
            for await batch in transport.completions { await runner.completed(batch) }
            await oauth?.shutdown()
            await runner.transportEnded()
        }
    }

    func send(_ requests: [OutgoingRequest]) async {
        await runner.offer(requests)
    }

    func finish() async {
        await runner.finish()
    }

    func drain() async {
        await runner.drain()
    }

    func cancel() async {
        await runner.cancel()
    }

    func report() async -> LaneReport {
        await runner.report()
    }

    /// The lane's clock jumped (tests): whatever became due starts now.
    func clockMoved() async {
        await runner.clockMoved()
    }
}
