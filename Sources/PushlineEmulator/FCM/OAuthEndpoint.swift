import Foundation

/// `POST /token`: Google's OAuth 2.0 JWT-bearer grant for service accounts. Verifies the RS256
/// assertion against the configured service account and issues an access token that
/// `messages:send` accepts until it expires.
struct OAuthEndpoint {
    let core: EmulatorCore

    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let acceptedScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging",
        "https://www.googleapis.com/auth/cloud-platform",
    ]
    static let googleTokenURI = "https://oauth2.googleapis.com/token"
    /// Google refuses assertions meant to live longer than an hour.
    static let maxAssertionLifetime: Int64 = 3600

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        guard let account = core.configuration.fcm else {
            return reject(404, "invalid_request", "No service account is configured on this emulator.")
        }
        guard request.method == "POST" else { return reject(405, "invalid_request", "Use POST.") }
        if request.bodyTruncated { return reject(400, "invalid_request", "Request body too large.") }
        let form = Self.parseForm(request.body)
        guard form["grant_type"] == Self.grantType else {
            return reject(400, "unsupported_grant_type", "Invalid grant_type.")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return reject(400, "invalid_request", "Missing required parameter: assertion")
        }
        guard let jwt = CompactJWT(Substring(assertion)),
              jwt.header["alg"]?.stringEquals("RS256") == true
        else { return reject(400, "invalid_grant", "Invalid JWT.") }
        if let kid = jwt.header["kid"], !kid.stringEquals(account.privateKeyID) {
            return reject(400, "invalid_grant", "Invalid JWT Signature.")
        }
        guard jwt.claims["iss"]?.stringEquals(account.clientEmail) == true else {
            return reject(400, "invalid_grant", "Invalid grant: account not found")
        }
        guard let audience = jwt.claims["aud"]?.stringValue, acceptedAudiences.contains(audience) else {
            return reject(400, "invalid_grant", "Invalid JWT: Failed audience check.")
        }
        guard let scope = jwt.claims["scope"]?.stringValue,
              scope.split(separator: " ").contains(where: { Self.acceptedScopes.contains(String($0)) })
        else { return reject(400, "invalid_scope", "Invalid OAuth scope or ID token audience provided.") }
        let now = core.configuration.clock.seconds
        let skew = Int64(core.configuration.clockSkewSeconds)
        guard let iat = jwt.integerClaim("iat"), let exp = jwt.integerClaim("exp"),
              exp > iat, ClaimTime.minus(exp, iat) <= Self.maxAssertionLifetime,
              iat <= ClaimTime.plus(now, skew), exp > ClaimTime.minus(now, skew)
        else {
            return reject(400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
        }
        guard SignatureCheck.rs256(jwt, key: account.publicKey) else {
            return reject(400, "invalid_grant", "Invalid JWT Signature.")
        }

        let lifetime = core.configuration.accessTokenLifetimeSeconds
        let accessToken = "ya29.emulator." + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let nowMilliseconds = core.now
        core.state.update {
            $0.rememberAccessToken(accessToken, expiresAt: nowMilliseconds + Int64(lifetime) * 1000, now: nowMilliseconds)
            $0.stats.oauth.issued += 1
            $0.stats.statuses["200", default: 0] += 1
        }
        return .json(200, "{\"access_token\":\(JSONText.quoted(accessToken)),\"expires_in\":\(lifetime),\"token_type\":\"Bearer\"}",
                     headers: [("cache-control", "no-store")])
    }

    /// Google's endpoint, and this emulator's own `/token` by address and by name.
    private var acceptedAudiences: Set<String> {
        let port = core.boundPort.withLockedValue { $0 }
        return [Self.googleTokenURI, "https://127.0.0.1:\(port)/token", "https://localhost:\(port)/token"]
    }

    private func reject(_ status: Int, _ error: String, _ description: String) -> EmulatorAnswer {
        core.state.update {
            $0.stats.oauth.rejected += 1
            $0.stats.statuses[String(status), default: 0] += 1
        }
        return .json(status, "{\"error\":\"\(error)\",\"error_description\":\(JSONText.quoted(description))}")
    }

    /// application/x-www-form-urlencoded: `+` is a space, `%XX` a byte; a malformed escape
    /// makes the value unreadable (nil), never a trap. The first occurrence of a name wins.
    static func parseForm(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { continue }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if fields[name] == nil, let value { fields[name] = value }
        }
        return fields
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard bytes.distance(from: index, to: bytes.endIndex) >= 3,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
