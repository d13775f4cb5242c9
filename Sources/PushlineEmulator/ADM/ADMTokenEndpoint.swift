/// `POST /auth/O2/token`: Amazon's client-credentials grant for ADM (the path Login with Amazon
/// serves it on). The client id and secret must be the configured security profile's and the
/// scope `messaging:push`; the access token it issues is what ADM's send endpoint accepts until
/// it expires.
struct ADMTokenEndpoint {
    let core: EmulatorCore

    static let path = "/auth/O2/token"
    static let grantType = "client_credentials"
    static let scope = "messaging:push"
    /// Amazon's access tokens start `Atc|`; a sender must not assume more of their shape.
    static let tokenPrefix = "Atc|"

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        guard let account = core.configuration.adm else {
            return reject(404, "invalid_request", "No ADM client is configured on this emulator.")
        }
        guard request.method == "POST" else { return reject(405, "invalid_request", "Use POST.") }
        if request.bodyTruncated { return reject(400, "invalid_request", "Request body too large.") }
        let form = OAuthEndpoint.parseForm(request.body)
        guard form["grant_type"] == Self.grantType else {
            return reject(400, "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.")
        }
        // Both compared whole, in constant time: the secret must not leak through the timing.
        let idMatches = ConstantTime.equal(Array((form["client_id"] ?? "").utf8), Array(account.clientID.utf8))
        let secretMatches = ConstantTime.equal(Array((form["client_secret"] ?? "").utf8), Array(account.clientSecret.utf8))
        guard idMatches && secretMatches else {
            return reject(401, "invalid_client", "Client authentication failed.")
        }
        guard form["scope"] == Self.scope else {
            return reject(400, "invalid_scope", "The request has an invalid scope: ADM needs \(Self.scope).")
        }

        let lifetime = core.configuration.accessTokenLifetimeSeconds
        let accessToken = Self.tokenPrefix + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let now = core.now
        core.state.update {
            $0.rememberADMAccessToken(accessToken, expiresAt: now + Int64(lifetime) * 1000, now: now)
            $0.stats.admOAuth.issued += 1
            $0.stats.statuses["200", default: 0] += 1
        }
        return .json(
            200, "{\"access_token\":\(JSONText.quoted(accessToken)),\"expires_in\":\(lifetime),\"scope\":\"\(Self.scope)\",\"token_type\":\"bearer\"}",
            headers: [("cache-control", "no-store")]
        )
    }

    private func reject(_ status: Int, _ error: String, _ description: String) -> EmulatorAnswer {
        core.state.update {
            $0.stats.admOAuth.rejected += 1
            $0.stats.statuses[String(status), default: 0] += 1
        }
        return .json(status, "{\"error\":\"\(error)\",\"error_description\":\(JSONText.quoted(description))}")
    }
}
