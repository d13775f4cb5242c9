import Crypto
import Foundation
import PushlineCore

/// Signs webhook requests the Standard Webhooks way (https://www.standardwebhooks.com):
///
/// - `webhook-id`: `msg_` + 32 hex digits of SHA-256(namespace, line, device). The same for
///   every attempt of a message, and for a resumed run sending it again (the namespace is the
///   campaign and its first start), so a receiver can drop a duplicate; another run's is another.
/// - `webhook-timestamp`: UNIX seconds when the attempt is built, so a retry minutes later is
///   not refused as a replay by a receiver's tolerance window.
/// - `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the channel's key.
///
/// Built per attempt on the transfer thread: an HMAC over a few hundred bytes is about a
/// microsecond.
struct WebhookSigner: Sendable {
    private let keys: [WebhookSigningKey?]
    private let namespace: [UInt8]
    private let clock: any DeliveryClock

    /// `keys[i]`: the key of route `i` (nil for routes of other providers).
    init(keys: [WebhookSigningKey?], namespace: String, clock: any DeliveryClock) {
        self.keys = keys
        self.namespace = Array(namespace.utf8)
        self.clock = clock
    }

    /// The three header lines for `request`, or nil when its route has no key.
    func headerLines(for request: OutgoingRequest) -> TransportHeaderLines? {
        let route = request.entry.route.index
        guard route < keys.count, let key = keys[route] else { return nil }
        let id = messageID(line: request.entry.line, device: Int(request.entry.device))
        let timestamp = String(clock.unixTime())
        let signature = Self.signature(id: id, timestamp: timestamp, body: request.bytes[request.entry.body], key: key)
        return TransportHeaderLines(["webhook-id: " + id, "webhook-timestamp: " + timestamp, "webhook-signature: " + signature])
    }

    func messageID(line: Int, device: Int) -> String {
        var hasher = SHA256()
        hasher.update(data: namespace)
        withUnsafeBytes(of: Int64(line).littleEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: Int64(device).littleEndian) { hasher.update(bufferPointer: $0) }
        let digest = hasher.finalize()
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = Array("msg_".utf8)
        for byte in digest.prefix(16) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`.
    static func signature(id: String, timestamp: String, body: UnsafeRawBufferPointer, key: WebhookSigningKey) -> String {
        var mac = HMAC<SHA256>(key: key.key)
        mac.update(data: Array(id.utf8))
        mac.update(data: [UInt8(ascii: ".")])
        mac.update(data: Array(timestamp.utf8))
        mac.update(data: [UInt8(ascii: ".")])
        mac.update(data: body)
        return "v1," + Data(mac.finalize()).base64EncodedString()
    }
}
