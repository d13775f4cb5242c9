extension EmulatorStats {
    /// What the Standard Webhooks receiver got. Webhook ids are not listed (one per message,
    /// millions in a campaign): counts are kept per channel instead.
    public struct WebhookStats: Sendable, Codable, Equatable {
        /// Requests whose path started `/webhooks/`, whatever their answer.
        public var requests = 0
        /// First deliveries answered 200.
        public var delivered = 0
        /// Ids answered 200 before, answered 200 again (a receiver dedupes them by id).
        public var duplicates = 0
        /// Requests refused 401 `invalid_signature`.
        public var signatureFailures = 0
        /// Answers by label: `"200"`, `"200 duplicate"`, `"401 invalid_signature"`, `"429"`, …
        public var answers: [String: Int] = [:]
        /// Per channel path (`sms`, `email`, …), for requests whose signature verified: the
        /// first `maxChannels` channels seen.
        public var channels: [String: ChannelStats] = [:]

        public static let maxChannels = 1_024

        public init() {}
    }

    public struct ChannelStats: Sendable, Codable, Equatable {
        public var requests = 0
        public var delivered = 0
        public var duplicates = 0
        public var answers: [String: Int] = [:]

        public init() {}
    }
}

extension EmulatorStats.ChannelStats {
    mutating func record(label: String, outcome: EmulatorState.WebhookOutcome) {
        requests += 1
        answers[label, default: 0] += 1
        switch outcome {
        case .delivered: delivered += 1
        case .duplicate: duplicates += 1
        case .answered, .signatureFailure: break
        }
    }
}
