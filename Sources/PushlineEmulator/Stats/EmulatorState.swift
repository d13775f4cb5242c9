/// The mutable state every connection shares, behind one lock in `EmulatorCore`: counters,
/// attempt numbers for the fault plan, issued access tokens, verified provider and VAPID tokens.
struct EmulatorState {
    var stats = EmulatorStats()
    /// Valid requests so far per provider and token: the attempt number of the next one.
    var attempts: [EmulatedProvider: [String: Int]] = [:]
    /// Access tokens issued by `/token`, with their expiry (UNIX ms).
    var accessTokens: [String: Int64] = [:]
    /// Provider tokens (JWT text) whose signature verified, with their `iat`: APNs verifies a
    /// token once and then only checks its age, which keeps ECDSA off the per-request path.
    var verifiedProviderTokens: [String: Int64] = [:]
    /// VAPID tokens (JWT text) whose signature and claims verified, with their `exp`.
    var verifiedVAPIDTokens: [String: Int64] = [:]
    /// Access tokens issued by `/auth/O2/token` (ADM), with their expiry (UNIX ms): apart from
    /// Google's, as a token of one provider means nothing to the other.
    var admAccessTokens: [String: Int64] = [:]
    /// Webhook ids: attempt numbers and first deliveries.
    var webhookLedger: WebhookLedger

    init(maxRememberedWebhookIDs: Int = 1 << 20) {
        webhookLedger = WebhookLedger(capacity: maxRememberedWebhookIDs)
    }

    static let maxAccessTokens = 100_000
    static let maxVerifiedProviderTokens = 1_024

    /// Claims the next attempt number for `token`.
    mutating func nextAttempt(_ provider: EmulatedProvider, _ token: String) -> Int {
        let attempt = attempts[provider, default: [:]][token, default: 0]
        attempts[provider, default: [:]][token] = attempt &+ 1
        return attempt
    }

    mutating func record(_ provider: EmulatedProvider?, token: String?, status: String, label: String, delivered: Bool = false, validated: Bool = false) {
        stats.statuses[status, default: 0] += 1
        guard let provider else { return }
        update(provider) { provider in
            provider.answers[label, default: 0] += 1
            if delivered { provider.delivered += 1 }
            if validated { provider.validated += 1 }
            guard let token else { return }
            var entry = provider.tokens[token] ?? EmulatorStats.TokenStats()
            entry.requests += 1
            if delivered { entry.delivered += 1 }
            if validated { entry.validated += 1 }
            if entry.answers.count < EmulatorStats.TokenStats.maxHistory { entry.answers.append(label) }
            provider.tokens[token] = entry
        }
    }

    mutating func countRequest(_ provider: EmulatedProvider) {
        update(provider) { $0.requests += 1 }
    }

    private mutating func update(_ provider: EmulatedProvider, _ body: (inout EmulatorStats.ProviderStats) -> Void) {
        switch provider {
        case .apns: body(&stats.apns)
        case .fcm: body(&stats.fcm)
        case .webpush: body(&stats.webpush)
        case .adm: body(&stats.adm)
        // Webhooks are counted per channel, not per token (`recordWebhook`).
        case .webhook: break
        }
    }

    /// What became of a webhook request.
    enum WebhookOutcome {
        case answered, delivered, duplicate, signatureFailure
    }

    /// Counts a webhook answer; `channel` only once the signature verified (a hostile path
    /// cannot grow the per-channel table).
    mutating func recordWebhook(channel: String?, status: String, label: String, outcome: WebhookOutcome = .answered) {
        stats.statuses[status, default: 0] += 1
        stats.webhooks.answers[label, default: 0] += 1
        switch outcome {
        case .answered: break
        case .delivered: stats.webhooks.delivered += 1
        case .duplicate: stats.webhooks.duplicates += 1
        case .signatureFailure: stats.webhooks.signatureFailures += 1
        }
        guard let channel else { return }
        guard stats.webhooks.channels[channel] != nil || stats.webhooks.channels.count < EmulatorStats.WebhookStats.maxChannels else { return }
        stats.webhooks.channels[channel, default: EmulatorStats.ChannelStats()].record(label: label, outcome: outcome)
    }

    /// Forgets counters and attempt numbers (so the fault plan starts over), keeps credentials
    /// and the count of open connections.
    mutating func reset() {
        let open = stats.connectionsOpen
        stats = EmulatorStats()
        stats.connectionsOpen = open
        attempts = [:]
        webhookLedger.reset()
    }

    mutating func rememberAccessToken(_ token: String, expiresAt: Int64, now: Int64) {
        Self.remember(token, expiresAt: expiresAt, now: now, in: &accessTokens)
    }

    mutating func rememberADMAccessToken(_ token: String, expiresAt: Int64, now: Int64) {
        Self.remember(token, expiresAt: expiresAt, now: now, in: &admAccessTokens)
    }

    /// Past `maxAccessTokens` the expired ones go, and all of them if none has expired: a
    /// sender whose token was forgotten is answered 401 and fetches a new one.
    private static func remember(_ token: String, expiresAt: Int64, now: Int64, in tokens: inout [String: Int64]) {
        if tokens.count >= maxAccessTokens {
            tokens = tokens.filter { $0.value > now }
            if tokens.count >= maxAccessTokens { tokens = [:] }
        }
        tokens[token] = expiresAt
    }

    mutating func rememberProviderToken(_ token: String, issuedAt: Int64) {
        if verifiedProviderTokens.count >= Self.maxVerifiedProviderTokens { verifiedProviderTokens = [:] }
        verifiedProviderTokens[token] = issuedAt
    }

    mutating func rememberVAPIDToken(_ token: String, expiresAt: Int64) {
        if verifiedVAPIDTokens.count >= Self.maxVerifiedProviderTokens { verifiedVAPIDTokens = [:] }
        verifiedVAPIDTokens[token] = expiresAt
    }
}
