import Synchronization

/// The one provider token of an APNs key, shared by every connection and thread of a process:
/// `APNsProviderTokenState` under a lock, reading the injected clock. Signing (tens of
/// microseconds, once per 50 minutes) happens under the lock so two threads never both sign.
public final class APNsProviderTokenSource: Sendable {
    private let state: Mutex<APNsProviderTokenState>
    private let clock: any DeliveryClock

    public init(key: APNsSigningKey, clock: any DeliveryClock) {
        state = Mutex(APNsProviderTokenState(key: key))
        self.clock = clock
    }

    /// The token to put on the next request.
    public func token() throws(APNsAuthError) -> APNsProviderToken {
        let now = clock.now()
        let unixTime = clock.unixTime()
        return try state.withLock { state throws(APNsAuthError) in try state.token(now: now, unixTime: unixTime) }
    }

    /// The request sent with `rejected` got 403 ExpiredProviderToken: resend with the token
    /// returned, or stop the provider.
    public func providerTokenExpired(_ rejected: APNsProviderToken) throws(APNsAuthError) -> ExpiredProviderTokenDecision {
        let now = clock.now()
        let unixTime = clock.unixTime()
        return try state.withLock { state throws(APNsAuthError) in
            try state.providerTokenExpired(rejected, now: now, unixTime: unixTime)
        }
    }
}
