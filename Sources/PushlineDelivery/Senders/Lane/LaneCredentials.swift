/// The credential a request was sent with (kept beside it: a rejection names the token that
/// was refused, so an old token's rejection does not cause a second refresh).
enum LaneCredential: Sendable {
    case apns(APNsProviderToken)
    /// An OAuth access token (FCM, ADM).
    case oauth(OAuthAccessToken)
    case vapid(VAPIDToken)
    /// Webhooks: each request is signed on its own (`WebhookSigner`), there is no shared line.
    case webhook(WebhookSigner)

    /// The `authorization` header line every request sent with it carries; nil when each
    /// request gets lines of its own (`requestLines`).
    var headerLine: String? {
        switch self {
        case .apns(let token): "authorization: " + token.authorizationHeaderValue
        case .oauth(let token): "authorization: " + token.authorizationHeaderValue
        case .vapid(let token): "authorization: " + token.authorizationHeaderValue
        case .webhook: nil
        }
    }

    /// The lines of one request when the credential signs each (webhooks); nil otherwise or
    /// when the request's route has no key.
    func requestLines(_ request: OutgoingRequest) -> TransportHeaderLines? {
        if case .webhook(let signer) = self { return signer.headerLines(for: request) }
        return nil
    }
}

/// How a lane authenticates: APNs provider tokens (signed here, shared by every connection),
/// OAuth access tokens (FCM, ADM: fetched from the token endpoint, cached), VAPID tokens (one
/// per push service origin) or webhook signatures.
enum LaneAuthenticator: Sendable {
    case apns(APNsProviderTokenSource, keyID: String, teamID: String)
    case oauth(OAuthAccessTokenProvider)
    /// Web Push: one lane per push service origin, each with the VAPID token for its `aud`.
    case vapid(VAPIDTokenSource, publicKey: String)
    /// Webhooks: one lane per channel, signing with its key.
    case webhook(WebhookSigner, channel: String, keyFingerprint: String)

    enum Failure: Error, Sendable {
        /// Try again later (the token endpoint was unreachable or busy).
        case retryable(String)
        /// Stop the provider with this message.
        case fatal(String)
    }

    /// The credential for the next requests.
    func credential() async throws(Failure) -> LaneCredential {
        if let immediate = immediateCredential() { return try immediate.get() }
        guard case .oauth(let provider) = self else { throw .fatal("internal error: no credential") }
        do {
            return .oauth(try await provider.accessToken())
        } catch {
            throw error.isRetryable ? .retryable(error.description) : .fatal(error.description)
        }
    }

    /// Its tokens come from an exchange that must be waited for (OAuth): the lane needs
    /// `LaneCredentialRequests`, run by `DeliveryLane.run()`.
    var waitsForExchange: Bool {
        if case .oauth = self { return true }
        return false
    }

    /// The credential without waiting, when it needs no exchange (APNs and VAPID sign their
    /// own tokens; webhooks sign each request); nil when it must be fetched (OAuth).
    func immediateCredential() -> Result<LaneCredential, Failure>? {
        switch self {
        case .apns(let source, _, _):
            do {
                return .success(.apns(try source.token()))
            } catch {
                return .failure(.fatal(error.description))
            }
        case .vapid(let source, _):
            do {
                return .success(.vapid(try source.token()))
            } catch {
                return .failure(.fatal(error.description))
            }
        case .webhook(let signer, _, _):
            return .success(.webhook(signer))
        case .oauth:
            return nil
        }
    }

    enum RefreshDecision: Sendable {
        /// Resend (the next `credential()` gives the token to use).
        case resend
        /// Stop the provider with this message.
        case stop(String)
    }

    /// The provider called `credential` expired (APNs 403 ExpiredProviderToken, FCM 401 without
    /// a detail, ADM 401): a new credential once, or stop.
    func rejected(_ credential: LaneCredential) async -> RefreshDecision {
        if let immediate = immediateVerdict(on: credential) { return immediate }
        guard case .oauth(let provider) = self, case .oauth(let token) = credential else {
            return .stop("internal error: a credential of another provider")
        }
        switch await provider.unauthorized(token) {
        case .success: return .resend
        case .failure(let error): return .stop(error.description)
        }
    }

    /// `rejected` without waiting, when the source decides alone (APNs signs a new token; Web
    /// Push and webhooks stop); nil when the token endpoint must be asked (OAuth).
    func immediateVerdict(on credential: LaneCredential) -> RefreshDecision? {
        // Each source judges only its own kind of credential: another kind is a defect.
        let otherKind = RefreshDecision.stop("internal error: a credential of another provider")
        switch self {
        case .apns(let source, _, _):
            guard case .apns(let token) = credential else { return otherKind }
            do {
                switch try source.providerTokenExpired(token) {
                case .resend: return .resend
                case .stopProvider(let error): return .stop(error.description)
                }
            } catch {
                return .stop(error.description)
            }
        case .oauth:
            guard case .oauth = credential else { return otherKind }
            return nil
        case .vapid:
            guard case .vapid = credential else { return otherKind }
            // No Web Push answer asks for a new token (401 stops the push service's lane).
            return .stop("the push service refused the VAPID token")
        case .webhook:
            guard case .webhook = credential else { return otherKind }
            return .stop("the webhook receiver refused the signature")
        }
    }

    /// Who the provider refused, for the stop message: the key and team, the client, the
    /// VAPID key, the channel.
    var identity: String {
        switch self {
        case .apns(_, let keyID, let teamID): "key id \(keyID), team id \(teamID)"
        case .oauth(let provider):
            switch provider.grant.service {
            case .fcm: "service account \(provider.grant.clientName)"
            case .adm: "client \(provider.grant.clientName)"
            }
        case .vapid(let source, let publicKey): "VAPID key \(publicKey.prefix(16))… for \(source.audience)"
        case .webhook(_, let channel, let fingerprint): "the \(channel) webhook (signing key \(fingerprint)…)"
        }
    }
}
