import PushlineCore

/// `POST /3/device/:token`: checks what APNs checks, in the order a sender can act on
/// (credentials, then headers, then token and payload), and answers APNs' statuses and reasons.
struct APNsEndpoint {
    let core: EmulatorCore

    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm",
        "liveactivity", "pushtotalk", "widgets",
    ]

    /// The topic suffix each push type requires (PROVIDERS.md).
    static func topicSuffix(for pushType: String) -> String {
        switch pushType {
        case "voip": ".voip"
        case "complication": ".complication"
        case "fileprovider": ".pushkit.fileprovider"
        case "location": ".location-query"
        case "liveactivity": ".push-type.liveactivity"
        case "pushtotalk": ".voip-ptt"
        default: ""
        }
    }

    /// Headers whose repetition APNs refuses with DuplicateHeaders.
    static let singleHeaders = [
        "authorization", "apns-push-type", "apns-id", "apns-expiration", "apns-priority", "apns-topic", "apns-collapse-id",
    ]

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        let tokenText = request.path.dropFirst("/3/device/".count)
        // The token as recorded in stats: only hex tokens are recorded under their own name, so
        // a hostile path cannot grow the per-token table with junk keys.
        let token = String(tokenText)
        let recordedToken = Self.isHex(tokenText) ? token : nil
        core.state.update { $0.countRequest(.apns) }
        guard let account = core.configuration.apns else {
            return reject(404, "BadPath", token: nil)
        }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed", token: recordedToken) }
        for name in Self.singleHeaders where request.count(name) > 1 {
            return reject(400, "DuplicateHeaders", token: recordedToken)
        }

        switch verifyProviderToken(request.header("authorization"), account: account) {
        case .accepted: break
        case .rejected(let reason): return reject(403, reason, token: recordedToken)
        }
        // From here on the provider token was good: the connection may widen its stream limit
        // whatever else is wrong with this request.
        if let (status, reason) = checkRequest(request, account: account, token: tokenText) {
            var rejected = EmulatorAnswer.json(status, "{\"reason\":\"\(reason)\"}")
            rejected.authenticated = true
            return core.recordRejected(.apns, token: recordedToken, answer: rejected, label: "\(status) \(reason)")
        }

        let requestID = request.header("apns-id")
        return core.faultOrNormal(
            .apns, token: token,
            normal: { attempt in
                let id = requestID ?? uuid(core.idBits(.apns, token: token, attempt: attempt))
                return (EmulatorAnswer(action: .respond(status: 200, headers: [("apns-id", id)], body: [])), "200", true, false)
            },
            fault: { fault, attempt in
                let id = requestID ?? uuid(core.idBits(.apns, token: token, attempt: attempt))
                return faultAnswer(fault, apnsID: id)
            }
        )
    }

    private func faultAnswer(_ fault: InjectedFault, apnsID: String) -> (EmulatorAnswer, label: String) {
        let retryAfter = ("retry-after", String(core.configuration.faults.retryAfterSeconds))
        let (status, reason, extra): (Int, String, [(String, String)]) = switch fault {
        case .apnsUnregistered: (410, "Unregistered", [])
        case .apnsBadDeviceToken: (400, "BadDeviceToken", [])
        case .tooManyRequests: (429, "TooManyRequests", [retryAfter])
        case .internalServerError: (500, "InternalServerError", [])
        case .serviceUnavailable: (503, "ServiceUnavailable", [retryAfter])
        // Not reachable for APNs (FaultRates.applies); answered as APNs would a server fault.
        case .fcmUnregistered, .webpushGone, .admUnregistered, .admReplaced, .quotaExceeded, .refusedStream, .dropConnection:
            (500, "InternalServerError", [])
        }
        let body = status == 410
            ? "{\"reason\":\"\(reason)\",\"timestamp\":\(core.now)}"
            : "{\"reason\":\"\(reason)\"}"
        return (.json(status, body, headers: [("apns-id", apnsID)] + extra), "\(status) \(reason)")
    }

    private func reject(_ status: Int, _ reason: String, token: String?) -> EmulatorAnswer {
        core.recordRejected(.apns, token: token, answer: .json(status, "{\"reason\":\"\(reason)\"}"), label: "\(status) \(reason)")
    }

    /// The first problem with the headers, token or payload, as APNs would answer it.
    private func checkRequest(_ request: EmulatorRequest, account: APNsAccount, token: Substring) -> (Int, String)? {
        func bad(_ status: Int, _ reason: String) -> (Int, String) { (status, reason) }

        let pushType = request.header("apns-push-type") ?? "alert"
        if !Self.pushTypes.contains(pushType) { return bad(400, "InvalidPushType") }

        guard let topic = request.header("apns-topic") else { return bad(400, "MissingTopic") }
        if topic.isEmpty || topic.utf8.count > 255 || !topic.utf8.allSatisfy(Self.isTopicByte) { return bad(400, "BadTopic") }
        if topic != account.topic + Self.topicSuffix(for: pushType) { return bad(400, "TopicDisallowed") }

        if let priority = request.header("apns-priority") {
            guard ["1", "5", "10"].contains(priority) else { return bad(400, "BadPriority") }
            if pushType == "background" && priority != "5" { return bad(400, "BadPriority") }
        }
        if let expiration = request.header("apns-expiration") {
            guard (1...10).contains(expiration.utf8.count), expiration.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return bad(400, "BadExpirationDate") }
        }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > ProviderLimits.apnsCollapseID {
            return bad(400, "BadCollapseId")
        }
        if let id = request.header("apns-id"), !Self.isUUID(id) { return bad(400, "BadMessageId") }

        if token.isEmpty { return bad(400, "MissingDeviceToken") }
        if !Self.isHex(token) { return bad(400, "BadDeviceToken") }

        let limit = pushType == "voip" ? ProviderLimits.apnsVoIPPayload : ProviderLimits.apnsPayload
        if request.bodyTruncated || request.body.count > limit { return bad(413, "PayloadTooLarge") }
        if request.body.isEmpty { return bad(400, "PayloadEmpty") }
        // APNs documents no reason for a payload that is not JSON; this one is the emulator's.
        guard let document = try? JSONDocument(bytes: request.body, maxDepth: 64), document.root.kind == .object else {
            return bad(400, "BadPayload")
        }
        return nil
    }

    enum Verdict { case accepted, rejected(String) }

    /// Checks `authorization: bearer <JWT>`: ES256 signature with the team's key, `kid`, `iss`,
    /// and `iat` within the last hour (not ahead beyond the clock skew).
    func verifyProviderToken(_ header: String?, account: APNsAccount) -> Verdict {
        guard let header else { return .rejected("MissingProviderToken") }
        guard header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else { return .rejected("InvalidProviderToken") }
        let jwt = header.dropFirst(7)
        let now = core.configuration.clock.seconds
        let cached = core.state.update { $0.verifiedProviderTokens[String(jwt)] }
        let issuedAt: Int64
        if let cached {
            issuedAt = cached
        } else {
            guard let parsed = CompactJWT(jwt),
                  parsed.header["alg"]?.stringEquals("ES256") == true,
                  parsed.header["kid"]?.stringEquals(account.keyID) == true,
                  parsed.claims["iss"]?.stringEquals(account.teamID) == true,
                  let iat = parsed.integerClaim("iat"),
                  SignatureCheck.es256(parsed, key: account.publicKey)
            else { return .rejected("InvalidProviderToken") }
            issuedAt = iat
        }
        if issuedAt > ClaimTime.plus(now, Int64(core.configuration.clockSkewSeconds)) { return .rejected("InvalidProviderToken") }
        if ClaimTime.minus(now, issuedAt) > Int64(core.configuration.providerTokenMaxAgeSeconds) { return .rejected("ExpiredProviderToken") }
        if cached == nil { core.state.update { $0.rememberProviderToken(String(jwt), issuedAt: issuedAt) } }
        return .accepted
    }

    static func isHex<S: StringProtocol>(_ text: S) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(DeviceTokenRules.isHex)
    }

    static func isTopicByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// 8-4-4-4-12 hex digits (either case, as APNs accepts).
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !DeviceTokenRules.isHex(byte) {
                return false
            }
        }
        return true
    }
}

/// Lower-case canonical UUID text (version 4 layout) from 128 bits.
func uuid(_ bits: (UInt64, UInt64)) -> String {
    let high = (bits.0 & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000
    let low = (bits.1 & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000
    func hex(_ value: UInt64, _ digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
    return "\(hex(high >> 32, 8))-\(hex((high >> 16) & 0xffff, 4))-\(hex(high & 0xffff, 4))-\(hex(low >> 48, 4))-\(hex(low & 0xffff_ffff_ffff, 12))"
}
