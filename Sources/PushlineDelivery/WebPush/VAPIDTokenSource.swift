import PushlineCore
import Crypto
import Synchronization

/// One signed VAPID token (RFC 8292) for one push service origin. Redacts itself.
public struct VAPIDToken: Sendable, Equatable, CustomStringConvertible {
    /// `aud`: the push service's origin.
    public let audience: String
    /// `exp`, UNIX seconds.
    public let expiresAtUnixTime: Int64
    /// When it was signed, on the monotonic clock.
    public let signedAt: DeliveryInstant
    /// The `authorization` header value: `vapid t=<JWT>, k=<public key>`.
    public let authorizationHeaderValue: String

    public var description: String { "VAPIDToken(aud: \(audience), exp: \(expiresAtUnixTime), jwt: redacted)" }
}

/// The VAPID token of one push service origin, signed when first needed and again once it is
/// an hour old; each is valid for 12 hours (RFC 8292 allows at most 24), so a clock that is a
/// few hours off on either side still sends valid tokens. Signing happens under the lock, at
/// most once an hour per origin.
public final class VAPIDTokenSource: Sendable {
    public static let lifetimeSeconds: Int64 = 12 * 3600
    public static let refreshAge: Duration = .seconds(3600)

    private let key: VAPIDKey
    /// The origin (`https://host[:port]`), as the push service compares `aud`.
    public let audience: String
    private let clock: any DeliveryClock
    private let current = Mutex<VAPIDToken?>(nil)

    public init(key: VAPIDKey, audience: String, clock: any DeliveryClock) {
        self.key = key
        self.audience = audience
        self.clock = clock
    }

    /// The token to put on the next requests.
    public func token() throws(VAPIDError) -> VAPIDToken {
        let now = clock.now()
        let unixTime = clock.unixTime()
        return try current.withLock { current throws(VAPIDError) -> VAPIDToken in
            if let token = current, now.duration(since: token.signedAt) < Self.refreshAge { return token }
            let made = try Self.sign(key: key, audience: audience, expiresAt: unixTime &+ Self.lifetimeSeconds, now: now)
            current = made
            return made
        }
    }

    /// `base64url({"typ":"JWT","alg":"ES256"}) . base64url({"aud":…,"exp":…,"sub":…}) . base64url(r||s)`.
    static func sign(key: VAPIDKey, audience: String, expiresAt: Int64, now: DeliveryInstant) throws(VAPIDError) -> VAPIDToken {
        // The audience is an origin checked by `WebPushOrigin` and the subject by `VAPIDKey`:
        // neither needs escaping.
        let header = #"{"typ":"JWT","alg":"ES256"}"#
        let claims = #"{"aud":"\#(audience)","exp":\#(expiresAt),"sub":"\#(key.subject)"}"#
        guard let jwt = ES256JWT.sign(header: header, claims: claims, scalar: key.privateKeyScalar) else { throw .signingFailed }
        return VAPIDToken(
            audience: audience, expiresAtUnixTime: expiresAt, signedAt: now,
            authorizationHeaderValue: "vapid t=" + jwt + ", k=" + key.publicKeyText
        )
    }
}
