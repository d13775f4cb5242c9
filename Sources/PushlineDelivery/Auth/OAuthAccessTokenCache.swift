/// The access token of one OAuth client (FCM service account, ADM security profile), as a state machine over an injected time:
/// when to fetch a new one, who fetches it (one caller at a time; others wait, or keep using
/// a still-valid token), and what a 401 means. A value type: `OAuthAccessTokenProvider` runs it
/// in an actor with the HTTP exchange.
///
/// Rules (docs/delivery.md, "FCM OAuth"):
/// - a token is handed out until `refreshAt` = expiry − min(5 min, 10 % of its lifetime)
///   (a 3599 s Google token: for 54 min 59 s);
/// - past `refreshAt` the first caller fetches; while it does, others get the old token if it
///   has not expired, or wait;
/// - 401 for a token older than the current one: resend with the current one;
/// - 401 for the current token: drop it, fetch a new one, resend; if the current token was
///   itself fetched because of a 401 less than `forcedProbation` ago, the new credentials are
///   refused too: a configuration error (stop the provider), never a loop of fetches.
public struct OAuthAccessTokenCache: Sendable {
    public static let maximumRefreshMargin: Duration = .seconds(300)
    /// How long a token fetched after a 401 must last before a 401 counts as ordinary again.
    public static let forcedProbation: Duration = .seconds(300)

    public private(set) var current: OAuthAccessToken?
    public private(set) var isFetching = false
    private var lastGeneration: UInt64 = 0
    private var nextFetchIsForced = false

    public init() {}

    public enum Action: Sendable, Equatable {
        /// Send with this token.
        case use(OAuthAccessToken)
        /// You fetch a new token (sign an assertion, exchange it), then report with
        /// `fetchSucceeded` or `fetchFailed`.
        case fetch
        /// Another caller is fetching and no valid token exists: wait for its report.
        case wait
    }

    public mutating func accessToken(now: DeliveryInstant) -> Action {
        if let current, now < current.refreshAt { return .use(current) }
        if isFetching {
            if let current, now < current.expiresAt { return .use(current) }
            return .wait
        }
        isFetching = true
        return .fetch
    }

    /// The fetch returned a token: it becomes current and is handed to the waiters.
    public mutating func fetchSucceeded(_ response: OAuthTokenResponse, now: DeliveryInstant) -> OAuthAccessToken {
        let lifetime = response.expiresIn
        // 10 % of the lifetime, at most 5 minutes.
        let tenth = Duration.nanoseconds(DurationMath.nanoseconds(lifetime) / 10)
        let margin = Swift.min(tenth, Self.maximumRefreshMargin)
        let expiresAt = now.advanced(by: lifetime)
        lastGeneration &+= 1
        let token = OAuthAccessToken(
            generation: lastGeneration,
            obtainedAt: now,
            refreshAt: expiresAt.advanced(by: .zero - margin),
            expiresAt: expiresAt,
            isForcedRefresh: nextFetchIsForced,
            authorizationHeaderValue: "Bearer " + response.accessToken
        )
        current = token
        isFetching = false
        nextFetchIsForced = false
        return token
    }

    /// The fetch failed: the waiters get its error; the next caller fetches again.
    public mutating func fetchFailed() {
        isFetching = false
    }

    public enum UnauthorizedDecision: Sendable, Equatable {
        /// Ask `accessToken` again and resend (a new token is, or will be, fetched).
        case resend
        /// Stop sending to this provider: fresh credentials were refused too.
        case stopProvider
    }

    /// The provider answered 401 (FCM without a detail, ADM AccessTokenExpired) to a request sent with `token`.
    public mutating func unauthorized(_ token: OAuthAccessToken, now: DeliveryInstant) -> UnauthorizedDecision {
        guard let current, token.generation >= current.generation else {
            // An older token (or one already dropped): the current one, or the fetch under
            // way, answers it.
            return .resend
        }
        if current.isForcedRefresh && now.duration(since: current.obtainedAt) < Self.forcedProbation {
            return .stopProvider
        }
        self.current = nil
        nextFetchIsForced = true
        return .resend
    }
}
