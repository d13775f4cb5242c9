import PushlineCore

/// `POST /messaging/registrations/<registration id>/messages`: ADM's send endpoint. Checked in
/// the order a sender can act on: the path, the access token (401 makes a sender fetch a new
/// one), the registration id, the type headers, then the message (`ADMMessageCheck`). Errors
/// are ADM's `{"reason": …}`; success is 200 `{"registrationID": …}`, every answer carrying an
/// `x-amzn-requestid`.
struct ADMEndpoint {
    let core: EmulatorCore

    static let pathPrefix = "/messaging/registrations/"
    static let pathSuffix = "/messages"
    static let typeVersion = "com.amazon.device.messaging.ADMMessage@1.0"
    static let acceptType = "com.amazon.device.messaging.ADMSendResult@1.0"
    static let maxRegistrationIDBytes = 4096

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        core.state.update { $0.countRequest(.adm) }
        let rest = request.path.dropFirst(Self.pathPrefix.count)
        guard core.configuration.adm != nil, rest.hasSuffix(Self.pathSuffix) else {
            return reject(404, "NotFound", token: nil)
        }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed", token: nil) }
        guard request.count("authorization") == 1, let authorization = request.header("authorization"),
              authorization.utf8.count > 7, authorization.prefix(7).lowercased() == "bearer "
        else { return reject(401, "AccessTokenExpired", token: nil) }
        let accessToken = String(authorization.dropFirst(7))
        let now = core.now
        guard let expiry = core.state.update({ $0.admAccessTokens[accessToken] }), expiry > now else {
            return reject(401, "AccessTokenExpired", token: nil)
        }

        // From here on the access token was good: the connection may widen its stream limit
        // whatever else is wrong with this request. Only valid ids are recorded under their own
        // name, so a hostile path cannot grow the per-token table with junk keys.
        let token = String(rest.dropLast(Self.pathSuffix.count))
        guard Self.isRegistrationID(token) else { return reject(400, "InvalidRegistrationId", token: nil, authenticated: true) }
        for name in ["x-amzn-type-version", "x-amzn-accept-type", "content-type"] where request.count(name) > 1 {
            return reject(400, "InvalidType", token: token, authenticated: true)
        }
        guard request.header("x-amzn-type-version") == Self.typeVersion, request.header("x-amzn-accept-type") == Self.acceptType,
              Self.isJSONMediaType(request.header("content-type")), Self.acceptsJSON(request.header("accept"))
        else { return reject(400, "InvalidType", token: token, authenticated: true) }
        if let problem = ADMMessageCheck.problem(request) {
            return reject(problem.status, problem.reason, token: token, authenticated: true)
        }

        let body = request.body
        return core.faultOrNormal(
            .adm, token: token,
            normal: { attempt in
                let requestID = uuid(core.idBits(.adm, token: token, attempt: attempt))
                guard record(token, body) else { return (recordFailed(requestID), "500 RecordFailed", false, false) }
                return (success(registrationID: token, requestID: requestID), "200", true, false)
            },
            fault: { fault, attempt in faultAnswer(fault, token: token, body: body, requestID: uuid(core.idBits(.adm, token: token, attempt: attempt))) }
        )
    }

    private func faultAnswer(_ fault: InjectedFault, token: String, body: [UInt8], requestID: String) -> (EmulatorAnswer, label: String) {
        if fault == .admReplaced {
            // Delivered, to the registration's new id: the sender must replace the token it has.
            guard record(token, body) else { return (recordFailed(requestID), "500 RecordFailed") }
            return (success(registrationID: core.configuration.faults.replacementRegistrationID(for: token), requestID: requestID), "200 replaced")
        }
        let retryAfter = ("retry-after", String(core.configuration.faults.retryAfterSeconds))
        let (status, reason, headers): (Int, String, [(String, String)]) = switch fault {
        case .admUnregistered: (400, "Unregistered", [])
        case .tooManyRequests: (429, "MaxRateExceeded", [retryAfter])
        case .serviceUnavailable: (503, "ServiceUnavailable", [retryAfter])
        case .internalServerError: (500, "InternalServerError", [])
        // Not reachable for ADM (FaultRates.applies; admReplaced is answered above): a server fault.
        case .admReplaced, .apnsUnregistered, .apnsBadDeviceToken, .fcmUnregistered, .webpushGone, .quotaExceeded, .refusedStream, .dropConnection:
            (500, "InternalServerError", [])
        }
        return (Self.error(status, reason, requestID: requestID, headers: headers), "\(status) \(reason)")
    }

    private func success(registrationID: String, requestID: String) -> EmulatorAnswer {
        .json(200, "{\"registrationID\":\(JSONText.quoted(registrationID))}", headers: [("x-amzn-requestid", requestID)])
    }

    /// A record that could not be written: not delivered, so a test reading the record never
    /// misses a message it was told arrived.
    private func recordFailed(_ requestID: String) -> EmulatorAnswer {
        Self.error(500, "RecordFailed", requestID: requestID)
    }

    /// Appends the message to `recordADM` when set; false when that failed.
    private func record(_ token: String, _ body: [UInt8]) -> Bool {
        guard let file = core.records.adm else { return true }
        return file.append(head: "{\"registration_id\":\(JSONText.quoted(token)),\"body\":", json: body)
    }

    private func reject(_ status: Int, _ reason: String, token: String?, authenticated: Bool = false) -> EmulatorAnswer {
        // Rejections never reach the fault plan: their request id is random, not derived.
        var answer = Self.error(status, reason, requestID: uuid((.random(in: .min ... .max), .random(in: .min ... .max))))
        answer.authenticated = authenticated
        return core.recordRejected(.adm, token: token, answer: answer, label: "\(status) \(reason)")
    }

    static func error(_ status: Int, _ reason: String, requestID: String, headers: [(String, String)] = []) -> EmulatorAnswer {
        .json(status, "{\"reason\":\"\(reason)\"}", headers: [("x-amzn-requestid", requestID)] + headers)
    }

    /// Non-empty, at most 4096 bytes of RFC 3986 unreserved characters (safe in a path as is).
    static func isRegistrationID(_ text: String) -> Bool {
        (1...maxRegistrationIDBytes).contains(text.utf8.count) && text.utf8.allSatisfy(isUnreserved)
    }

    /// RFC 3986 §2.3: letters, digits, `-`, `.`, `_`, `~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// `application/json`, in any case, with parameters (`; charset=UTF-8`) allowed.
    static func isJSONMediaType(_ value: String?) -> Bool {
        guard let value else { return false }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return type.trimmingSpaces.lowercased() == "application/json"
    }

    /// No `accept`, or one that takes JSON (`application/json`, `application/*` or `*/*`).
    static func acceptsJSON(_ value: String?) -> Bool {
        guard let value else { return true }
        return value.split(separator: ",").contains { range in
            let type = range.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingSpaces.lowercased()
            return type == "application/json" || type == "application/*" || type == "*/*"
        }
    }
}
