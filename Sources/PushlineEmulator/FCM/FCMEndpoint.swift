import PushlineCore

/// `POST /v1/projects/:project/messages:send`: checks the access token, the project and the
/// message as FCM does, and answers google.rpc.Status errors with FcmError details.
struct FCMEndpoint {
    let core: EmulatorCore

    static let reservedDataKeys: Set<String> = ["from", "message_type"]
    static let topLevelKeys: Set<String> = ["message", "validate_only"]

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        core.state.update { $0.countRequest(.fcm) }
        // /v1/projects/<project>/messages:send
        let rest = request.path.dropFirst("/v1/projects/".count)
        guard let account = core.configuration.fcm,
              let slash = rest.firstIndex(of: "/"), rest[slash...] == "/messages:send"
        else {
            return reject(404, "Requested entity was not found.", "NOT_FOUND", nil, token: nil)
        }
        guard request.method == "POST" else {
            return reject(405, "Method not allowed; use POST.", "INVALID_ARGUMENT", nil, token: nil)
        }
        guard let authorization = request.header("authorization"), request.count("authorization") == 1,
              authorization.utf8.count > 7, authorization.prefix(7).lowercased() == "bearer "
        else {
            return reject(401, "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "UNAUTHENTICATED", nil, token: nil)
        }
        let accessToken = String(authorization.dropFirst(7))
        let now = core.now
        let expiry = core.state.update { $0.accessTokens[accessToken] }
        guard let expiry, expiry > now else {
            return reject(401, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "UNAUTHENTICATED", nil, token: nil)
        }
        guard rest[..<slash] == account.projectID else {
            return reject(403, "Permission denied: the access token does not grant access to this project.", "PERMISSION_DENIED", nil, token: nil, authenticated: true)
        }

        let message: CheckedMessage
        switch check(request) {
        case .success(let checked): message = checked
        case .failure(let problem):
            return reject(400, problem.message, "INVALID_ARGUMENT", "INVALID_ARGUMENT", token: problem.token, authenticated: true)
        }

        let project = account.projectID
        return core.faultOrNormal(
            .fcm, token: message.target,
            normal: { attempt in
                if message.validateOnly {
                    return (.json(200, "{\"name\":\(JSONText.quoted("projects/\(project)/messages/fake_message_id"))}"), "200 validate_only", false, true)
                }
                let bits = core.idBits(.fcm, token: message.target, attempt: attempt)
                let id = "0:\(bits.0 >> 12)%\(String(bits.1, radix: 16))"
                return (.json(200, "{\"name\":\(JSONText.quoted("projects/\(project)/messages/\(id)"))}"), "200", true, false)
            },
            fault: { fault, _ in faultAnswer(fault) }
        )
    }

    private func faultAnswer(_ fault: InjectedFault) -> (EmulatorAnswer, label: String) {
        let retryAfter = ("retry-after", String(core.configuration.faults.retryAfterSeconds))
        let (code, message, status, errorCode, headers): (Int, String, String, String, [(String, String)]) = switch fault {
        case .fcmUnregistered: (404, "Requested entity was not found.", "NOT_FOUND", "UNREGISTERED", [])
        case .quotaExceeded: (429, "Quota exceeded for quota metric 'Send requests'.", "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", [retryAfter])
        case .serviceUnavailable: (503, "The service is currently unavailable.", "UNAVAILABLE", "UNAVAILABLE", [retryAfter])
        // Not reachable for FCM (FaultRates.applies); answered as an internal error.
        case .internalServerError, .apnsUnregistered, .apnsBadDeviceToken, .webpushGone, .admUnregistered, .admReplaced, .tooManyRequests,
             .refusedStream, .dropConnection:
            (500, "Internal error encountered.", "INTERNAL", "INTERNAL", [])
        }
        return (GoogleStatus.answer(code: code, message: message, status: status, errorCode: errorCode, headers: headers),
                GoogleStatus.label(code: code, status: status, errorCode: errorCode))
    }

    private func reject(_ code: Int, _ message: String, _ status: String, _ errorCode: String?, token: String?, authenticated: Bool = false) -> EmulatorAnswer {
        var answer = GoogleStatus.answer(code: code, message: message, status: status, errorCode: errorCode)
        answer.authenticated = authenticated
        return core.recordRejected(.fcm, token: token, answer: answer, label: GoogleStatus.label(code: code, status: status, errorCode: errorCode))
    }

    struct CheckedMessage {
        /// The device token, `topic:<name>` or `condition`.
        var target: String
        var validateOnly: Bool
    }

    struct Problem: Error {
        var message: String
        var token: String? = nil
    }

    /// The message's first problem, as FCM words it (INVALID_ARGUMENT).
    private func check(_ request: EmulatorRequest) -> Result<CheckedMessage, Problem> {
        if request.bodyTruncated { return .failure(Problem(message: "Request payload size exceeds the limit.")) }
        guard let document = try? JSONDocument(bytes: request.body, maxDepth: 64), document.root.kind == .object else {
            return .failure(Problem(message: "Invalid JSON payload received."))
        }
        let root = document.root
        for (key, _) in root.members {
            guard let name = key.stringValue, Self.topLevelKeys.contains(name) else {
                return .failure(Problem(message: "Invalid JSON payload received. Unknown name at the top level."))
            }
        }
        var validateOnly = false
        if let flag = root["validate_only"] {
            guard let value = flag.boolValue else { return .failure(Problem(message: "Invalid value at 'validate_only' (TYPE_BOOL).")) }
            validateOnly = value
        }
        guard let message = root["message"], message.kind == .object else {
            return .failure(Problem(message: "Invalid value at 'message': a message object is required."))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1, let targetValue = message[targets[0]]?.stringValue, !targetValue.isEmpty else {
            return .failure(Problem(message: "Exactly one of message.token, message.topic or message.condition must be set."))
        }
        let target: String
        switch targets[0] {
        case "token":
            guard DeviceTokenRules.validateFCM(targetValue) == nil else {
                return .failure(Problem(message: "The registration token is not a valid FCM registration token"))
            }
            target = targetValue
        case "topic":
            guard targetValue.utf8.count <= 900,
                  targetValue.utf8.allSatisfy({ APNsEndpoint.isTopicByte($0) || $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "%") })
            else { return .failure(Problem(message: "Invalid topic name.")) }
            target = "topic:" + targetValue
        default:
            target = "condition"
        }
        let recorded = targets[0] == "token" ? target : nil
        var dataBytes = 0
        if let data = message["data"] {
            guard data.kind == .object else { return .failure(Problem(message: "Invalid value at 'message.data': a map of strings.", token: recorded)) }
            for (key, value) in data.members {
                guard let name = key.stringValue, let text = value.stringValue else {
                    return .failure(Problem(message: "Invalid value at 'message.data': values must be strings.", token: recorded))
                }
                if Self.reservedDataKeys.contains(name) || name.hasPrefix("google") || name.hasPrefix("gcm") {
                    return .failure(Problem(message: "Invalid data payload key: \(name.prefix(64))", token: recorded))
                }
                dataBytes += name.utf8.count + text.utf8.count
            }
        }
        let limit = targets[0] == "topic" ? ProviderLimits.fcmTopicPayload : ProviderLimits.fcmPayload
        if dataBytes > limit {
            return .failure(Problem(message: "Message is too big: the data payload is \(dataBytes) bytes, the limit is \(limit).", token: recorded))
        }
        return .success(CheckedMessage(target: target, validateOnly: validateOnly))
    }
}

extension DeviceTokenRules {
    static func validateFCM(_ token: String) -> String? {
        var copy = token
        return copy.withUTF8 { validateFCM(UnsafeRawBufferPointer($0)) }
    }
}
