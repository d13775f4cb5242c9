/// The provider an emulated request was addressed to.
public enum EmulatedProvider: String, Sendable, Codable, CaseIterable {
    case apns, fcm, webpush, adm
    /// The Standard Webhooks receiver (`POST /webhooks/<channel>`); its "token" is the `webhook-id`.
    case webhook
}

/// A fault the emulator injects in place of the normal answer.
public enum InjectedFault: String, Sendable, Codable, CaseIterable {
    /// APNs 410 `Unregistered` (with a timestamp). Token-level: every request for the token.
    case apnsUnregistered
    /// APNs 400 `BadDeviceToken`. Token-level.
    case apnsBadDeviceToken
    /// FCM 404 `UNREGISTERED`. Token-level.
    case fcmUnregistered
    /// Web Push 410 Gone: the subscription expired or was unsubscribed. Token-level.
    case webpushGone
    /// ADM 400 `Unregistered`: the app was uninstalled. Token-level.
    case admUnregistered
    /// ADM 200 whose `registrationID` is another (`FaultPlan.replacementRegistrationID`): the
    /// message is delivered and the sender must replace the token. Token-level.
    case admReplaced
    /// APNs 429 `TooManyRequests`, Web Push 429, ADM 429 `MaxRateExceeded`, webhook 429, with Retry-After.
    case tooManyRequests
    /// FCM 429 `QUOTA_EXCEEDED` (RESOURCE_EXHAUSTED), with Retry-After.
    case quotaExceeded
    /// 500: APNs `InternalServerError`, FCM `INTERNAL`, Web Push, ADM and webhook 500.
    case internalServerError
    /// 503: APNs `ServiceUnavailable`, FCM `UNAVAILABLE`, Web Push, ADM and webhook 503.
    case serviceUnavailable
    /// RST_STREAM REFUSED_STREAM: the request was not processed.
    case refusedStream
    /// The connection is closed without an answer (the request was not processed).
    case dropConnection

    /// Whether the fault belongs to the token (the same answer on every attempt) rather than to
    /// one attempt.
    public var isTokenLevel: Bool {
        switch self {
        case .apnsUnregistered, .apnsBadDeviceToken, .fcmUnregistered, .webpushGone, .admUnregistered, .admReplaced: true
        default: false
        }
    }

    /// Whether the answer still delivers the message (only what it says differs).
    public var delivers: Bool { self == .admReplaced }

    /// Whether a request to `provider` can get this fault.
    public func applies(to provider: EmulatedProvider) -> Bool {
        switch self {
        case .apnsUnregistered, .apnsBadDeviceToken: provider == .apns
        case .fcmUnregistered, .quotaExceeded: provider == .fcm
        case .webpushGone: provider == .webpush
        case .admUnregistered, .admReplaced: provider == .adm
        // Everyone but FCM answers a plain 429 (ADM's reason is MaxRateExceeded); FCM's 429 is QUOTA_EXCEEDED.
        case .tooManyRequests: provider != .fcm
        case .internalServerError, .serviceUnavailable, .refusedStream, .dropConnection: true
        }
    }
}

/// Probabilities (0…1) of each fault. Token-level rates are shares of tokens; the others are
/// shares of attempts.
public struct FaultRates: Sendable, Equatable {
    private var rates: [InjectedFault: Double] = [:]

    public init() {}

    public init(_ rates: [InjectedFault: Double]) {
        self.rates = rates
    }

    public subscript(fault: InjectedFault) -> Double {
        get { rates[fault] ?? 0 }
        set { rates[fault] = newValue }
    }

    /// The faults with a non-zero rate for `provider` in a fixed order (the order their shares
    /// of the unit interval are laid out in, so the same seed gives the same answers).
    func layout(for provider: EmulatedProvider, tokenLevel: Bool) -> [(InjectedFault, Double)] {
        InjectedFault.allCases.compactMap { fault in
            guard fault.applies(to: provider), fault.isTokenLevel == tokenLevel else { return nil }
            let rate = self[fault]
            return rate > 0 ? (fault, rate) : nil
        }
    }

    func validate() throws(EmulatorError) {
        for fault in InjectedFault.allCases {
            let rate = self[fault]
            if !(rate >= 0 && rate <= 1) { throw .invalidConfiguration("the rate of \(fault.rawValue) must be between 0 and 1; got \(rate)") }
        }
        for provider in EmulatedProvider.allCases {
            for tokenLevel in [true, false] {
                let total = layout(for: provider, tokenLevel: tokenLevel).reduce(0) { $0 + $1.1 }
                if total > 1.000_000_1 {
                    throw .invalidConfiguration("the \(tokenLevel ? "token-level" : "per-attempt") fault rates for \(provider.rawValue) add up to \(total), more than 1")
                }
            }
        }
    }
}
