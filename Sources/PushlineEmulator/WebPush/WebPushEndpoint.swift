import PushlineCore

/// `POST /push/<id>`: a push service's message endpoint (RFC 8030 §5) for one of the emulator's
/// subscriptions. Checked in the order a sender can act on: the subscription, the VAPID
/// credentials (RFC 8292), the headers, the size, then the message itself is decrypted
/// (RFC 8291) and must be JSON. Answers `201` with a `location` and no body, or an error
/// `{"code","reason","message"}`.
struct WebPushEndpoint {
    let core: EmulatorCore

    static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]
    /// RFC 8030 §5.4.
    static let maxTopicLength = 32
    /// One aes128gcm record of 4096 bytes: what push services accept (PROVIDERS.md).
    static let maxBodyBytes = 4096
    /// Headers whose repetition is refused (which one would count?).
    static let singleHeaders = ["ttl", "urgency", "topic", "content-encoding"]

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        core.state.update { $0.countRequest(.webpush) }
        let id = String(request.path.dropFirst("/push/".count))
        // Only known subscriptions are recorded under their id: a hostile path cannot grow the
        // per-token table.
        guard request.path.hasPrefix("/push/"), let account = core.configuration.webPush,
              let subscription = account.subscriptions[id]
        else { return reject(404, "NotFound", "no such subscription", token: nil) }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed", "use POST", token: id) }
        guard request.count("authorization") <= 1 else {
            return reject(401, "BadAuthorization", "authorization is given more than once", token: id)
        }
        switch VAPIDCheck(core: core, account: account).check(request.header("authorization")) {
        case .accepted: break
        case .rejected(let status, let reason, let message): return reject(status, reason, message, token: id)
        }

        // From here on the credentials were good: the connection may widen its stream limit
        // whatever else is wrong with this request.
        let plaintext: [UInt8]
        switch check(request, subscription: subscription) {
        case .success(let text): plaintext = text
        case .failure(let problem):
            return reject(problem.status, problem.reason, problem.message, token: id, authenticated: true)
        }

        let origin = core.origin
        return core.faultOrNormal(
            .webpush, token: id,
            normal: { attempt in
                if let recorder = core.records.webPush,
                   !recorder.append(head: "{\"subscription\":\(JSONText.quoted(id)),\"plaintext\":", json: plaintext) {
                    // Not delivered: a test reading the record must not miss a message it was told arrived.
                    return (Self.error(500, "RecordFailed", "the message could not be written to \(recorder.path)"), "500 RecordFailed", false, false)
                }
                let location = origin + "/message/" + uuid(core.idBits(.webpush, token: id, attempt: attempt))
                return (EmulatorAnswer(action: .respond(status: 201, headers: [("location", location)], body: [])), "201", true, false)
            },
            fault: { fault, _ in faultAnswer(fault) }
        )
    }

    private func faultAnswer(_ fault: InjectedFault) -> (EmulatorAnswer, label: String) {
        let retryAfter = ("retry-after", String(core.configuration.faults.retryAfterSeconds))
        let (status, reason, message, headers): (Int, String, String, [(String, String)]) = switch fault {
        case .webpushGone: (410, "Gone", "the subscription has expired or was unsubscribed", [])
        case .tooManyRequests, .quotaExceeded: (429, "TooManyRequests", "too many messages; retry after the delay", [retryAfter])
        case .serviceUnavailable: (503, "ServiceUnavailable", "the push service is unavailable; retry after the delay", [retryAfter])
        // Not reachable for Web Push (FaultRates.applies); answered as a server fault.
        case .internalServerError, .apnsUnregistered, .apnsBadDeviceToken, .fcmUnregistered, .admUnregistered, .admReplaced,
             .refusedStream, .dropConnection:
            (500, "InternalServerError", "internal error", [])
        }
        return (Self.error(status, reason, message, headers: headers), "\(status) \(reason)")
    }

    private func reject(_ status: Int, _ reason: String, _ message: String, token: String?, authenticated: Bool = false) -> EmulatorAnswer {
        var answer = Self.error(status, reason, message)
        answer.authenticated = authenticated
        return core.recordRejected(.webpush, token: token, answer: answer, label: "\(status) \(reason)")
    }

    static func error(_ status: Int, _ reason: String, _ message: String, headers: [(String, String)] = []) -> EmulatorAnswer {
        .json(status, "{\"code\":\(status),\"reason\":\"\(reason)\",\"message\":\(JSONText.quoted(message))}", headers: headers)
    }

    struct Problem: Error {
        var status = 400
        var reason: String
        var message: String
    }

    /// The headers, the size and the message: the decrypted plaintext, or the first problem.
    private func check(_ request: EmulatorRequest, subscription: WebPushSubscription) -> Result<[UInt8], Problem> {
        for name in Self.singleHeaders where request.count(name) > 1 {
            return .failure(Problem(reason: "DuplicateHeader", message: "\(name) is given more than once"))
        }
        guard let ttl = request.header("ttl"), (1...64).contains(ttl.utf8.count), ttl.utf8.allSatisfy(Self.isDigit) else {
            return .failure(Problem(reason: "BadTTL", message: "ttl is required: seconds as decimal digits"))
        }
        if let urgency = request.header("urgency"), !Self.urgencies.contains(urgency) {
            return .failure(Problem(reason: "BadUrgency", message: "urgency must be very-low, low, normal or high"))
        }
        if let topic = request.header("topic"),
           !(1...Self.maxTopicLength).contains(topic.utf8.count) || !topic.utf8.allSatisfy(WebPushSubscription.isURLSafe) {
            return .failure(Problem(reason: "BadTopic", message: "topic must be 1 to 32 base64url characters"))
        }
        guard request.header("content-encoding")?.lowercased() == "aes128gcm" else {
            return .failure(Problem(status: 415, reason: "BadContentEncoding", message: "content-encoding must be aes128gcm (RFC 8291)"))
        }
        if request.bodyTruncated || request.body.count > Self.maxBodyBytes {
            return .failure(Problem(status: 413, reason: "PayloadTooLarge", message: "the body is larger than \(Self.maxBodyBytes) bytes"))
        }
        let plaintext: [UInt8]
        do {
            plaintext = try WebPushDecryption.decrypt(request.body, privateKey: subscription.privateKey, auth: subscription.auth)
        } catch {
            return .failure(Problem(reason: "DecryptionFailed", message: error.description))
        }
        guard (try? JSONDocument(bytes: plaintext, maxDepth: 64)) != nil else {
            return .failure(Problem(reason: "BadPayload", message: "the decrypted message is not JSON"))
        }
        return .success(plaintext)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
