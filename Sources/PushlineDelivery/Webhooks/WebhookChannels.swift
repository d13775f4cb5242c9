import PushlineCore

/// One webhook channel as the pipeline configures it: `providers.sms`, `providers.email`,
/// `providers."open::<name>"`.
public struct WebhookChannel: Sendable {
    /// `sms`, `email` or `open::<name>`: the routes' platform name.
    public var name: String
    public var key: WebhookSigningKey
    /// The channel's own connections, streams, rate, `ca_file` and retries.
    public var settings: SenderSettings

    public init(name: String, key: WebhookSigningKey, settings: SenderSettings) {
        self.name = name
        self.key = key
        self.settings = settings
    }
}

/// The webhook sender: a `LaneGroup` with one `ProviderLane` per channel, each with its own
/// connections, rate and signing key, made when the channel's first request comes. Receivers
/// may speak HTTP/1.1.
typealias WebhookLanes = LaneGroup<WebhookChannels>

extension LaneGroup where Source == WebhookChannels {
    init(channels: [WebhookChannel], routes: RouteTable, namespace: String, clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?) {
        self.init(WebhookChannels(channels: channels, routes: routes, namespace: namespace, clock: clock, seed: seed, logger: logger))
    }
}

struct WebhookChannels: LaneGroupSource {
    let provider = Provider.webhook
    /// Per route id: the channel's position in `channels`, nil for routes of other providers
    /// or a channel without configuration.
    private let channelOfRoute: [Int?]
    private let channels: [WebhookChannel]
    private let keys: [String]
    private let signer: WebhookSigner
    private let routes: LaneRoutes
    private let clock: any DeliveryClock
    private let seed: UInt64
    private let logger: (@Sendable (String) -> Void)?

    init(channels: [WebhookChannel], routes table: RouteTable, namespace: String, clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?) {
        var position: [String: Int] = [:]
        for (index, channel) in channels.enumerated() { position[channel.name] = index }
        channelOfRoute = table.routes.map { $0.provider == .webhook ? position[$0.platformName] : nil }
        self.channels = channels
        keys = channels.map(\.name)
        signer = WebhookSigner(keys: channelOfRoute.map { $0.map { channels[$0].key } }, namespace: namespace, clock: clock)
        routes = LaneRoutes(table: table, provider: .webhook, endpoint: nil)
        self.clock = clock
        self.seed = seed
        self.logger = logger
    }

    func key(of request: OutgoingRequest) -> String {
        let route = request.entry.route.index
        guard route < channelOfRoute.count, let channel = channelOfRoute[route] else { return "" }
        return keys[channel]
    }

    // A run's channels are its routes: bounded by the pipeline, not the audience.
    var keysRemembered: Int { channels.count + 1 }
    var overflow: DeliveryOutcome { .failed(reason: LaneFailureReason.noRoute, httpStatus: 0, attempts: 0) }

    mutating func make(key: String, sample: OutgoingRequest, lanesMade: Int, events: LaneEventsInto) -> LaneGroupMember {
        guard let channel = channels.first(where: { $0.name == key }) else {
            return .refused(.failed(reason: LaneFailureReason.noRoute, httpStatus: 0, attempts: 0))
        }
        do {
            let lane = try ProviderSenders.lane(
                provider: .webhook, settings: channel.settings, routes: routes,
                authenticator: .webhook(signer, channel: channel.name, keyFingerprint: channel.key.fingerprint), oauth: nil, clock: clock,
                seed: seed &+ UInt64(lanesMade) &* 0x9E37_79B9, logger: logger, allowsHTTP1: true, eventsInto: events
            )
            return .lane(lane)
        } catch {
            logger?("webhooks: the \(channel.name) channel cannot send: \(error.description)")
            return .refused(.failed(reason: LaneFailureReason.noRoute, httpStatus: 0, attempts: 0))
        }
    }
}
