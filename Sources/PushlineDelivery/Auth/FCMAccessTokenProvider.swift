/// The access token of one FCM service account for every sender of a process: runs
/// `FCMAccessTokenCache` with the integrator's HTTP exchange. One fetch at a time; callers
/// that need a token while it runs wait for it (without a thread: continuations).
public actor FCMAccessTokenProvider {
    /// Posts a token request and returns the answer (status 0 when none arrived). Supplied by
    /// the integrator (it goes over the libcurl transport); must not throw.
    public typealias Exchange = @Sendable (OAuthTokenRequest) async -> OAuthHTTPResponse

    public nonisolated let account: FCMServiceAccount
    private let clock: any DeliveryClock
    private let exchange: Exchange
    private var cache = FCMAccessTokenCache()
    private var waiters: [CheckedContinuation<Result<FCMAccessToken, FCMAuthError>, Never>] = []
    private var stopped: FCMAuthError?

    public init(account: FCMServiceAccount, clock: any DeliveryClock, exchange: @escaping Exchange) {
        self.account = account
        self.clock = clock
        self.exchange = exchange
    }

    /// A token to send with. Throws the fetch's error (see `FCMAuthError.isRetryable`), or the
    /// error that stopped the provider.
    public func accessToken() async throws(FCMAuthError) -> FCMAccessToken {
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

    /// FCM answered 401 (no FcmError detail) to a request sent with `token`: resend (asking
    /// `accessToken` again), or the error that stops the provider.
    public func unauthorized(_ token: FCMAccessToken) -> Result<Void, FCMAuthError> {
        if let stopped { return .failure(stopped) }
        switch cache.unauthorized(token, now: clock.now()) {
        case .resend:
            return .success(())
        case .stopProvider:
            let error = FCMAuthError.unauthorizedAfterRefresh(clientEmail: account.clientEmail)
            stopped = error
            return .failure(error)
        }
    }

    private func fetch() async -> Result<FCMAccessToken, FCMAuthError> {
        do throws(FCMAuthError) {
            let request = try FCMAssertion.tokenRequest(account: account, issuedAt: clock.unixTime())
            // The lifetime counts from before the request: the server's clock started it
            // somewhere during the exchange, never before.
            let requestedAt = clock.now()
            let response = try OAuthTokenResponse.parse(await exchange(request))
            return .success(cache.fetchSucceeded(response, now: requestedAt))
        } catch {
            cache.fetchFailed()
            if !error.isRetryable { stopped = error }
            return .failure(error)
        }
    }
}
