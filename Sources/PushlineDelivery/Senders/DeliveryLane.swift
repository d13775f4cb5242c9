public import PushlineCore

/// One provider's sending lane, as the run's delivery sink sees it: a bounded queue, the rate
/// limiter, the transport and the retry queue behind it. Every request given to `send` produces
/// exactly one `.settled` event (and at most one `.deferred` before it).
public protocol DeliveryLane: Sendable {
    var provider: Provider { get }

    /// Hands requests over in order, suspending while the lane's queue is full (the run's
    /// backpressure). After the lane stopped (configuration error: failed `provider_stopped`),
    /// drained or was cancelled (unsent, never attempted), requests are settled at once without
    /// being sent. A `send` in progress when `cancel()` is called still has each of its requests
    /// settled; a `send` that starts after `cancel()` or `finish()` returned is a caller's error.
    func send(_ requests: [OutgoingRequest]) async

    /// Events in batches, read by one task; the sequence ends after `finish()` or `cancel()` once
    /// every request given has settled.
    var events: LaneEvents { get }

    /// The lane's own waiting work (an OAuth lane's token fetches and verdicts), for as long as
    /// the lane lives: its owner runs it as a child task beside its sends, and it returns once
    /// the lane has ended. A lane with no such work returns at once. Without it, an OAuth lane
    /// waits for its first token forever.
    func run() async

    /// No more requests: send what is queued, wait out the retries, end `events`.
    func finish() async

    /// Stop now (the run's immediate stop, with or without a `drain()` before): what is queued,
    /// waiting for a retry or waiting for a credential verdict settles as
    /// `.unsent(reason: run_stopped, attempts:, possibleDuplicate:)`, and so does every request
    /// still being handed over; what is in flight gets its answer if it came first, or is
    /// cancelled and settles unsent too, `possibleDuplicate` when the cancelled attempt (or an
    /// earlier one) may have reached the provider. A cancel never fails a request: only an
    /// answer, a spent retry budget or a stopped provider does. `events` ends, and it returns.
    func cancel() async

    /// Graceful stop (the run got SIGTERM / SIGINT): start nothing new. Everything queued or
    /// waiting for a retry settles now as `.unsent(reason: run_stopped, attempts:,
    /// possibleDuplicate:)` (attempts 0 when never sent; `possibleDuplicate` when an earlier
    /// attempt may have reached the provider), and so does every request given to `send` from
    /// now on; what is in flight gets its answer (an answer that asks for a retry settles as
    /// unsent too). Returns once the waiting requests are settled, without waiting for those in
    /// flight. `events` still ends only after `finish()` or `cancel()` (requests handed over
    /// before the drain may still be on their way), then as soon as everything has settled; a
    /// `cancel()` after the drain (its deadline, a second signal) cancels what is in flight,
    /// which then settles as unsent too.
    func drain() async

    /// What the lane measured and why it stopped, if it did.
    func report() async -> LaneReport

    /// Writes, before each request goes on the wire, which device it is for, and which answers
    /// proved a device undelivered (`WireLog`). Call before the first `send`. Returns false when
    /// the lane does not record: then the run must keep no log for its provider, since a resume
    /// reads an empty log as "nothing was on the wire" and would leave its duplicates unmarked.
    /// No default: every lane says which it does.
    func recordWireSends(to log: any WireLog) -> Bool
}

/// A lane's account for the summary.
public struct LaneReport: Sendable {
    public var provider: Provider
    /// Set when a configuration error stopped the provider: the message for the person running it
    /// (no secret in it).
    public var stoppedBecause: String?
    /// Requests put on the wire, retries included.
    public var attempts = 0
    public var retries = 0
    /// The rate limiter's rate when the lane ended (after adaptive slowdowns), per second.
    public var finalRatePerSecond: Double = 0
    /// How many times a 429, a quota answer or a timeout halved the rate.
    public var slowdowns = 0
    /// How many times the provider asked the whole lane to wait (Retry-After, project quota).
    public var pauses = 0
    public var connectionsOpened = 0
    /// Requests on the wire as of the lane's last turn (a live reading; 0 once it ended).
    public var inFlight = 0

    public init(provider: Provider) { self.provider = provider }

    /// Adds a share's report (a transfer thread's, a push service's): counts and rates summed,
    /// the first stop message kept.
    mutating func add(_ share: LaneReport) {
        stoppedBecause = stoppedBecause ?? share.stoppedBecause
        attempts += share.attempts
        retries += share.retries
        finalRatePerSecond += share.finalRatePerSecond
        slowdowns += share.slowdowns
        pauses += share.pauses
        connectionsOpened += share.connectionsOpened
        inFlight += share.inFlight
    }
}

/// How one provider's lane is set up: filled from the pipeline's `providers:` block (and its
/// credentials), read by the senders.
public struct SenderSettings: Sendable {
    /// Replaces the route's origin (`https://host[:port]`, no path): an emulator, a proxy. Nil:
    /// the provider's real host (the route's own origin).
    public var endpoint: String?
    /// A PEM file of extra trust anchors (an emulator's certificate); verification stays on.
    public var caFile: String?
    public var connections: Int
    public var streamsPerConnection: Int
    public var rate: SendRate
    /// Time allowed for one attempt, connection included.
    public var requestTimeout: Duration
    public var retry: RetryPolicy
    /// Transfer threads (libcurl multi handles), each with its share of `connections` and `rate`:
    /// one thread's curl loop caps what one provider can send; more cores send more.
    public var transferThreads: Int
    /// Web Push: connections, streams and rate above are per push service origin, and a run
    /// reaches at most this many push services.
    public var pushServices: Int
    /// Web Push: send to endpoints whose host is private, loopback or link-local (tests, an
    /// emulator, an on-premises push service). Off: such endpoints are refused unsent.
    public var allowPrivateEndpoints: Bool
    /// Webhooks: what makes each message's `webhook-id` unique to its run (the campaign and its
    /// first start; a resumed run keeps it), so ids repeat across retries and resumes only.
    public var webhookIDNamespace = ""
    /// Which engine sends (the provider's `transport:` key): nghttp2 unless the pipeline asks
    /// for libcurl or a proxy applies.
    public var transport: TransportEngine = .nghttp2
    /// The provider's `proxy:` key (an `http://` or `https://` proxy URL); nil: the environment's.
    public var proxy: String?
    /// The environment's proxy variables, read once by `ProviderSenders.make`: with `transport`
    /// and `proxy`, they decide each origin's engine (`EngineChoice`).
    var proxyVariables = ProxyVariables()

    public init(
        endpoint: String? = nil, caFile: String? = nil, connections: Int, streamsPerConnection: Int, rate: SendRate,
        requestTimeout: Duration = .seconds(30), retry: RetryPolicy, transferThreads: Int = 1,
        pushServices: Int = 16, allowPrivateEndpoints: Bool = false
    ) {
        self.pushServices = pushServices
        self.allowPrivateEndpoints = allowPrivateEndpoints
        self.endpoint = endpoint
        self.caFile = caFile
        self.connections = connections
        self.streamsPerConnection = streamsPerConnection
        self.rate = rate
        self.requestTimeout = requestTimeout
        self.retry = retry
        self.transferThreads = transferThreads
    }
}

/// The credentials of one provider, loaded and checked (`validate` loads them before anything is read).
public enum ProviderCredentials: Sendable {
    case apns(APNsSigningKey)
    case fcm(FCMServiceAccount)
    /// Web Push: the VAPID key pair and subject every push service sees.
    case webpush(VAPIDKey)
    /// ADM: the security profile's client credentials.
    case adm(ADMClientCredentials)
    /// Webhooks: each configured channel with its signing key and settings.
    case webhooks([WebhookChannel])
}

/// Everything a run needs to send to one provider.
public struct ProviderSendConfiguration: Sendable {
    public var provider: Provider
    public var credentials: ProviderCredentials
    public var settings: SenderSettings

    public init(provider: Provider, credentials: ProviderCredentials, settings: SenderSettings) {
        self.provider = provider
        self.credentials = credentials
        self.settings = settings
    }
}
