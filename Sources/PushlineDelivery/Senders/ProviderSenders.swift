public import PushlineCore

/// Builds the sending lane of one provider.
public enum ProviderSenders {
    /// The lane for `configuration.provider` (APNs or FCM), sending the requests of `routes`'
    /// routes to that provider. The transport (and, for FCM, the OAuth exchange with the
    /// service account's `token_uri`) starts here; nothing is sent before `send`.
    ///
    /// - `clock`: intervals (rate, retries, token ages, latency); the system clock in a run.
    /// - `seed`: the retry jitter's random source (reproducible runs and tests).
    /// - `logger`: one line per notable event (the provider stopped, the token endpoint failed);
    ///   never a secret.
    ///
    /// Throws `SenderError` for a provider without a sender, credentials of another provider,
    /// an `endpoint` that is not `https://host[:port]`, an FCM `token_uri` that is not https,
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
        var oauth: OAuthExchange?
        switch (provider, configuration.credentials) {
        case (.apns, .apns(let key)):
            authenticator = .apns(APNsProviderTokenSource(key: key, clock: clock), keyID: key.keyID, teamID: key.teamID)
        case (.fcm, .fcm(let account)):
            guard account.tokenEndpoint.isTLS else { throw .tokenEndpointNotTLS(uri: account.tokenEndpoint.uri) }
            let exchange: OAuthExchange
            do {
                exchange = try OAuthExchange(caFile: settings.caFile)
            } catch {
                throw .transport(provider: provider.rawValue, detail: error.description)
            }
            oauth = exchange
            let tokens = FCMAccessTokenProvider(account: account, clock: clock) { request in await exchange.post(request) }
            authenticator = .fcm(tokens, clientEmail: account.clientEmail)
        case (.apns, .fcm):
            throw .credentialsMismatch(provider: provider.rawValue, credentials: "FCM")
        case (.fcm, .apns):
            throw .credentialsMismatch(provider: provider.rawValue, credentials: "APNs")
        default:
            throw .unsupportedProvider(provider.rawValue)
        }

        // Every request yields at most two events, and the run's batch window bounds the
        // requests given to a lane whose events are not yet read (docs/delivery.md).
        let (events, output) = AsyncStream<[SendEvent]>.makeStream(bufferingPolicy: .unbounded)
        let machine = LaneStateMachine(
            provider: provider, settings: settings,
            routes: LaneRoutes(table: routes, provider: provider, endpoint: settings.endpoint),
            identity: authenticator.identity, seed: seed, now: clock.now()
        )
        let exchange = oauth
        let host = LaneHost(
            machine: machine, authenticator: authenticator, clock: clock, output: output, logger: logger,
            onEnd: { await exchange?.shutdown() }
        )
        let transport: HTTP2Transport
        do {
            transport = try HTTP2Transport(TransportConfiguration(
                connections: settings.connections, streamsPerConnection: settings.streamsPerConnection, caFile: settings.caFile,
                capturedHeaderNames: ["apns-id", "retry-after"]
            ), host: host)
        } catch {
            if let oauth { Task { await oauth.shutdown() } }
            throw .transport(provider: provider.rawValue, detail: error.description)
        }
        host.attach(transport)
        return ProviderLane(provider: provider, events: events, host: host, transport: transport)
    }
}
