/// The credential a request was sent with (kept beside it: a rejection names the token that
/// was refused, so an old token's rejection does not cause a second refresh).
enum LaneCredential: Sendable {
    case apns(APNsProviderToken)
    case fcm(FCMAccessToken)
    case vapid(VAPIDToken)

    /// The `authorization` header line.
    var headerLine: String {
        switch self {
        case .apns(let token): "authorization: " + token.authorizationHeaderValue
        case .fcm(let token): "authorization: " + token.authorizationHeaderValue
        case .vapid(let token): "authorization: " + token.authorizationHeaderValue
        }
    }
}

/// How a lane authenticates: APNs provider tokens (signed here, shared by every connection) or
/// FCM access tokens (fetched from the service account's `token_uri`, cached).
enum LaneAuthenticator: Sendable {
    case apns(APNsProviderTokenSource, keyID: String, teamID: String)
    case fcm(FCMAccessTokenProvider, clientEmail: String)
    /// Web Push: one lane per push service origin, each with the VAPID token for its `aud`.
    case vapid(VAPIDTokenSource, publicKey: String)

    enum Failure: Error, Sendable {
        /// Try again later (the token endpoint was unreachable or busy).
        case retryable(String)
        /// Stop the provider with this message.
        case fatal(String)
    }

    /// The credential for the next requests.
    func credential() async throws(Failure) -> LaneCredential {
        switch self {
        case .apns(let source, _, _):
            do {
                return .apns(try source.token())
            } catch {
                throw .fatal(error.description)
            }
        case .vapid(let source, _):
            do {
                return .vapid(try source.token())
            } catch {
                throw .fatal(error.description)
            }
        case .fcm(let provider, _):
            do {
                return .fcm(try await provider.accessToken())
            } catch {
                throw error.isRetryable ? .retryable(error.description) : .fatal(error.description)
            }
        }
    }

    /// The credential without waiting, when it needs no exchange (APNs signs its own tokens);
    /// nil when it must be fetched (FCM).
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
        case .fcm:
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
    /// a detail): a new credential once, or stop.
    func rejected(_ credential: LaneCredential) async -> RefreshDecision {
        switch (self, credential) {
        case (.apns(let source, _, _), .apns(let token)):
            do {
                switch try source.providerTokenExpired(token) {
                case .resend: return .resend
                case .stopProvider(let error): return .stop(error.description)
                }
            } catch {
                return .stop(error.description)
            }
        case (.fcm(let provider, _), .fcm(let token)):
            switch await provider.unauthorized(token) {
            case .success: return .resend
            case .failure(let error): return .stop(error.description)
            }
        case (.vapid, .vapid):
            // No Web Push answer asks for a new token (401 stops the push service's lane).
            return .stop("the push service refused the VAPID token")
        default:
            return .stop("internal error: a credential of another provider")
        }
    }

    /// Who the provider refused, for the stop message: the key and team, or the client email.
    var identity: String {
        switch self {
        case .apns(_, let keyID, let teamID): "key id \(keyID), team id \(teamID)"
        case .fcm(_, let clientEmail): "service account \(clientEmail)"
        case .vapid(let source, let publicKey): "VAPID key \(publicKey.prefix(16))… for \(source.audience)"
        }
    }
}
