import Crypto
import Foundation
import PushlineCore
@testable import PushlineDelivery
import Testing

/// Standard Webhooks signing: the specification's own example, per-attempt timestamps, stable
/// ids, and the secret's forms.
@Suite("Webhook signing (Standard Webhooks)")
struct WebhookSigningTests {
    /// The example of the Standard Webhooks specification and its reference libraries.
    static let specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test func theSpecificationsExampleSignsToItsPublishedSignature() throws {
        let key = try WebhookSigningKey(secret: Self.specSecret)
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = body.withUnsafeBytes {
            WebhookSigner.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: $0, key: key)
        }
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aSecretWithoutItsPrefixIsTheSameKey() throws {
        let bare = try WebhookSigningKey(secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n")
        let prefixed = try WebhookSigningKey(secret: Self.specSecret)
        #expect(bare.fingerprint == prefixed.fingerprint)
        #expect(!"\(bare)".contains("MfKQ"))
    }

    @Test(arguments: [
        "whsec_", "whsec_not base64!", "whsec_" + Data(count: 16).base64EncodedString(), "whsec_" + Data(count: 65).base64EncodedString(),
    ])
    func unusableSecretsAreRefused(secret: String) {
        #expect(throws: WebhookSigningKey.Invalid.self) { try WebhookSigningKey(secret: secret) }
    }

    @Test func aSecretFileIsReadAndItsProblemsNamed() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("secret.txt", Self.specSecret + "\n")
        #expect(try WebhookSigningKey.load(path: path).fingerprint == WebhookSigningKey(secret: Self.specSecret).fingerprint)
        #expect { try WebhookSigningKey.load(path: folder.path + "/missing") } throws: { error in
            "\(error)".contains("missing") && "\(error)".contains("no such file")
        }
    }

    static func request(line: Int, device: UInt32, body: String) -> OutgoingRequest {
        var index = RequestIndex()
        let start = index.arena.count
        Array(body.utf8).withUnsafeBytes { index.arena.appendRaw($0) }
        let range = ByteRange(start, index.arena.count)!
        index.append(RequestEntry(line: line, device: device, route: RouteID(0), flags: [], recipient: .empty, target: .empty, body: range, headers: .empty))
        return OutgoingRequest(tag: 0, index: index, at: 0, bytes: RequestBytes.arena(of: index))
    }

    static func headers(_ lines: TransportHeaderLines) -> [String: String] {
        var headers: [String: String] = [:]
        for line in lines.lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    @Test func eachAttemptIsSignedWithItsOwnTimeAndTheSameIdAndVerifies() throws {
        let key = try WebhookSigningKey(secret: Self.specSecret)
        let clock = TestClock(unixTime: 1_800_000_000)
        let signer = WebhookSigner(keys: [key], namespace: "nightly\n2026-11-27T00:00:00Z", clock: clock)
        let body = #"{"channel":"sms","to":"+15551234567","text":"Hi"}"#
        let request = Self.request(line: 12, device: 1, body: body)
        let first = Self.headers(try #require(signer.headerLines(for: request)))
        clock.advance(seconds: 90)
        let retry = Self.headers(try #require(signer.headerLines(for: request)))

        #expect(first["webhook-id"] == retry["webhook-id"])
        #expect(first["webhook-timestamp"] == "1800000000")
        #expect(retry["webhook-timestamp"] == "1800000090")
        for headers in [first, retry] {
            // Verified as a receiver would: HMAC over exactly `id.timestamp.body`.
            let signed = "\(headers["webhook-id"]!).\(headers["webhook-timestamp"]!).\(body)"
            let secret = try #require(Data(base64Encoded: String(Self.specSecret.dropFirst(6))))
            let expected = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: secret))
            #expect(headers["webhook-signature"] == "v1," + Data(expected).base64EncodedString())
        }
        let id = try #require(first["webhook-id"])
        #expect(id.hasPrefix("msg_") && id.utf8.count == 36)
    }

    @Test func idsDifferByDeviceAndByRunAndRepeatForTheSameMessage() throws {
        let key = try WebhookSigningKey(secret: Self.specSecret)
        let clock = TestClock()
        let tonight = WebhookSigner(keys: [key], namespace: "nightly\n2026-11-27T00:00:00Z", clock: clock)
        let resumed = WebhookSigner(keys: [key], namespace: "nightly\n2026-11-27T00:00:00Z", clock: clock)
        let tomorrow = WebhookSigner(keys: [key], namespace: "nightly\n2026-11-28T00:00:00Z", clock: clock)
        #expect(tonight.messageID(line: 5, device: 0) == resumed.messageID(line: 5, device: 0))
        #expect(tonight.messageID(line: 5, device: 0) != tonight.messageID(line: 5, device: 1))
        #expect(tonight.messageID(line: 5, device: 0) != tonight.messageID(line: 6, device: 0))
        #expect(tonight.messageID(line: 5, device: 0) != tomorrow.messageID(line: 5, device: 0))
    }

    @Test func aRouteWithoutAKeyGetsNoLines() throws {
        let signer = WebhookSigner(keys: [nil], namespace: "x", clock: TestClock())
        #expect(signer.headerLines(for: Self.request(line: 1, device: 0, body: "{}")) == nil)
    }
}
