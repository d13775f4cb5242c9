import PushlineCore

/// `POST /webhooks/<channel>`: a Standard Webhooks receiver (https://www.standardwebhooks.com)
/// for the SMS, email and open channels. Checked in the order a sender can act on: the path,
/// the three `webhook-*` headers, the size, the timestamp, the signature, then the body; then the
/// fault plan, keyed by `webhook-id` as the others are by device token. A first delivery and a
/// retry of an id already answered 200 both get 200 `{}` (a receiver dedupes by id), counted
/// apart. Errors are `{"error":"<code>"}`.
struct WebhookEndpoint {
    let core: EmulatorCore

    static let pathPrefix = "/webhooks/"
    static let maxChannelBytes = 256
    static let maxIDBytes = 256
    static let headers = ["webhook-id", "webhook-timestamp", "webhook-signature"]

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        core.state.update { $0.stats.webhooks.requests += 1 }
        let channel = String(request.path.dropFirst(Self.pathPrefix.count))
        guard let account = core.configuration.webhooks, Self.isChannel(channel) else { return reject(404, "not_found") }
        guard request.method == "POST" else { return reject(405, "method_not_allowed") }
        for name in Self.headers {
            let code = name.replacingOccurrences(of: "-", with: "_")
            switch request.count(name) {
            case 0: return reject(400, "missing_\(code)")
            case 1: break
            default: return reject(400, "duplicate_\(code)")
            }
        }
        guard let id = request.header("webhook-id"), Self.isWebhookID(id) else { return reject(400, "invalid_webhook_id") }
        guard let timestampText = request.header("webhook-timestamp"), let timestamp = WebhookSignature.timestamp(timestampText) else {
            return reject(400, "invalid_webhook_timestamp")
        }
        guard let signature = request.header("webhook-signature") else { return reject(400, "missing_webhook_signature") }
        // The signature covers the whole body: one cut at the buffer's bound cannot be checked.
        if request.bodyTruncated { return reject(413, "payload_too_large") }
        // Checked: a timestamp of 32 digits is Int64.max, and the clock is anyone's.
        let (difference, overflow) = timestamp.subtractingReportingOverflow(core.configuration.clock.seconds)
        guard !overflow, difference.magnitude <= UInt64(core.configuration.webhookToleranceSeconds) else { return reject(401, "stale_timestamp") }
        let expected = WebhookSignature.expected(key: account.key, id: id, timestamp: timestampText, body: request.body)
        guard WebhookSignature.matches(signature, expected: expected) else {
            return reject(401, "invalid_signature", outcome: .signatureFailure)
        }

        // From here on the sender holds the secret: the connection may widen its stream limit,
        // and the channel is counted under its name.
        guard Self.isMessage(request.body) else { return reject(400, "invalid_body", channel: channel, authenticated: true) }
        let key = WebhookLedger.key(id)
        let attempt = core.state.update { $0.webhookLedger.nextAttempt(key) }
        var answer: EmulatorAnswer
        let label: String
        var outcome = EmulatorState.WebhookOutcome.answered
        if case let (_, injected, injectedLabel)? = core.injectedAnswer(.webhook, token: id, attempt: attempt, fault: { fault, _ in faultAnswer(fault) }) {
            (answer, label) = (injected, injectedLabel)
        } else {
            (answer, label, outcome) = deliver(id: id, key: key, channel: channel, body: request.body)
        }
        answer.authenticated = true
        answer.latencyMilliseconds = core.configuration.faults.latency(for: .webhook, token: id, attempt: attempt)
        let status = answer.statusText
        core.state.update { $0.recordWebhook(channel: channel, status: status, label: label, outcome: outcome) }
        return answer
    }

    /// 200 `{}` for a first delivery (recorded) and for a retry of a delivered id (a duplicate).
    private func deliver(id: String, key: WebhookLedger.Key, channel: String, body: [UInt8]) -> (EmulatorAnswer, String, EmulatorState.WebhookOutcome) {
        let first = core.state.update { $0.webhookLedger.markDelivered(key) }
        guard first else { return (.json(200, "{}"), "200 duplicate", .duplicate) }
        if let file = core.records.webhooks,
           !file.append(head: "{\"id\":\(JSONText.quoted(id)),\"path\":\(JSONText.quoted(channel)),\"body\":", json: body) {
            // Not delivered: a test reading the record must not miss a message it was told arrived.
            core.state.update { $0.webhookLedger.unmarkDelivered(key) }
            return (Self.error(500, "record_failed"), "500 record_failed", .answered)
        }
        return (.json(200, "{}"), "200", .delivered)
    }

    private func faultAnswer(_ fault: InjectedFault) -> (EmulatorAnswer, label: String) {
        let retryAfter = ("retry-after", String(core.configuration.faults.retryAfterSeconds))
        let (status, code, headers): (Int, String, [(String, String)]) = switch fault {
        case .tooManyRequests: (429, "too_many_requests", [retryAfter])
        case .serviceUnavailable: (503, "service_unavailable", [retryAfter])
        case .internalServerError: (500, "internal_error", [])
        // Not reachable for webhooks (FaultRates.applies): answered as a server fault.
        case .apnsUnregistered, .apnsBadDeviceToken, .fcmUnregistered, .webpushGone, .admUnregistered, .admReplaced, .quotaExceeded,
             .refusedStream, .dropConnection:
            (500, "internal_error", [])
        }
        return (Self.error(status, code, headers: headers), "\(status) \(code)")
    }

    private func reject(
        _ status: Int, _ code: String, channel: String? = nil, authenticated: Bool = false,
        outcome: EmulatorState.WebhookOutcome = .answered
    ) -> EmulatorAnswer {
        var answer = Self.error(status, code)
        answer.authenticated = authenticated
        core.state.update { $0.recordWebhook(channel: channel, status: String(status), label: "\(status) \(code)", outcome: outcome) }
        return answer
    }

    static func error(_ status: Int, _ code: String, headers: [(String, String)] = []) -> EmulatorAnswer {
        .json(status, "{\"error\":\"\(code)\"}", headers: headers)
    }

    /// 1 to 256 bytes: segments of RFC 3986 unreserved characters, non-empty, between `/`
    /// (`sms`, `email`, `open-slack`, `open/eu`).
    static func isChannel(_ text: String) -> Bool {
        guard (1...maxChannelBytes).contains(text.utf8.count) else { return false }
        return text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && segment.allSatisfy(ADMEndpoint.isUnreserved)
        }
    }

    /// 1 to 256 printable ASCII characters, no spaces (the id is part of the signed text).
    static func isWebhookID(_ text: String) -> Bool {
        (1...maxIDBytes).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }

    /// A JSON object with string members `channel` and `to` (what every Pushline webhook holds).
    static func isMessage(_ body: [UInt8]) -> Bool {
        guard let document = try? JSONDocument(bytes: body, maxDepth: 64), document.root.kind == .object else { return false }
        return document.root["channel"]?.kind == .string && document.root["to"]?.kind == .string
    }
}
