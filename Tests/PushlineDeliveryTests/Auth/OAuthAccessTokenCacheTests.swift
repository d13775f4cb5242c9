import PushlineDelivery
import Testing

@Suite("FCM access token cache")
struct OAuthAccessTokenCacheTests {
    static func response(_ token: String = "tok", lifetime: Int64 = 3600) throws -> OAuthTokenResponse {
        try OAuthTokenResponse.parse(OAuthHTTPResponse(
            status: 200, body: Array(#"{"access_token":"\#(token)","expires_in":\#(lifetime),"token_type":"Bearer"}"#.utf8)))
    }

    @Test("one fetch; the token is handed out until 5 minutes (10 % for short lives) before expiry")
    func validity() throws {
        var cache = OAuthAccessTokenCache()
        let t0 = DeliveryInstant.seconds(100)
        #expect(cache.accessToken(now: t0) == .fetch)
        // A second caller while the first fetches: nothing valid yet, so it waits.
        #expect(cache.accessToken(now: t0) == .wait)
        let token = cache.fetchSucceeded(try Self.response(), now: t0)
        #expect(token.authorizationHeaderValue == "Bearer tok")
        #expect(token.refreshAt == .seconds(100 + 3300))
        #expect(token.expiresAt == .seconds(100 + 3600))
        #expect(cache.accessToken(now: .seconds(100 + 3299)) == .use(token))

        // Past refreshAt: the first caller fetches, the others keep the old token until it expires.
        #expect(cache.accessToken(now: .seconds(100 + 3300)) == .fetch)
        #expect(cache.accessToken(now: .seconds(100 + 3599)) == .use(token))
        #expect(cache.accessToken(now: .seconds(100 + 3600)) == .wait)
        let next = cache.fetchSucceeded(try Self.response("tok2"), now: .seconds(100 + 3600))
        #expect(next.generation == 2)
        #expect(cache.accessToken(now: .seconds(100 + 3601)) == .use(next))

        // A 60 s token: 10 % margin, refresh after 54 s.
        var short = OAuthAccessTokenCache()
        _ = short.accessToken(now: .seconds(0))
        let brief = short.fetchSucceeded(try Self.response(lifetime: 60), now: .seconds(0))
        #expect(brief.refreshAt == .seconds(54))
    }

    @Test("a failed fetch lets the next caller fetch again")
    func failedFetch() {
        var cache = OAuthAccessTokenCache()
        #expect(cache.accessToken(now: .seconds(1)) == .fetch)
        cache.fetchFailed()
        #expect(cache.accessToken(now: .seconds(2)) == .fetch)
    }

    @Test("401: refresh once; a 401 to the fresh token within 5 minutes stops the provider")
    func unauthorized() throws {
        var cache = OAuthAccessTokenCache()
        _ = cache.accessToken(now: .seconds(0))
        let first = cache.fetchSucceeded(try Self.response("one"), now: .seconds(0))

        #expect(cache.unauthorized(first, now: .seconds(600)) == .resend)
        // The token is dropped: the next caller fetches.
        #expect(cache.accessToken(now: .seconds(600)) == .fetch)
        // Requests still in flight with the first token: resend, no second fetch.
        #expect(cache.unauthorized(first, now: .seconds(600)) == .resend)
        #expect(cache.accessToken(now: .seconds(600)) == .wait)
        let forced = cache.fetchSucceeded(try Self.response("two"), now: .seconds(601))
        #expect(forced.isForcedRefresh)
        #expect(cache.unauthorized(first, now: .seconds(602)) == .resend)
        #expect(cache.accessToken(now: .seconds(602)) == .use(forced))

        #expect(cache.unauthorized(forced, now: .seconds(601 + 299)) == .stopProvider)
    }

    @Test("a forced token that worked for 5 minutes is ordinary: a 401 refreshes again")
    func forcedAfterProbation() throws {
        var cache = OAuthAccessTokenCache()
        _ = cache.accessToken(now: .seconds(0))
        let first = cache.fetchSucceeded(try Self.response(), now: .seconds(0))
        _ = cache.unauthorized(first, now: .seconds(10))
        _ = cache.accessToken(now: .seconds(10))
        let forced = cache.fetchSucceeded(try Self.response(), now: .seconds(10))
        #expect(cache.unauthorized(forced, now: .seconds(310)) == .resend)
        #expect(cache.accessToken(now: .seconds(310)) == .fetch)
    }
}
