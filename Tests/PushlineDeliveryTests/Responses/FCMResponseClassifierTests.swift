import PushlineDelivery
import Testing

@Suite("FCM response classification")
struct FCMResponseClassifierTests {
    static func body(code: Int, status: String, message: String, errorCode: String?) -> String {
        let details = errorCode.map {
            #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"#
        } ?? ""
        return #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(details)}}"#
    }

    static func classify(_ status: Int, _ body: String, retryAfter: String? = nil) -> ResponseClassification {
        FCMResponseClassifier.classify(status: status, body: Array(body.utf8), retryAfter: retryAfter.map { Array($0.utf8) })
    }

    /// Every row of the FCM table in PROVIDERS.md, with the bodies FCM sends.
    static let table: [(Int, String, String, String?, ResponseOutcome)] = [
        (400, "INVALID_ARGUMENT", "Invalid value at 'message.android.ttl'", "INVALID_ARGUMENT", .permanent),
        (400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", "INVALID_ARGUMENT", .invalidToken(timestamp: nil)),
        (404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED", .invalidToken(timestamp: nil)),
        (403, "PERMISSION_DENIED", "SenderId mismatch", "SENDER_ID_MISMATCH", .invalidToken(timestamp: nil)),
        (429, "RESOURCE_EXHAUSTED", "Quota exceeded", "QUOTA_EXCEEDED", .throttled(.project)),
        (503, "UNAVAILABLE", "The service is currently unavailable.", "UNAVAILABLE", .retryable(newConnection: false)),
        (500, "INTERNAL", "Internal error encountered.", "INTERNAL", .retryable(newConnection: false)),
        (401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", "THIRD_PARTY_AUTH_ERROR", .configurationError),
        (401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", nil, .refreshCredentials),
    ]

    @Test("every row of the table, as it says", arguments: table)
    func row(status: Int, rpcStatus: String, message: String, errorCode: String?, outcome: ResponseOutcome) {
        let result = Self.classify(status, Self.body(code: status, status: rpcStatus, message: message, errorCode: errorCode))
        #expect(result.outcome == outcome)
        #expect(result.reason == errorCode ?? rpcStatus)
        #expect(result.message == message)
        if let errorCode {
            #expect(FCMErrorCode(wireName: errorCode).wireName == errorCode)
            if case .unknown = FCMErrorCode(wireName: errorCode) { Issue.record("\(errorCode) is not typed") }
        }
    }

    @Test("200: sent with the message name")
    func sent() {
        let result = Self.classify(200, #"{"name":"projects/pushline-demo/messages/0:1700000000%abc"}"#)
        #expect(result.outcome == .sent(providerID: "projects/pushline-demo/messages/0:1700000000%abc"))
        #expect(Self.classify(200, "garbage").outcome == .sent(providerID: nil))
        #expect(Self.classify(200, #"{"name":42}"#).outcome == .sent(providerID: nil))
    }

    @Test("only 200 is sent: any other status outside 4xx/5xx fails as unexpected_status, whatever the body says",
          arguments: APNsResponseClassifierTests.unexpectedStatuses)
    func unexpectedStatus(status: Int) {
        let bodies = [
            "", #"{"name":"projects/pushline-demo/messages/0:1700000000%abc"}"#,
            Self.body(code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED"),
        ]
        for body in bodies {
            let result = Self.classify(status, body, retryAfter: "5")
            #expect(result.outcome == .permanent, "\(status) \(body)")
            #expect(result.reason == "unexpected_status")
            #expect(result.status == status)
            #expect(result.providerReason == nil)
            #expect(result.message == "HTTP \(status) is not an answer the provider documents; only 200 is sent")
        }
    }

    @Test("a body the transport cut is not read: the status decides, and the message says why", arguments: [
        (400, ResponseOutcome.permanent), (401, .refreshCredentials), (404, .configurationError),
        (429, .throttled(.provider)), (500, .retryable(newConnection: false)),
    ])
    func truncatedBody(status: Int, outcome: ResponseOutcome) {
        // The kept prefix is whole JSON with a detail that would decide otherwise.
        let prefix = Array(Self.body(code: status, status: "RESOURCE_EXHAUSTED", message: "m", errorCode: "QUOTA_EXCEEDED").utf8)
        let result = FCMResponseClassifier.classify(status: status, body: prefix, bodyTruncatedAt: 8192)
        #expect(result.outcome == outcome)
        #expect(result.reason == "http_\(status)")
        #expect(result.message == "response body over 8192 bytes")
        #expect(FCMResponseClassifier.classify(status: status, body: prefix).outcome == .throttled(.project))
    }

    @Test("a 200 whose body was cut is sent, without a message name read from the prefix")
    func truncatedSuccess() {
        let prefix = Array(#"{"name":"projects/p/messages/1"}"#.utf8)
        #expect(FCMResponseClassifier.classify(status: 200, body: prefix, bodyTruncatedAt: 8192).outcome == .sent(providerID: nil))
        #expect(FCMResponseClassifier.classify(status: 200, body: prefix).outcome == .sent(providerID: "projects/p/messages/1"))
    }

    @Test("QUOTA_EXCEEDED keeps its Retry-After for the project pause")
    func quotaRetryAfter() {
        let result = Self.classify(429, Self.body(code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota", errorCode: "QUOTA_EXCEEDED"), retryAfter: "90")
        #expect(result.outcome == .throttled(.project))
        #expect(result.retryAfter == .delay(.seconds(90)))
    }

    @Test("INVALID_ARGUMENT whose BadRequest detail names message.token is an invalid token")
    func badRequestToken() {
        let body = #"{"error":{"code":400,"message":"Invalid request","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"Invalid registration token"}]},{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}"#
        #expect(Self.classify(400, body).outcome == .invalidToken(timestamp: nil))
    }

    @Test("without an FcmError detail the status decides", arguments: [
        (400, ResponseOutcome.permanent), (401, .refreshCredentials), (403, .configurationError), (404, .configurationError),
        (429, .throttled(.provider)), (500, .retryable(newConnection: false)), (502, .retryable(newConnection: false)),
        (503, .retryable(newConnection: false)), (0, .retryable(newConnection: true)), (413, .permanent),
    ])
    func statusOnly(status: Int, outcome: ResponseOutcome) {
        #expect(Self.classify(status, "").outcome == outcome)
        #expect(Self.classify(status, "<html>Bad Gateway</html>").outcome == outcome)
    }

    @Test("an unknown errorCode is kept, bounded, and the status decides")
    func unknownCode() {
        let result = Self.classify(503, Self.body(code: 503, status: "UNAVAILABLE", message: "m", errorCode: "NEW_THING"))
        #expect(result.outcome == .retryable(newConnection: false))
        #expect(result.reason == "NEW_THING")
        #expect(FCMErrorCode(wireName: "NEW_THING") == .unknown("NEW_THING"))
        #expect(Set(FCMErrorCode.known.map(\.wireName)).isSuperset(of: Self.table.compactMap(\.3)))
    }

    /// Named so that a test log shows the name, not the body.
    static let hostileBodies: [String: String] = [
        "empty": "", "open brace": "{", "numeric error": #"{"error":42}"#, "numeric details": #"{"error":{"details":42}}"#,
        "odd details": #"{"error":{"details":[1,"x",null,{"@type":7}]}}"#,
        "wrong member types": #"{"error":{"message":null,"status":[]}}"#,
        "10k nested errors": String(repeating: #"{"error":"#, count: 10_000), "binary": "\u{FF}\u{FE}\u{0}",
        "5k details": #"{"error":{"details":[\#(String(repeating: #"{"@type":"x"},"#, count: 5_000))1]}}"#,
    ]

    @Test("hostile bodies never crash", arguments: hostileBodies.keys.sorted())
    func hostile(name: String) {
        let body = Self.hostileBodies[name] ?? ""
        #expect(Self.classify(500, body).outcome == .retryable(newConnection: false))
        #expect(Self.classify(404, body).outcome == .configurationError)
    }

    @Test("messages are bounded and printable, credentials in them redacted")
    func messages() {
        let token = "ya29.a0AfB_byC8TQqXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
        let result = Self.classify(400, Self.body(code: 400, status: "INVALID_ARGUMENT", message: "bad \(token) \\u001b[2J \(String(repeating: "word ", count: 200))", errorCode: "INVALID_ARGUMENT"))
        #expect(result.outcome == .permanent)
        let message = result.message ?? ""
        #expect(!message.contains("ya29"))
        #expect(message.utf8.count <= 300 + 3)
        #expect(message.utf8.allSatisfy { (0x20...0x7E).contains($0) || $0 >= 0x80 })
    }
}
