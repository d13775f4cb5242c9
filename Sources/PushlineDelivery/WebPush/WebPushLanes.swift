import PushlineCore

/// The Web Push sender: one `ProviderLane` per push service origin (FCM, Mozilla, Apple,
/// Microsoft…), each with its own connections, rate, VAPID `aud` and pinned addresses, made
/// when the origin's first request comes, at most `settings.pushServices` of them. Their events
/// are merged into one stream.
///
/// A request is settled here, never sent, when its endpoint is refused (not an https origin,
/// private without `allow_private_endpoints`, unresolvable) or its push service is beyond the
/// cap; it is settled unsent after a drain and failed `cancelled` after a cancel.
actor WebPushLanes: DeliveryLane {
    nonisolated let provider = Provider.webpush
    nonisolated let events: AsyncStream<[SendEvent]>
    private let output: AsyncStream<[SendEvent]>.Continuation

    private enum Phase {
        case open
        /// Drained: nothing new starts; the stream still ends only at finish or cancel.
        case drained
        case finished
        case cancelled
    }

    private enum OriginState {
        case lane(ProviderLane)
        /// Every request to it settles at once with this outcome.
        case refused(DeliveryOutcome)
    }

    private let key: VAPIDKey
    private let settings: SenderSettings
    private let routes: LaneRoutes
    private let clock: any DeliveryClock
    private let seed: UInt64
    private let logger: (@Sendable (String) -> Void)?

    private var phase = Phase.open
    private var drained = false
    private var origins: [String: OriginState] = [:]
    private var lanes: [ProviderLane] = []
    private var forwarding = 0
    private var ended = false
    private var refusedOrigins = 0

    init(key: VAPIDKey, settings: SenderSettings, routes: RouteTable, clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?) {
        self.key = key
        self.settings = settings
        self.routes = LaneRoutes(table: routes, provider: .webpush, endpoint: nil)
        self.clock = clock
        self.seed = seed
        self.logger = logger
        (events, output) = AsyncStream<[SendEvent]>.makeStream(bufferingPolicy: .unbounded)
    }

    func send(_ requests: [OutgoingRequest]) async {
        // Requests of one origin go together, in order.
        var groups: [(origin: String, requests: [OutgoingRequest])] = []
        var position: [String: Int] = [:]
        for request in requests {
            let origin = Self.originKey(request.bytes[request.entry.target])
            if let index = position[origin] {
                groups[index].requests.append(request)
            } else {
                position[origin] = groups.count
                groups.append((origin, [request]))
            }
        }
        for group in groups {
            switch state(for: group.origin, sample: group.requests[0]) {
            case .lane(let lane):
                await lane.send(group.requests)
            case .refused(let outcome):
                settle(group.requests, outcome)
            }
        }
    }

    /// The lane of `origin`, made on first use; or how its requests settle unsent.
    private func state(for origin: String, sample: OutgoingRequest) -> OriginState {
        switch phase {
        case .cancelled:
            return .refused(.failed(reason: LaneFailureReason.cancelled, httpStatus: 0, attempts: 0))
        case .drained, .finished:
            if case .lane(let lane)? = origins[origin] { return .lane(lane) }
            return .refused(.unsent(attempts: 0, possibleDuplicate: false))
        case .open:
            break
        }
        if let known = origins[origin] { return known }
        // A hostile audience can name millions of distinct hosts: past the lanes and this many
        // refused origins, a new one is neither resolved nor remembered (bounded memory and DNS work).
        guard origins.count < settings.pushServices + Self.refusedOriginsRemembered else {
            return .refused(.failed(reason: LaneFailureReason.tooManyPushServices, httpStatus: 0, attempts: 0))
        }
        let made = makeOrigin(sample)
        origins[origin] = made
        return made
    }

    /// Refused origins (private, unresolvable, malformed) remembered besides the lanes.
    static let refusedOriginsRemembered = 256

    private func makeOrigin(_ sample: OutgoingRequest) -> OriginState {
        let target = sample.bytes[sample.entry.target]
        let origin: WebPushOrigin
        switch WebPushOrigin.parse(target) {
        case .success(let parsed): origin = parsed
        case .failure(let problem): return refuse(problem.description)
        }
        let name = origin.description
        guard lanes.count < settings.pushServices else {
            logger?("webpush: \(name) is beyond the \(settings.pushServices) push services a run reaches (providers.webpush.push_services): its requests are not sent")
            return .refused(.failed(reason: LaneFailureReason.tooManyPushServices, httpStatus: 0, attempts: 0))
        }
        let addresses: [IPAddress]
        switch origin.resolve(allowPrivate: settings.allowPrivateEndpoints) {
        case .success(let resolved): addresses = resolved
        case .failure(.refused(let problem)): return refuse("\(name): \(problem)")
        case .failure(.unresolvable(let message)): return refuse(message)
        }
        let source = VAPIDTokenSource(key: key, audience: name, clock: clock)
        do {
            let lane = try ProviderSenders.lane(
                provider: .webpush, settings: settings, routes: routes,
                authenticator: .vapid(source, publicKey: key.publicKeyText), oauth: nil, clock: clock,
                seed: seed &+ UInt64(lanes.count) &* 0x9E37_79B9, logger: logger,
                pinnedAddresses: origin.resolveEntry(addresses).map { [$0] } ?? []
            )
            lanes.append(lane)
            forward(lane)
            return .lane(lane)
        } catch {
            return refuse("\(name): \(error.description)")
        }
    }

    private func refuse(_ message: String) -> OriginState {
        refusedOrigins += 1
        if refusedOrigins <= 20 { logger?("webpush: endpoint refused, its requests are not sent: \(message)") }
        return .refused(.failed(reason: LaneFailureReason.endpointRefused, httpStatus: 0, attempts: 0))
    }

    private func settle(_ requests: [OutgoingRequest], _ outcome: DeliveryOutcome) {
        output.yield(requests.map { .settled(SettledRequest(request: $0, provider: .webpush, outcome: outcome, latency: nil, wasDeferred: false)) })
    }

    private func forward(_ lane: ProviderLane) {
        forwarding += 1
        let output = self.output
        // Off the actor: forwarding never waits behind a `send`.
        Task.detached {
            for await batch in lane.events { output.yield(batch) }
            await self.forwarderEnded()
        }
    }

    private func forwarderEnded() {
        forwarding -= 1
        endIfDone()
    }

    private func endIfDone() {
        guard !ended, phase == .finished || phase == .cancelled, forwarding == 0 else { return }
        ended = true
        output.finish()
    }

    func finish() async {
        if phase != .cancelled { phase = .finished }
        for lane in lanes { await lane.finish() }
        endIfDone()
    }

    func drain() async {
        if phase == .open { phase = .drained }
        for lane in lanes { await lane.drain() }
    }

    func cancel() async {
        phase = .cancelled
        for lane in lanes { await lane.cancel() }
        endIfDone()
    }

    func report() async -> LaneReport {
        var total = LaneReport(provider: .webpush)
        for lane in lanes { total.add(await lane.report()) }
        return total
    }

    /// `https://authority` of an endpoint, lowercased: the key requests are grouped by (parsed
    /// and checked once per key in `makeOrigin`).
    static func originKey(_ endpoint: UnsafeRawBufferPointer) -> String {
        var end = min(endpoint.count, 2048)
        if endpoint.count > 8 {
            for i in 8..<end where endpoint[i] == UInt8(ascii: "/") || endpoint[i] == UInt8(ascii: "?") || endpoint[i] == UInt8(ascii: "#") {
                end = i
                break
            }
        }
        return String(decoding: endpoint[0..<end].lazy.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
