public import PushlineCore

/// Builds the sending lane of one provider.
public enum ProviderSenders {
    /// The lane for `configuration.provider` (APNs, FCM, Web Push, ADM or webhooks), sending the requests of `routes`'
    /// routes to that provider. The transport (and, for FCM, the OAuth exchange with the
    /// service account's `token_uri`) starts here; nothing is sent before `send`.
    ///
    /// - `clock`: intervals (rate, retries, token ages, latency); the system clock in a run.
    /// - `seed`: the retry jitter's random source (reproducible runs and tests).
    /// - `logger`: one line per notable event (the provider stopped, the token endpoint failed);
    ///   never a secret.
    ///
    /// Throws `SenderError` for a provider without a sender, credentials of another provider,
    /// an `endpoint` that is not `https://host[:port]`, an FCM or ADM `token_uri` that is not https,
    /// or a transport that cannot start (an unreadable `ca_file`).
    public static func make(
        _ configuration: ProviderSendConfiguration,
        routes: RouteTable,
        clock: any DeliveryClock = SystemDeliveryClock(),
        seed: UInt64 = 0x5eed_0f_5e4d,
        logger: (@Sendable (String) -> Void)? = nil
    ) throws(SenderError) -> any DeliveryLane {
        let provider = configuration.provider
        var settings = configuration.settings
        if let written = settings.endpoint {
            // `https://host:port/` is the same origin written with its root path.
            let endpoint = written.hasSuffix("/") && written.utf8.count > "https://".utf8.count ? String(written.dropLast()) : written
            if let problem = EndpointCheck.problem(endpoint) {
                throw .invalidEndpoint(provider: provider.rawValue, endpoint: written, problem: problem)
            }
            settings.endpoint = endpoint
        }

        let authenticator: LaneAuthenticator
        var oauth: OAuthExchange? = nil
        switch (provider, configuration.credentials) {
        case (.apns, .apns(let key)):
            authenticator = .apns(APNsProviderTokenSource(key: key, clock: clock), keyID: key.keyID, teamID: key.teamID)
        case (.fcm, .fcm(let account)):
            (authenticator, oauth) = try oauthLane(grant: account, endpoint: account.tokenEndpoint, settings: settings, clock: clock)
        case (.adm, .adm(let client)):
            (authenticator, oauth) = try oauthLane(grant: client, endpoint: client.tokenEndpoint, settings: settings, clock: clock)
        case (.webpush, .webpush(let key)):
            // One lane per push service, made when its first request comes.
            return WebPushLanes(key: key, settings: settings, routes: routes, clock: clock, seed: seed, logger: logger)
        case (.webhook, .webhooks(let channels)):
            // One lane per channel, each with its own settings and key.
            return WebhookLanes(channels: channels, routes: routes, namespace: settings.webhookIDNamespace, clock: clock, seed: seed, logger: logger)
        case (.apns, _), (.fcm, _), (.webpush, _), (.adm, _), (.webhook, _):
            throw .credentialsMismatch(provider: provider.rawValue, credentials: configuration.credentials.name)
        }
        return try lane(
            provider: provider, settings: settings, routes: LaneRoutes(table: routes, provider: provider, endpoint: settings.endpoint),
            authenticator: authenticator, oauth: oauth, clock: clock, seed: seed, logger: logger
        )
    }

    /// The access tokens of an OAuth client (FCM, ADM), fetched over an exchange of their own
    /// (the token endpoint is another host than the provider's).
    private static func oauthLane(
        grant: some OAuthGrant, endpoint: OAuthTokenEndpoint, settings: SenderSettings, clock: any DeliveryClock
    ) throws(SenderError) -> (LaneAuthenticator, OAuthExchange) {
        guard endpoint.isTLS else { throw .tokenEndpointNotTLS(uri: endpoint.uri) }
        let exchange: OAuthExchange
        do {
            exchange = try OAuthExchange(caFile: settings.caFile)
        } catch {
            throw .transport(provider: grant.service == .fcm ? Provider.fcm.rawValue : Provider.adm.rawValue, detail: error.description)
        }
        return (.oauth(OAuthAccessTokenProvider(grant: grant, clock: clock) { request in await exchange.post(request) }), exchange)
    }

    /// A lane over `settings.transferThreads` transfer threads sending `routes` with
    /// `authenticator`'s credentials. `pinnedAddresses`: the transport connects to exactly these
    /// (a Web Push origin's checked addresses).
    static func lane(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, authenticator: LaneAuthenticator, oauth: OAuthExchange?,
        clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?, pinnedAddresses: [String] = [],
        allowsHTTP1: Bool = false
    ) throws(SenderError) -> ProviderLane {
        // Every request yields at most two events, and the run's batch window bounds the
        // requests given to a lane whose events are not yet read (docs/delivery.md).
        let (events, output) = AsyncStream<[SendEvent]>.makeStream(bufferingPolicy: .unbounded)
        let exchange = oauth
        // Each transfer thread: its share of the connections and the rate, a machine, a host and
        // a transport of its own; their events go into the lane's one stream.
        let threads = Swift.min(Swift.max(settings.transferThreads, 1), settings.connections)
        let ended = LaneEventsEnd(hosts: threads, output: output, onEnd: { await exchange?.shutdown() })
        var hosts: [LaneHost] = []
        var transports: [HTTP2Transport] = []
        for thread in 0..<threads {
            var share = settings
            share.connections = settings.connections / threads + (thread < settings.connections % threads ? 1 : 0)
            share.rate = settings.rate.divided(by: threads)
            let machine = LaneStateMachine(
                provider: provider, settings: share, routes: routes,
                identity: authenticator.identity, seed: seed &+ UInt64(thread), now: clock.now()
            )
            let host = LaneHost(machine: machine, authenticator: authenticator, clock: clock, output: output, logger: logger, ended: ended)
            do {
                var transportConfiguration = TransportConfiguration(
                    connections: share.connections, streamsPerConnection: share.streamsPerConnection, caFile: settings.caFile,
                    capturedHeaderNames: ["apns-id", "retry-after", "x-amzn-requestid"]
                )
                transportConfiguration.pinnedAddresses = pinnedAddresses
                transportConfiguration.allowsHTTP1 = allowsHTTP1
                transportConfiguration.engine = allowsHTTP1 ? .curl : settings.transport
                transportConfiguration.proxy = settings.proxy
                let transport = try HTTP2Transport(transportConfiguration, host: host)
                host.attach(transport)
                hosts.append(host)
                transports.append(transport)
            } catch {
                // Those already started end with nothing to send.
                for host in hosts { Task { await host.control(.cancel) } }
                if hosts.isEmpty, let oauth { Task { await oauth.shutdown() } }
                throw .transport(provider: provider.rawValue, detail: error.description)
            }
        }
        return ProviderLane(provider: provider, events: events, hosts: hosts, transports: transports)
    }
}

extension ProviderCredentials {
    /// What kind of credentials these are, for an error naming a mismatch.
    var name: String {
        switch self {
        case .apns: "APNs"
        case .fcm: "FCM"
        case .webpush: "Web Push (VAPID)"
        case .adm: "ADM"
        case .webhooks: "webhook signing keys"
        }
    }
}
