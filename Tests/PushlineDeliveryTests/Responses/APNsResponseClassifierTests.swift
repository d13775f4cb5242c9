import PushlineDelivery
import Testing

@Suite("APNs response classification")
struct APNsResponseClassifierTests {
    static func classify(_ status: Int, _ body: String, apnsID: String? = nil, retryAfter: String? = nil) -> ResponseClassification {
        APNsResponseClassifier.classify(status: status, body: Array(body.utf8), apnsID: apnsID.map { Array($0.utf8) },
                                        retryAfter: retryAfter.map { Array($0.utf8) })
    }

    /// Every row of the APNs table in PROVIDERS.md (plus Apple's newer key-id reasons).
    static let table: [(Int, String, ResponseOutcome)] = [
        (400, "BadCollapseId", .permanent), (400, "BadExpirationDate", .permanent), (400, "BadMessageId", .permanent),
        (400, "BadPriority", .permanent), (400, "BadTopic", .permanent), (400, "DuplicateHeaders", .permanent),
        (400, "InvalidPushType", .permanent), (400, "MissingDeviceToken", .permanent), (400, "MissingTopic", .permanent),
        (400, "PayloadEmpty", .permanent),
        (400, "BadDeviceToken", .invalidToken(timestamp: nil)), (400, "DeviceTokenNotForTopic", .invalidToken(timestamp: nil)),
        (400, "TopicDisallowed", .invalidToken(timestamp: nil)),
        (400, "IdleTimeout", .retryable(newConnection: true)),
        (403, "BadCertificate", .configurationError), (403, "BadCertificateEnvironment", .configurationError),
        (403, "Forbidden", .configurationError), (403, "InvalidProviderToken", .configurationError),
        (403, "MissingProviderToken", .configurationError), (403, "UnrelatedKeyIdInToken", .configurationError),
        (403, "BadEnvironmentKeyInToken", .configurationError),
        (403, "ExpiredProviderToken", .refreshCredentials),
        (404, "BadPath", .permanent), (405, "MethodNotAllowed", .permanent),
        (410, "Unregistered", .invalidToken(timestamp: nil)), (410, "ExpiredToken", .invalidToken(timestamp: nil)),
        (413, "PayloadTooLarge", .permanent),
        (429, "TooManyProviderTokenUpdates", .retryable(newConnection: false)),
        // "Too many requests were made consecutively to the same device token": that device waits.
        (429, "TooManyRequests", .throttled(.device)),
        (500, "InternalServerError", .retryable(newConnection: false)),
        (503, "ServiceUnavailable", .retryable(newConnection: false)),
        (503, "Shutdown", .retryable(newConnection: true)),
    ]

    @Test("every reason of the table, as it says", arguments: table)
    func row(status: Int, reason: String, outcome: ResponseOutcome) {
        let result = Self.classify(status, #"{"reason":"\#(reason)"}"#)
        #expect(result.outcome == outcome)
        #expect(result.reason == reason)
        #expect(result.status == status)
        #expect(APNsErrorReason(wireName: reason).wireName == reason)
        if case .unknown = APNsErrorReason(wireName: reason) { Issue.record("\(reason) is not typed") }
    }

    @Test("every typed reason has its table row")
    func allTyped() {
        #expect(Set(APNsErrorReason.known.map(\.wireName)) == Set(Self.table.map(\.1)))
    }

    @Test("200: sent with the apns-id")
    func sent() {
        let id = "2a6e5b4e-0a9c-4a59-9a3b-5ad6e0b9f2f1"
        #expect(Self.classify(200, "", apnsID: id).outcome == .sent(providerID: id))
        #expect(Self.classify(200, "").outcome == .sent(providerID: nil))
        // A header value with control bytes or absurd length is dropped, not copied.
        #expect(Self.classify(200, "", apnsID: "a\r\nb").outcome == .sent(providerID: nil))
        #expect(Self.classify(200, "", apnsID: String(repeating: "a", count: 500)).outcome == .sent(providerID: nil))
    }

    /// 1xx, every 2xx but 200, 3xx and what lies outside 100–599: none is an answer APNs gives.
    static let unexpectedStatuses = [100, 101, 103, 199, 201, 202, 203, 204, 205, 206, 207, 208, 226, 250, 299,
                                     300, 301, 302, 303, 304, 305, 307, 308, 399, 600, 999, 1_000, 65_535, -1]

    @Test("only 200 is sent: any other status outside 4xx/5xx fails as unexpected_status, whatever the body and headers say",
          arguments: unexpectedStatuses)
    func unexpectedStatus(status: Int) {
        let id = "2a6e5b4e-0a9c-4a59-9a3b-5ad6e0b9f2f1"
        for body in ["", "{}", #"{"reason":"BadDeviceToken"}"#, #"{"reason":"Unregistered","timestamp":1700000000123}"#] {
            let result = Self.classify(status, body, apnsID: id, retryAfter: "5")
            #expect(result.outcome == .permanent, "\(status) \(body)")
            #expect(result.reason == "unexpected_status")
            #expect(result.status == status)
            #expect(result.providerReason == nil)
            #expect(result.message == "HTTP \(status) is not an answer the provider documents; only 200 is sent")
        }
    }

    @Test("a body the transport cut is not read: the status decides, and the message says why", arguments: [
        (400, ResponseOutcome.permanent), (403, .configurationError), (410, .invalidToken(timestamp: nil)),
        (429, .throttled(.provider)), (503, .retryable(newConnection: false)),
    ])
    func truncatedBody(status: Int, outcome: ResponseOutcome) {
        // The kept prefix is whole JSON naming a reason that would decide otherwise.
        let result = APNsResponseClassifier.classify(status: status, body: Array(#"{"reason":"Shutdown"}"#.utf8), bodyTruncatedAt: 8192)
        #expect(result.outcome == outcome)
        #expect(result.reason == "http_\(status)")
        #expect(result.message == "response body over 8192 bytes")
        let whole = APNsResponseClassifier.classify(status: status, body: Array(#"{"reason":"Shutdown"}"#.utf8))
        #expect(whole.reason == "Shutdown" && whole.message == nil)
    }

    @Test("a 200 whose body was cut is still sent")
    func truncatedSuccess() {
        let result = APNsResponseClassifier.classify(status: 200, body: Array(repeating: UInt8(ascii: "x"), count: 100), apnsID: Array("abc".utf8), bodyTruncatedAt: 100)
        #expect(result.outcome == .sent(providerID: "abc"))
    }

    @Test("410 carries its timestamp (ms) for pruning")
    func unregisteredTimestamp() {
        let result = Self.classify(410, #"{"reason":"Unregistered","timestamp":1700000000123}"#)
        #expect(result.outcome == .invalidToken(timestamp: 1_700_000_000_123))
        for bad in ["-5", "\"1700000000123\"", "1.5", "1e400", "99999999999999999999999"] {
            #expect(Self.classify(410, #"{"reason":"Unregistered","timestamp":\#(bad)}"#).outcome == .invalidToken(timestamp: nil), "\(bad)")
        }
    }

    @Test("no response (status 0) is retryable on a new connection, never sent")
    func noResponse() {
        let result = Self.classify(0, "")
        #expect(result.outcome == .retryable(newConnection: true))
        #expect(result.reason == "no_response")
    }

    @Test("an unknown reason keeps its wire name, bounded, and the status decides", arguments: [
        (400, ResponseOutcome.permanent), (403, .configurationError), (410, .invalidToken(timestamp: nil)),
        (429, .throttled(.provider)), (500, .retryable(newConnection: false)), (502, .retryable(newConnection: false)),
        (418, .permanent), (599, .retryable(newConnection: false)),
    ])
    func unknownReason(status: Int, outcome: ResponseOutcome) {
        let result = Self.classify(status, #"{"reason":"BrandNewReason"}"#)
        #expect(result.outcome == outcome)
        #expect(result.reason == "BrandNewReason")
        #expect(APNsErrorReason(wireName: "BrandNewReason") == .unknown("BrandNewReason"))
    }

    /// Named so that a test log shows the name, not a megabyte of body.
    static let hostileBodies: [String: String] = [
        "empty": "", "open brace": "{", "null": "null", "array": "[1,2]", "control bytes": "\u{0}\u{1}\u{FF}",
        "numeric reason": #"{"reason":42}"#, "null reason": #"{"reason":null}"#, "empty reason": #"{"reason":""}"#,
        "100k brackets": String(repeating: "[", count: 100_000), "1 MB of spaces": String(repeating: " ", count: 1_000_000),
        "100k reason": #"{"reason":"\#(String(repeating: "x", count: 100_000))"}"#,
    ]

    @Test("hostile bodies classify by status and never crash", arguments: hostileBodies.keys.sorted())
    func hostile(name: String) {
        let body = Self.hostileBodies[name] ?? ""
        let result = Self.classify(503, body)
        #expect(result.outcome == .retryable(newConnection: false))
        #expect(result.reason.utf8.count <= 80)
    }

    @Test("reason strings are made printable and bounded; long token-like runs are redacted")
    func printableReasons() {
        let control = Self.classify(400, #"{"reason":"Bad\u0000\u001b[31mThing\n"}"#)
        #expect(control.reason.utf8.allSatisfy { (0x20...0x7E).contains($0) })
        let long = Self.classify(400, #"{"reason":"Reason \#(String(repeating: "ab ", count: 100))"}"#)
        #expect(long.reason.hasSuffix("…"))
        #expect(long.reason.utf8.count <= 64 + 3)
        let jwt = "eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWTEyMzQ1NjcifQ.eyJpc3MiOiJBQkNERTEyMzQ1In0"
        #expect(!Self.classify(403, #"{"reason":"\#(jwt)"}"#).reason.contains("eyJhbGci"))
    }

    @Test("Retry-After is read from its header")
    func retryAfter() {
        #expect(Self.classify(429, #"{"reason":"TooManyRequests"}"#, retryAfter: "12").retryAfter == .delay(.seconds(12)))
        #expect(Self.classify(503, "", retryAfter: "later").retryAfter == nil)
    }
}
