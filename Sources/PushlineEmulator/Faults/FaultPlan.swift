/// Which answers the emulator falsifies, decided without shared random state so that the same
/// seed and the same requests give the same answers however requests interleave.
///
/// Every decision is a hash of the seed, the provider, the device token and (for per-attempt
/// faults) the attempt number of that token, i.e. how many earlier valid requests for the same
/// token the emulator received since it started or its stats were reset:
/// - token-level faults (`apnsUnregistered`, `apnsBadDeviceToken`, `fcmUnregistered`,
///   `webpushGone`, `admUnregistered`, `admReplaced`) hash
///   (seed, provider, token): a token drawn unregistered answers 410 on every attempt;
/// - per-attempt faults hash (seed, provider, token, attempt): a token may get 503 on attempt 0
///   and succeed on attempt 1, and will do so again on the next run with the same seed;
/// - `scripted` tokens skip both draws and get their script, one step per attempt, then normal
///   answers.
/// Only requests that pass validation (path, credentials, headers, payload) reach the fault
/// decision and count as attempts: a malformed request gets its true error.
public struct FaultPlan: Sendable, Equatable {
    public var seed: UInt64 = 0
    public var rates: FaultRates = FaultRates()
    /// Exact answers per device token: step n is attempt n (nil: answer normally).
    public var scripted: [String: [InjectedFault?]] = [:]
    /// After this many streams on one connection the server sends GOAWAY (last stream id = the
    /// Nth stream), finishes the streams it accepted and closes the connection.
    public var goawayAfterStreams: Int?
    /// The Retry-After header (seconds) sent with 429 and 503 answers.
    public var retryAfterSeconds: Int = 1
    /// Added to every answer (scheduled on the event loop, never blocking it).
    public var latencyMilliseconds: Int = 0
    /// Up to this much more per answer, drawn from the same hash (seed, provider, token, attempt).
    public var latencyJitterMilliseconds: Int = 0

    public init(seed: UInt64 = 0, rates: FaultRates = FaultRates()) {
        self.seed = seed
        self.rates = rates
    }

    /// The fault for attempt `attempt` (0-based) of `token` at `provider`, or nil for a normal answer.
    public func fault(for provider: EmulatedProvider, token: String, attempt: Int) -> InjectedFault? {
        if let script = scripted[token] {
            return attempt >= 0 && attempt < script.count ? script[attempt] : nil
        }
        let tokenHash = FaultHash.token(token)
        let tokenDraw = FaultHash.unit(seed: seed, salt: provider.salt, token: tokenHash, attempt: UInt64.max)
        if let fault = pick(tokenDraw, from: rates.layout(for: provider, tokenLevel: true)) { return fault }
        let attemptDraw = FaultHash.unit(seed: seed, salt: provider.salt, token: tokenHash, attempt: UInt64(clamping: attempt))
        return pick(attemptDraw, from: rates.layout(for: provider, tokenLevel: false))
    }

    /// The `registrationID` an ADM token drawn `admReplaced` is answered with: derived from the
    /// seed and the token only, so every attempt (and every run with the seed) names the same one.
    public func replacementRegistrationID(for token: String) -> String {
        let base = FaultHash.mix(seed ^ EmulatedProvider.adm.salt ^ FaultHash.token(token) ^ 0x7e91_ace0)
        let bits = (base, FaultHash.mix(base ^ 0x5eed))
        return Self.replacedRegistrationPrefix + hex16(bits.0) + hex16(bits.1)
    }

    /// The shape of a replacement id (letters, digits, `.` and `-`: a valid registration id itself).
    public static let replacedRegistrationPrefix = "amzn1.adm-registration.v3.replaced-"

    private func hex16(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// The latency added to the answer of that attempt.
    public func latency(for provider: EmulatedProvider, token: String, attempt: Int) -> Int {
        guard latencyJitterMilliseconds > 0 else { return latencyMilliseconds }
        let draw = FaultHash.unit(seed: seed, salt: provider.salt &+ 0x1a7e, token: FaultHash.token(token), attempt: UInt64(clamping: attempt))
        return latencyMilliseconds + Int(draw * Double(latencyJitterMilliseconds + 1)).clamped(to: 0...latencyJitterMilliseconds)
    }

    private func pick(_ draw: Double, from layout: [(InjectedFault, Double)]) -> InjectedFault? {
        var upper = 0.0
        for (fault, rate) in layout {
            upper += rate
            if draw < upper { return fault }
        }
        return nil
    }

    public static let maxLatencyMilliseconds = 600_000
    public static let maxRetryAfterSeconds = 86_400

    /// Refuses rates outside 0…1, a provider's rates adding up to more than 1, and bounds.
    public func validate() throws(EmulatorError) {
        try rates.validate()
        if let goawayAfterStreams, !(1...Int(Int32.max)).contains(goawayAfterStreams) {
            throw .invalidConfiguration("GOAWAY after streams must be between 1 and 2147483647; got \(goawayAfterStreams)")
        }
        if !(0...Self.maxRetryAfterSeconds).contains(retryAfterSeconds) { throw .invalidConfiguration("Retry-After must be between 0 and 86400 seconds; got \(retryAfterSeconds)") }
        if !(0...Self.maxLatencyMilliseconds).contains(latencyMilliseconds) { throw .invalidConfiguration("latency must be between 0 and 600000 ms; got \(latencyMilliseconds)") }
        if !(0...Self.maxLatencyMilliseconds).contains(latencyJitterMilliseconds) { throw .invalidConfiguration("latency jitter must be between 0 and 600000 ms; got \(latencyJitterMilliseconds)") }
    }
}

extension EmulatedProvider {
    var salt: UInt64 {
        switch self {
        case .apns: 0x6170_6e73
        case .fcm: 0x0066_636d
        case .webpush: 0x7765_6270
        case .adm: 0x0061_646d
        case .webhook: 0x7768_6f6b
        }
    }
}

/// FNV-1a over the token and SplitMix64's finalizer: cheap, stable across runs and platforms
/// (unlike `Hasher`, which is seeded per process).
enum FaultHash {
    static func token(_ token: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A uniform draw in [0, 1).
    static func unit(seed: UInt64, salt: UInt64, token: UInt64, attempt: UInt64) -> Double {
        let h = mix(mix(mix(seed ^ salt) ^ token) ^ attempt)
        return Double(h >> 11) * 0x1p-53
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }
}
