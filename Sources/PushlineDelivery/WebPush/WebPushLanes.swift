import PushlineCore

/// The Web Push sender: a `LaneGroup` with one `ProviderLane` per push service origin (FCM,
/// Mozilla, Apple, Microsoft…), each with its own connections, rate, VAPID `aud` and pinned
/// addresses, made when the origin's first request comes, at most `settings.pushServices` of
/// them.
///
/// A request is settled unsent when its endpoint is refused (not an https origin, private
/// without `allow_private_endpoints`, unresolvable) or its push service is beyond the cap.
typealias WebPushLanes = LaneGroup<WebPushOrigins>

extension LaneGroup where Source == WebPushOrigins {
    init(key: VAPIDKey, settings: SenderSettings, routes: RouteTable, clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?) {
        self.init(WebPushOrigins(key: key, settings: settings, routes: routes, clock: clock, seed: seed, logger: logger))
    }
}

/// Makes the lane of each push service origin: parses and checks the endpoint, resolves and
/// pins its addresses, and signs its VAPID tokens for that `aud`.
struct WebPushOrigins: LaneGroupSource {
    let provider = Provider.webpush
    private let key: VAPIDKey
    private let settings: SenderSettings
    private let routes: LaneRoutes
    private let clock: any DeliveryClock
    private let seed: UInt64
    private let logger: (@Sendable (String) -> Void)?
    private var refusedOrigins = 0

    /// Refused origins (private, unresolvable, malformed) remembered besides the lanes.
    static let refusedOriginsRemembered = 256

    init(key: VAPIDKey, settings: SenderSettings, routes: RouteTable, clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?) {
        self.key = key
        self.settings = settings
        self.routes = LaneRoutes(table: routes, provider: .webpush, endpoint: nil)
        self.clock = clock
        self.seed = seed
        self.logger = logger
    }

    func key(of request: OutgoingRequest) -> String {
        Self.originKey(request.bytes[request.entry.target])
    }

    // A hostile audience can name millions of distinct hosts: past the lanes and this many
    // refused origins, a new one is neither resolved nor remembered (bounded memory and DNS work).
    var keysRemembered: Int { settings.pushServices + Self.refusedOriginsRemembered }
    var overflow: DeliveryOutcome { .failed(reason: LaneFailureReason.tooManyPushServices, httpStatus: 0, attempts: 0) }

    mutating func make(key: String, sample: OutgoingRequest, lanesMade: Int, events: LaneEventsInto) -> LaneGroupMember {
        let target = sample.bytes[sample.entry.target]
        let origin: WebPushOrigin
        switch WebPushOrigin.parse(target) {
        case .success(let parsed): origin = parsed
        case .failure(let problem): return refuse(problem.description)
        }
        let name = origin.description
        guard lanesMade < settings.pushServices else {
            logger?("webpush: \(name) is beyond the \(settings.pushServices) push services a run reaches (providers.webpush.push_services): its requests are not sent")
            return .refused(overflow)
        }
        let addresses: [IPAddress]
        switch origin.resolve(allowPrivate: settings.allowPrivateEndpoints) {
        case .success(let resolved): addresses = resolved
        case .failure(.refused(let problem)): return refuse("\(name): \(problem)")
        case .failure(.unresolvable(let message)): return refuse(message)
        }
        let source = VAPIDTokenSource(key: self.key, audience: name, clock: clock)
        // Its engine: libcurl through a proxy unless no_proxy exempts this push service. Said here
        // when the exemptions depend on the host; otherwise once at the start (`ProviderSenders`).
        let engine = EngineChoice.decide(transport: settings.transport, proxy: settings.proxy, host: origin.host, port: origin.port, variables: settings.proxyVariables)
        if settings.proxy == nil, settings.transport != .curl, settings.proxyVariables.dependsOnHost, let notice = engine.notice(for: "webpush \(name)", host: origin.host) {
            logger?(notice)
        }
        do {
            let lane = try ProviderSenders.lane(
                provider: .webpush, settings: settings, routes: routes,
                authenticator: .vapid(source, publicKey: self.key.publicKeyText), oauth: nil, clock: clock,
                seed: seed &+ UInt64(lanesMade) &* 0x9E37_79B9, logger: logger,
                pinnedAddresses: origin.resolveEntry(addresses).map { [$0] } ?? [], engine: engine, eventsInto: events
            )
            return .lane(lane)
        } catch {
            return refuse("\(name): \(error.description)")
        }
    }

    private mutating func refuse(_ message: String) -> LaneGroupMember {
        refusedOrigins += 1
        if refusedOrigins <= 20 { logger?("webpush: endpoint refused, its requests are not sent: \(message)") }
        return .refused(.failed(reason: LaneFailureReason.endpointRefused, httpStatus: 0, attempts: 0))
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
