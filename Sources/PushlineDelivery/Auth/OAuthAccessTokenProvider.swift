/// The access token of one OAuth client (an FCM service account, an ADM security profile) for
/// every sender of a process: runs `OAuthAccessTokenCache` with the integrator's HTTP exchange. One fetch at a time; callers
/// that need a token while it runs wait for it (without a thread: continuations).
public actor OAuthAccessTokenProvider {
    /// Posts a token request and returns the answer (status 0 when none arrived). Supplied by
    /// the integrator (it goes over the libcurl transport); must not throw.
    public typealias Exchange = @Sendable (OAuthTokenRequest) async -> OAuthHTTPResponse

    public nonisolated let grant: any OAuthGrant
    private let clock: any DeliveryClock
    private let exchange: Exchange
    private var cache = OAuthAccessTokenCache()
    private var waiters: [CheckedContinuation<Result<OAuthAccessToken, OAuthError>, Never>] = []
    private var stopped: OAuthError?

    public init(grant: any OAuthGrant, clock: any DeliveryClock, exchange: @escaping Exchange) {
        self.grant = grant
        self.clock = clock
        self.exchange = exchange
    }

    /// A token to send with. Throws the fetch's error (see `OAuthError.isRetryable`), or the
    /// error that stopped the provider.
    public func accessToken() async throws(OAuthError) -> OAuthAccessToken {
        if let stopped { throw stopped }
        switch cache.accessToken(now: clock.now()) {
        case .use(let token):
            return token
        case .wait:
            let result = await withCheckedContinuation { waiters.append($0) }
            return try result.get()
        case .fetch:
            let result = await fetch()
            let waiting = waiters
            waiters.removeAll()
            for waiter in waiting { waiter.resume(returning: result) }
            return try result.get()
        }
    }

    /// The provider answered 401 (FCM without a FcmError detail, ADM AccessTokenExpired) to a request sent with `token`: resend (asking
    /// `accessToken` again), or the error that stops the provider.
    public func unauthorized(_ token: OAuthAccessToken) -> Result<Void, OAuthError> {
        if let stopped { return .failure(stopped) }
        switch cache.unauthorized(token, now: clock.now()) {
        case .resend:
            return .success(())
        case .stopProvider:
            let error = OAuthError.unauthorizedAfterRefresh(grant.service, client: grant.clientName)
            stopped = error
            return .failure(error)
        }
    }

    private func fetch() async -> Result<OAuthAccessToken, OAuthError> {
        do throws(OAuthError) {
            let request = try grant.tokenRequest(issuedAt: clock.unixTime())
            // The lifetime counts from before the request: the server's clock started it
            // somewhere during the exchange, never before.
            let requestedAt = clock.now()
            let response = try OAuthTokenResponse.parse(await exchange(request), service: grant.service)
            return .success(cache.fetchSucceeded(response, now: requestedAt))
        } catch {
            cache.fetchFailed()
            if !error.isRetryable { stopped = error }
            return .failure(error)
        }
    }
}
