import PushlineDelivery
import Testing

/// Seeded random and mutated inputs through every parser that reads a server's or a file's
/// bytes: each must return, with bounded printable text, whatever the bytes.
@Suite("Hostile bytes")
struct HostileInputTests {
    static let seeds: [String] = [
        #"{"reason":"Unregistered","timestamp":1700000000123}"#,
        #"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}"#,
        #"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"name":"projects/p/messages/1"}"#,
    ]

    /// `count` inputs: random bytes, and seeds with bytes flipped, cut or repeated.
    static func inputs(count: Int, seed: UInt64) -> [[UInt8]] {
        var random = SeededRandomSource(seed: seed)
        var result: [[UInt8]] = []
        for index in 0..<count {
            if index % 3 == 0 {
                let length = Int.random(in: 0...300, using: &random)
                result.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
            } else {
                var bytes = Array(seeds[index % seeds.count].utf8)
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    guard !bytes.isEmpty else { break }
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                    case 1: bytes.removeSubrange(at...)
                    case 2: bytes.insert(contentsOf: bytes[at...].prefix(20), at: at)
                    default: bytes.insert(contentsOf: [0x5C, 0x75, 0x44, 0x38, 0x30, 0x30], at: at)  // \uD800
                    }
                }
                result.append(bytes)
            }
        }
        return result
    }

    static func isBoundedPrintable(_ text: String, limit: Int) -> Bool {
        text.utf8.count <= limit + 3 && text.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) || $0 == "…" }
    }

    @Test("classifiers and the token response parser never crash and print only bounded ASCII")
    func randomBodies() {
        for body in Self.inputs(count: 3_000, seed: 2026) {
            for status in [0, 200, 204, 302, 400, 401, 403, 404, 410, 429, 500, 503] {
                let apns = APNsResponseClassifier.classify(status: status, body: body, apnsID: body, retryAfter: body)
                let fcm = FCMResponseClassifier.classify(status: status, body: body, retryAfter: body)
                #expect(Self.isBoundedPrintable(apns.reason, limit: 64))
                #expect(Self.isBoundedPrintable(fcm.reason, limit: 64))
                #expect(Self.isBoundedPrintable(fcm.message ?? "", limit: 300))
                if case .sent(let id?) = apns.outcome { #expect(Self.isBoundedPrintable(id, limit: 128)) }
                if status == 200 || status == 401 {
                    let parsed = Result { () throws(OAuthError) in try OAuthTokenResponse.parse(OAuthHTTPResponse(status: status, body: body)) }
                    if case .failure(let error) = parsed {
                        #expect(error.description.utf8.count < 1_000)
                    }
                }
            }
        }
    }

    @Test("the typed reason comes with the classification")
    func typedReasons() {
        let apns = APNsResponseClassifier.classify(status: 429, body: Array(#"{"reason":"TooManyProviderTokenUpdates"}"#.utf8))
        #expect(apns.providerReason == .apns(.tooManyProviderTokenUpdates))
        let unknown = APNsResponseClassifier.classify(status: 400, body: Array(#"{"reason":"Nope"}"#.utf8))
        #expect(unknown.providerReason == .apns(.unknown("Nope")))
        let fcm = FCMResponseClassifier.classify(status: 404, body: Array(#"{"error":{"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#.utf8))
        #expect(fcm.providerReason == .fcm(.unregistered))
        #expect(APNsResponseClassifier.classify(status: 503, body: [UInt8]()).providerReason == nil)
    }
}
