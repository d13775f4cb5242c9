import PushlineCore

/// One provider's lane (APNs or FCM) as the run sees it: `send` hands requests to the lane's
/// `LaneHost`, whose `LaneStateMachine` (queue, rate limiter, in-flight limit, retry heap,
/// warm-up, credentials) runs on the transport's own transfer thread, between curl's turns.
/// Built by `ProviderSenders.make`.
///
/// Call `finish()`, `drain()` or `cancel()` to end it: until then it waits for work.
final class ProviderLane: DeliveryLane {
    let provider: Provider
    let events: AsyncStream<[SendEvent]>
    private let host: LaneHost
    /// Owns the transfer thread the host runs on.
    private let transport: HTTP2Transport

    init(provider: Provider, events: AsyncStream<[SendEvent]>, host: LaneHost, transport: HTTP2Transport) {
        self.provider = provider
        self.events = events
        self.host = host
        self.transport = transport
    }

    func send(_ requests: [OutgoingRequest]) async {
        await host.offer(requests)
    }

    func finish() async {
        await host.control(.finish)
    }

    func drain() async {
        await host.control(.drain)
    }

    func cancel() async {
        await host.control(.cancel)
    }

    func report() async -> LaneReport {
        host.report()
    }

    /// The lane's clock jumped (tests): whatever became due starts now.
    func clockMoved() async {
        await host.control(.clockMoved)
    }
}
