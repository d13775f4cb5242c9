import PushlineCore
import PushlineIO

/// Real Web Push subscriptions for a generated audience's web devices
/// (`generate-audience --webpush-subscriptions FILE`): the emulator's
/// `webpush-subscriptions.ndjson`, one `{"endpoint":…,"keys":{"p256dh":…,"auth":…}}` per line, so
/// a staged send to the emulator encrypts for keys it can decrypt.
///
/// Read once and whole, so it is bounded: at most 16 MiB and 100,000 subscriptions; every line
/// must pass the audience reader's own Web Push checks, or the file is refused naming the line.
public struct WebPushSubscriptionList: Sendable, Equatable {
    public struct Subscription: Sendable, Equatable {
        public var endpoint: String
        public var p256dh: String
        public var auth: String

        public init(endpoint: String, p256dh: String, auth: String) {
            self.endpoint = endpoint
            self.p256dh = p256dh
            self.auth = auth
        }
    }

    public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static let maxBytes = 16 << 20
    public static let maxSubscriptions = 100_000

    public let subscriptions: [Subscription]

    public init(_ subscriptions: [Subscription]) {
        self.subscriptions = subscriptions
    }

    public static func load(_ path: String) throws(LoadError) -> WebPushSubscriptionList {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: maxBytes)
        } catch {
            throw LoadError(description: "\(path): \(error.message) (Web Push subscriptions: at most \(maxBytes) bytes)")
        }
        return try parse(bytes, path: path)
    }

    /// One subscription per non-empty line (`\n` or `\r\n`).
    public static func parse(_ bytes: [UInt8], path: String) throws(LoadError) -> WebPushSubscriptionList {
        var subscriptions: [Subscription] = []
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            lineNumber += 1
            var lineEnd = end
            if lineEnd > start && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            if lineEnd > start {
                guard subscriptions.count < maxSubscriptions else {
                    throw LoadError(description: "\(path): more than \(maxSubscriptions) Web Push subscriptions")
                }
                switch subscription(Array(bytes[start..<lineEnd])) {
                case .success(let subscription): subscriptions.append(subscription)
                case .failure(let problem):
                    throw LoadError(description: "\(path):\(lineNumber): \(problem.description) (expected {\"endpoint\":\"https://…\",\"keys\":{\"p256dh\":…,\"auth\":…}})")
                }
            }
            start = end + 1
        }
        guard !subscriptions.isEmpty else { throw LoadError(description: "\(path): holds no Web Push subscription") }
        return WebPushSubscriptionList(subscriptions)
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    private static func subscription(_ line: [UInt8]) -> Result<Subscription, Problem> {
        let document: JSONDocument
        do {
            document = try JSONDocument(bytes: line, maxDepth: 8)
        } catch {
            return .failure(Problem(description: error.description))
        }
        let root = document.root
        guard root.kind == .object, let endpoint = root["endpoint"]?.stringValue, let keys = root["keys"], keys.kind == .object,
              let p256dh = keys["p256dh"]?.stringValue, let auth = keys["auth"]?.stringValue
        else { return .failure(Problem(description: "not a Web Push subscription object")) }
        // The audience reader's checks: what passes here is never a rejected device later.
        let problem = utf8(endpoint, DeviceTokenRules.validateWebPushEndpoint)
            ?? utf8(p256dh) { DeviceTokenRules.validateWebPushKey($0, name: "p256dh", decodedBytes: 65) }
            ?? utf8(auth) { DeviceTokenRules.validateWebPushKey($0, name: "auth", decodedBytes: 16) }
        if let problem { return .failure(Problem(description: problem)) }
        return .success(Subscription(endpoint: endpoint, p256dh: p256dh, auth: auth))
    }

    private static func utf8(_ text: String, _ check: (UnsafeRawBufferPointer) -> String?) -> String? {
        var copy = text
        return copy.withUTF8 { check(UnsafeRawBufferPointer($0)) }
    }
}
