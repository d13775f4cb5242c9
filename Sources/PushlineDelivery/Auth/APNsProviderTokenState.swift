import PushlineCore
import Crypto
import Foundation

/// The provider token of one APNs key (one team), shared by every connection: when to sign a
/// new one and what to do when APNs calls one expired. A value type: the caller keeps it
/// under a lock (`APNsProviderTokenSource` does) and passes the time in.
///
/// Rules (docs/delivery.md, "APNs provider token"):
/// - a token is reused until it is 50 minutes old, then replaced (APNs rejects tokens older
///   than an hour and answers 429 TooManyProviderTokenUpdates to refreshes more often than
///   every 20 minutes);
/// - 403 ExpiredProviderToken for a token older than the current one: resend with the current
///   one (another request already replaced it);
/// - for the current token: sign a new one once and resend, unless the current token is
///   itself such a forced replacement less than 20 minutes old. Then APNs has called two
///   fresh tokens in a row expired, which no new token can fix (our `iat` disagrees with
///   Apple's clock by more than an hour, or the key is wrong): stop the provider. A forced
///   token that survives 20 minutes is ordinary again.
public struct APNsProviderTokenState: Sendable {
    public static let refreshAge: Duration = .seconds(50 * 60)
    public static let minimumRefreshInterval: Duration = .seconds(20 * 60)

    public let key: APNsSigningKey
    public private(set) var current: APNsProviderToken?

    public init(key: APNsSigningKey) {
        self.key = key
    }

    /// The token to send now: the current one, or a new one when there is none or it is
    /// `refreshAge` old.
    public mutating func token(now: DeliveryInstant, unixTime: Int64) throws(APNsAuthError) -> APNsProviderToken {
        if let current, now.duration(since: current.issuedAt) < Self.refreshAge {
            return current
        }
        return try sign(now: now, unixTime: unixTime, forced: false)
    }

    /// What to do with a request APNs answered 403 ExpiredProviderToken, sent with `rejected`.
    public mutating func providerTokenExpired(
        _ rejected: APNsProviderToken, now: DeliveryInstant, unixTime: Int64
    ) throws(APNsAuthError) -> ExpiredProviderTokenDecision {
        guard let current else {
            return .resend(with: try sign(now: now, unixTime: unixTime, forced: true))
        }
        if rejected.generation < current.generation {
            return .resend(with: current)
        }
        let age = now.duration(since: current.issuedAt)
        if current.isForcedRefresh && age < Self.minimumRefreshInterval {
            return .stopProvider(.expiredTwice(keyID: key.keyID, issuedAtUnixTime: current.issuedAtUnixTime))
        }
        return .resend(with: try sign(now: now, unixTime: unixTime, forced: true))
    }

    private mutating func sign(now: DeliveryInstant, unixTime: Int64, forced: Bool) throws(APNsAuthError) -> APNsProviderToken {
        let jwt = try Self.makeJWT(key: key, issuedAt: unixTime)
        let token = APNsProviderToken(
            generation: (current?.generation ?? 0) &+ 1,
            issuedAtUnixTime: unixTime,
            issuedAt: now,
            isForcedRefresh: forced,
            authorizationHeaderValue: "bearer " + jwt
        )
        current = token
        return token
    }

    /// `base64url({"alg":"ES256","kid":…}) . base64url({"iss":…,"iat":…}) . base64url(r||s)`.
    static func makeJWT(key: APNsSigningKey, issuedAt: Int64) throws(APNsAuthError) -> String {
        // The ids are checked ASCII letters and digits: nothing to escape.
        let header = #"{"alg":"ES256","kid":"\#(key.keyID)"}"#
        let claims = #"{"iss":"\#(key.teamID)","iat":\#(issuedAt)}"#
        guard let jwt = ES256JWT.sign(header: header, claims: claims, scalar: key.privateKeyScalar) else { throw .signingFailed }
        return jwt
    }
}

/// What `APNsProviderTokenState.providerTokenExpired` decided.
public enum ExpiredProviderTokenDecision: Sendable, Equatable {
    /// Resend the request with this token.
    case resend(with: APNsProviderToken)
    /// Stop sending to this APNs provider: the error says why.
    case stopProvider(APNsAuthError)
}
