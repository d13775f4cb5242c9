public import PushlineCore
import Foundation

/// Builds the sending lane of one provider.
public enum ProviderSenders {
    /// The lane for `configuration.provider` (APNs, FCM, Web Push, ADM or webhooks), sending the requests of `routes`'
    /// routes to that provider. The transport (and, for FCM, the OAuth exchange with the
    /// service account's `token_uri`) starts here; nothing is sent before `send`.
    ///
    /// - `clock`: intervals (rate, retries, token ages, latency); the system clock in a run.
    /// - `seed`: the retry jitter's random source (reproducible runs and tests).
    /// - `logger`: one line per notable event (the provider stopped, the token endpoint failed,
    ///   libcurl sends instead of nghttp2 and why); never a secret.
    /// - `environment`: where the proxy variables are read, once (`ProxyVariables`; nil: the
    ///   process's): with the provider's `transport` and `proxy`, they choose its engine
    ///   (`EngineChoice`).
    ///
    /// Throws `SenderError` for a provider without a sender, credentials of another provider,
    /// an `endpoint` that is not `https://host[:port]`, an FCM or ADM `token_uri` that is not https,
    /// or a transport that cannot start (an unreadable `ca_file`).
    public static func make(
        _ configuration: ProviderSendConfiguration,
        routes: RouteTable,
        clock: any DeliveryClock = SystemDeliveryClock(),
        seed: UInt64 = 0x5eed_0f_5e4d,
        logger: (@Sendable (String) -> Void)? = nil,
        environment: [String: String]? = nil
    ) throws(SenderError) -> any DeliveryLane {
        let provider = configuration.provider
        var settings = configuration.settings
        settings.proxyVariables = ProxyVariables(environment: environment ?? ProcessInfo.processInfo.environment)
        if let written = settings.endpoint {
            // `https://host:port/` is the same origin written with its root path.
            let endpoint = written.hasSuffix("/") && written.utf8.count > "https://".utf8.count ? String(written.dropLast()) : written
            if let problem = EndpointCheck.problem(endpoint) {
                throw .invalidEndpoint(provider: provider.rawValue, endpoint: written, problem: problem)
            }
            settings.endpoint = endpoint
        }
        // One line at the start when libcurl sends instead of nghttp2, and why (a Web Push
        // origin's own line comes when its lane is made, if the exemptions depend on its host).
        let (engine, host) = engineChoice(provider: provider, settings: settings, routes: routes)
        if let notice = engine.notice(for: provider.rawValue, host: host) { logger?(notice) }

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
        // ADM documents its send API as HTTP/1.1 and promises no HTTP/2: its lane takes either
        // (libcurl), where APNs and FCM, which speak only HTTP/2, refuse anything else.
        return try lane(
            provider: provider, settings: settings, routes: LaneRoutes(table: routes, provider: provider, endpoint: settings.endpoint),
            authenticator: authenticator, oauth: oauth, clock: clock, seed: seed, logger: logger,
            allowsHTTP1: provider == .adm, engine: engine
        )
    }

    /// The engine of `provider`'s requests and the host it was decided for: libcurl when one of
    /// its origins (the `endpoint`, else the routes' own) goes through a proxy. Web Push decides
    /// per push service (`WebPushOrigins`): here only what holds for every origin. Webhooks
    /// always use libcurl (HTTP/1.1), and so does ADM, which may answer over HTTP/1.1
    /// (`acceptsHTTP1`, unless a proxy or `transport: curl` already chose libcurl).
    static func engineChoice(provider: Provider, settings: SenderSettings, routes: RouteTable) -> (EngineChoice, host: String?) {
        let (choice, host) = httpEngineChoice(provider: provider, settings: settings, routes: routes)
        if provider == .adm, choice.engine == .nghttp2 { return (EngineChoice(engine: .curl, reason: .acceptsHTTP1), host) }
        return (choice, host)
    }

    private static func httpEngineChoice(provider: Provider, settings: SenderSettings, routes: RouteTable) -> (EngineChoice, host: String?) {
        func decide(_ host: String, _ port: Int) -> EngineChoice {
            EngineChoice.decide(transport: settings.transport, proxy: settings.proxy, host: host, port: port, variables: settings.proxyVariables)
        }
        switch provider {
        case .webhook:
            return (EngineChoice(engine: .curl, reason: nil), nil)
        case .webpush:
            // no_proxy exempts some hosts, not all: each push service's lane decides, and says so.
            if settings.proxy == nil, settings.transport != .curl, settings.proxyVariables.dependsOnHost { return (.nghttp2, nil) }
            return (decide("", 443), nil)
        case .apns, .fcm, .adm:
            var origins: [WebPushOrigin] = []
            for route in routes.routes where route.provider == provider {
                if case .success(let origin) = WebPushOrigin.parse(Array((settings.endpoint ?? route.url.origin).utf8)), !origins.contains(origin) {
                    origins.append(origin)
                }
            }
            if origins.isEmpty { return (decide("", 443), nil) }
            for origin in origins {
                let choice = decide(origin.host, origin.port)
                if choice.engine == .curl { return (choice, origin.host) }
            }
            return (.nghttp2, nil)
        }
    }

    /// What `validate` and the run's start say about `configuration`'s engine: `nghttp2`,
    /// `libcurl (transport: curl)`, `libcurl through the proxy http://proxy:3128 (HTTPS_PROXY)`…
    public static func engineSummary(
        _ configuration: ProviderSendConfiguration, routes: RouteTable,
        environment: [String: String]? = nil
    ) -> String {
        var settings = configuration.settings
        settings.proxyVariables = ProxyVariables(environment: environment ?? ProcessInfo.processInfo.environment)
        switch configuration.provider {
        case .webhook:
            return "libcurl (HTTP/1.1)"
        case .webpush where settings.proxy == nil && settings.transport != .curl && settings.proxyVariables.dependsOnHost:
            let variables = settings.proxyVariables
            return "nghttp2, or libcurl for each push service \(variables.proxy?.name ?? "the proxy") applies to (\(variables.noProxy?.name ?? "no_proxy") exempts the others)"
        case .apns, .fcm, .webpush, .adm:
            return engineChoice(provider: configuration.provider, settings: settings, routes: routes).0.description
        }
    }

    /// The access tokens of an OAuth client (FCM, ADM), fetched over an exchange of their own
    /// (the token endpoint is another host than the provider's).
    private static func oauthLane(
        grant: some OAuthGrant, endpoint: OAuthTokenEndpoint, settings: SenderSettings, clock: any DeliveryClock
    ) throws(SenderError) -> (LaneAuthenticator, OAuthExchange) {
        guard endpoint.isTLS else { throw .tokenEndpointNotTLS(uri: endpoint.uri) }
        let exchange: OAuthExchange
        do {
            // The provider's proxy: key carries its token exchange too (another host, the same way out).
            exchange = try OAuthExchange(caFile: settings.caFile, proxy: settings.proxy)
        } catch {
            throw .transport(provider: grant.service == .fcm ? Provider.fcm.rawValue : Provider.adm.rawValue, detail: error.description)
        }
        return (.oauth(OAuthAccessTokenProvider(grant: grant, clock: clock) { request in await exchange.post(request) }), exchange)
    }

    /// A lane over `settings.transferThreads` transfer threads sending `routes` with
    /// `authenticator`'s credentials. `pinnedAddresses`: the transport connects to exactly these
    /// (a Web Push origin's checked addresses). `engine`: the caller's `EngineChoice` for the
    /// lane's origin; nil: decided from the settings without a host (an environment proxy then
    /// applies unless no_proxy exempts every host). HTTP/1.1 lanes (webhooks, ADM) always use libcurl.
    static func lane(
        provider: Provider, settings: SenderSettings, routes: LaneRoutes, authenticator: LaneAuthenticator, oauth: OAuthExchange?,
        clock: any DeliveryClock, seed: UInt64, logger: (@Sendable (String) -> Void)?, pinnedAddresses: [String] = [],
        allowsHTTP1: Bool = false, engine: EngineChoice? = nil, eventsInto group: LaneEventsInto? = nil
    ) throws(SenderError) -> ProviderLane {
        let chosen = engine ?? EngineChoice.decide(transport: settings.transport, proxy: settings.proxy, host: "", port: 443, variables: settings.proxyVariables)
        // A group's member yields into the group's events; its own stay empty and ended.
        let ownEvents = LaneEvents()
        let output = group?.output ?? ownEvents
        if group != nil { ownEvents.finish() }
        let exchange = oauth
        // Only OAuth waits for its tokens, and a group's members (Web Push, webhooks) sign their
        // own: nothing runs a member's requests, so a member that needed it is a defect.
        let credentialRequests = authenticator.waitsForExchange ? LaneCredentialRequests(authenticator) : nil
        if group != nil, credentialRequests != nil {
            throw .transport(provider: provider.rawValue, detail: "internal error: a grouped lane whose tokens are fetched")
        }
        // Each transfer thread: its share of the connections and the rate, a machine, a host and
        // a transport of its own; their events go into the lane's one stream.
        let threads = Swift.min(Swift.max(settings.transferThreads, 1), settings.connections)
        let ended = LaneEventsEnd(hosts: threads, output: output, ownsOutput: group == nil, credentialRequests: credentialRequests)
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
            let host = LaneHost(
                machine: machine, authenticator: authenticator, clock: clock, output: output, logger: logger, ended: ended,
                credentialRequests: credentialRequests
            )
            do {
                var transportConfiguration = TransportConfiguration(
                    connections: share.connections, streamsPerConnection: share.streamsPerConnection, caFile: settings.caFile,
                    capturedHeaderNames: ["apns-id", "retry-after", "x-amzn-requestid"]
                )
                transportConfiguration.pinnedAddresses = pinnedAddresses
                transportConfiguration.allowsHTTP1 = allowsHTTP1
                transportConfiguration.engine = allowsHTTP1 ? .curl : chosen.engine
                transportConfiguration.proxy = settings.proxy
                let transport = try HTTP2Transport(transportConfiguration, host: host)
                host.attach(transport)
                hosts.append(host)
                transports.append(transport)
            } catch {
                // Those already started end with nothing to send; nobody waits for them.
                for host in hosts { host.requestCancel() }
                credentialRequests?.end()
                oauth?.requestShutdown()
                throw .transport(provider: provider.rawValue, detail: error.description)
            }
        }
        return ProviderLane(
            provider: provider, events: ownEvents, hosts: hosts, transports: transports, oauth: exchange, credentialRequests: credentialRequests
        )
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
