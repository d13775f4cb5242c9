import NIOConcurrencyHelpers

/// The request handling behind every connection: routes a request to the APNs, FCM, Web Push,
/// ADM, webhook, OAuth or stats endpoint and keeps the shared state. Thread-safe; one per emulator.
final class EmulatorCore: Sendable {
    let configuration: EmulatorConfiguration
    let state: Watched<EmulatorState>
    /// The bound port, set once after bind: the OAuth endpoint accepts its own URL as audience,
    /// VAPID tokens must name the origin.
    let boundPort = NIOLockedValueBox(0)
    /// Where delivered messages are written (`recordWebPush`, `recordADM`, `recordWebhooks`).
    let records: RecordFiles

    init(configuration: EmulatorConfiguration, records: RecordFiles = RecordFiles()) {
        self.configuration = configuration
        self.records = records
        state = Watched(EmulatorState(maxRememberedWebhookIDs: configuration.maxRememberedWebhookIDs))
    }

    var now: Int64 { configuration.clock.milliseconds }

    /// `https://<host>:<port>`: the emulator's endpoint, which a VAPID token's `aud` must be.
    var origin: String { "https://\(configuration.host):\(boundPort.withLockedValue { $0 })" }

    func answer(_ request: EmulatorRequest) -> EmulatorAnswer {
        let path = request.path
        if path.hasPrefix("/3/device/") || path == "/3/device" {
            return APNsEndpoint(core: self).answer(request)
        }
        if path.hasPrefix("/v1/projects/") {
            return FCMEndpoint(core: self).answer(request)
        }
        if path.hasPrefix("/push/") {
            return WebPushEndpoint(core: self).answer(request)
        }
        if path.hasPrefix(ADMEndpoint.pathPrefix) {
            return ADMEndpoint(core: self).answer(request)
        }
        if path.hasPrefix(WebhookEndpoint.pathPrefix) {
            return WebhookEndpoint(core: self).answer(request)
        }
        switch path {
        case "/token":
            return OAuthEndpoint(core: self).answer(request)
        case ADMTokenEndpoint.path:
            return ADMTokenEndpoint(core: self).answer(request)
        case "/stats":
            if request.method == "DELETE" { return reset() }
            guard request.method == "GET" else { return .json(405, #"{"error":"use GET /stats, or POST /stats/reset"}"#) }
            return EmulatorAnswer(action: .respond(status: 200, headers: [("content-type", "application/json")], body: statsJSON()))
        case "/stats/reset":
            guard request.method == "POST" else { return .json(405, #"{"error":"use POST /stats/reset"}"#) }
            return reset()
        default:
            state.update { $0.record(nil, token: nil, status: "404", label: "404") }
            return .json(404, #"{"reason":"BadPath"}"#)
        }
    }

    private func reset() -> EmulatorAnswer {
        state.update { $0.reset() }
        return .json(200, #"{"reset":true}"#)
    }

    func stats() -> EmulatorStats {
        state.update { $0.stats }
    }

    func statsJSON() -> [UInt8] {
        let stats = stats()
        return StatsJSON.encode(stats)
    }

    func connectionOpened() {
        state.update {
            $0.stats.connectionsOpened += 1
            $0.stats.connectionsOpen += 1
        }
    }

    func connectionClosed() {
        state.update { $0.stats.connectionsOpen -= 1 }
    }

    func streamOpened() {
        state.update { $0.stats.streams += 1 }
    }

    func goawaySent() {
        state.update { $0.stats.goawaysSent += 1 }
    }

    /// Answers a valid request: the fault plan's answer for this attempt, or `normal`.
    func faultOrNormal(
        _ provider: EmulatedProvider, token: String,
        normal: (_ attempt: Int) -> (EmulatorAnswer, label: String, delivered: Bool, validated: Bool),
        fault: (InjectedFault, _ attempt: Int) -> (EmulatorAnswer, label: String)
    ) -> EmulatorAnswer {
        let attempt = state.update { $0.nextAttempt(provider, token) }
        var answer: EmulatorAnswer
        let label: String
        var delivered = false
        var validated = false
        if case let (injected, faultAnswer, faultLabel)? = injectedAnswer(provider, token: token, attempt: attempt, fault: fault) {
            (answer, label) = (faultAnswer, faultLabel)
            // A replaced ADM registration is still delivered, unless its record failed (500).
            delivered = injected.delivers && answer.statusText.hasPrefix("2")
        } else {
            (answer, label, delivered, validated) = normal(attempt)
        }
        answer.authenticated = true
        answer.latencyMilliseconds = configuration.faults.latency(for: provider, token: token, attempt: attempt)
        let status = answer.statusText
        state.update { $0.record(provider, token: token, status: status, label: label, delivered: delivered, validated: validated) }
        return answer
    }

    /// The fault plan's answer for this attempt and its stats label, or nil for the normal
    /// answer: REFUSED_STREAM and dropped connections are the same for every provider, the
    /// rest is `fault`'s.
    func injectedAnswer(
        _ provider: EmulatedProvider, token: String, attempt: Int,
        fault: (InjectedFault, _ attempt: Int) -> (EmulatorAnswer, label: String)
    ) -> (InjectedFault, EmulatorAnswer, label: String)? {
        guard let injected = configuration.faults.fault(for: provider, token: token, attempt: attempt) else { return nil }
        switch injected {
        case .refusedStream: return (injected, EmulatorAnswer(action: .refuseStream), "refused_stream")
        case .dropConnection: return (injected, EmulatorAnswer(action: .dropConnection), "dropped_connection")
        default:
            let (answer, label) = fault(injected, attempt)
            return (injected, answer, label)
        }
    }

    /// Records an answer given before the fault decision (a rejected request).
    func recordRejected(_ provider: EmulatedProvider, token: String?, answer: EmulatorAnswer, label: String) -> EmulatorAnswer {
        state.update { $0.record(provider, token: token, status: answer.statusText, label: label) }
        return answer
    }

    /// Deterministic 128 bits for ids (apns-id, FCM message names, Web Push message locations,
    /// ADM request ids): the same seed, token and attempt give the same id.
    func idBits(_ provider: EmulatedProvider, token: String, attempt: Int) -> (UInt64, UInt64) {
        let base = FaultHash.mix(configuration.faults.seed ^ provider.salt ^ FaultHash.token(token))
        let a = FaultHash.mix(base ^ UInt64(clamping: attempt))
        return (a, FaultHash.mix(a ^ 0x5eed))
    }
}

extension EmulatorAnswer {
    var statusText: String {
        switch action {
        case .respond(let status, _, _): String(status)
        case .refuseStream: "refused_stream"
        case .dropConnection: "dropped_connection"
        }
    }
}
