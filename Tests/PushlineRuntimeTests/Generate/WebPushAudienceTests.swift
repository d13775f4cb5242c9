import Foundation
import PushlineCore
import PushlineEmulator
import PushlineRuntime
import Testing

/// `generate-audience --webpush-subscriptions FILE`: web devices take the emulator's
/// subscriptions in turn, the rest of the audience is what the seed gives without them.
@Suite("Generated audiences with real Web Push subscriptions")
struct WebPushAudienceTests {
    static let credentials = WebPushCredentials.generate(subscriptions: 5)
    static let origin = "https://127.0.0.1:8443"

    static func subscriptionsFile(_ scratch: Scratch) throws -> String {
        let path = scratch.file("webpush-subscriptions.ndjson")
        try credentials.subscriptionsNDJSON(origin: origin).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("web devices use the file's subscriptions round-robin in generation order; every other value is unchanged; the same seed writes the same bytes")
    func roundRobin() throws {
        let scratch = try Scratch()
        let list = try WebPushSubscriptionList.load(try Self.subscriptionsFile(scratch))
        #expect(list.subscriptions.count == 5)
        #expect(list.subscriptions[0].endpoint == Self.origin + "/push/s000")
        let plain = scratch.file("plain.ndjson")
        let real = scratch.file("real.ndjson")
        let again = scratch.file("again.ndjson")
        let devices = try AudienceGenerator(seed: 7).write(count: 300, to: plain)
        #expect(try AudienceGenerator(seed: 7, webPushSubscriptions: list.subscriptions).write(count: 300, to: real) == devices)
        _ = try AudienceGenerator(seed: 7, webPushSubscriptions: list.subscriptions).write(count: 300, to: again)
        #expect(try Data(contentsOf: URL(fileURLWithPath: real)) == Data(contentsOf: URL(fileURLWithPath: again)))

        let plainLines = try Self.lines(plain)
        let realLines = try Self.lines(real)
        var web = 0
        for (before, after) in zip(plainLines, realLines) {
            #expect(NSDictionary(dictionary: before["customer"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: after["customer"] as? [String: Any] ?? [:]))
            let beforeDevices = try #require(before["devices"] as? [[String: Any]])
            let afterDevices = try #require(after["devices"] as? [[String: Any]])
            #expect(beforeDevices.count == afterDevices.count)
            for (madeUp, device) in zip(beforeDevices, afterDevices) {
                #expect(madeUp["platform"] as? String == device["platform"] as? String)
                guard device["platform"] as? String == "web" else {
                    #expect(NSDictionary(dictionary: madeUp) == NSDictionary(dictionary: device))
                    continue
                }
                let expected = Self.credentials.subscriptions[web % 5]
                let subscription = try #require(device["subscription"] as? [String: Any])
                let keys = try #require(subscription["keys"] as? [String: String])
                #expect(subscription["endpoint"] as? String == expected.endpoint(origin: Self.origin))
                #expect(keys["p256dh"] == list.subscriptions[web % 5].p256dh)
                #expect(keys["auth"] == list.subscriptions[web % 5].auth)
                web += 1
            }
        }
        #expect(web > 10, "enough web devices to go round")
        // The device keeps its shape: {"platform":"web","subscription":{"endpoint","keys":{"p256dh","auth"}}}.
        let text = try String(contentsOfFile: real, encoding: .utf8)
        #expect(text.contains(#"{"platform":"web","subscription":{"endpoint":"https://127.0.0.1:8443/push/s000","keys":{"p256dh":""#))
    }

    @Test("a line that is not a subscription, a bad key, an empty file, too many lines or too many bytes is refused naming the file")
    func refusals() throws {
        let scratch = try Scratch()
        let good = try String(contentsOfFile: try Self.subscriptionsFile(scratch), encoding: .utf8)
        let firstLine = String(good.split(separator: "\n")[0])
        let p256dh = Data(Self.credentials.subscriptions[0].p256dh).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let cases: [(String, String, String)] = [
            ("not JSON", good + "{\n", ":6: invalid JSON"),
            ("an array", "[1,2]\n", ":1: not a Web Push subscription object"),
            ("no keys", #"{"endpoint":"https://127.0.0.1:1/push/s000"}"# + "\n", ":1: not a Web Push subscription object"),
            ("http", firstLine.replacingOccurrences(of: "https://", with: "http://") + "\n", ":1: Web Push endpoint must be an https:// URL"),
            ("short auth", #"{"endpoint":"https://127.0.0.1:1/push/s000","keys":{"p256dh":"\#(p256dh)","auth":"AAAA"}}"# + "\n", ":1: Web Push key 'auth'"),
            ("p256dh not base64url", #"{"endpoint":"https://127.0.0.1:1/push/s000","keys":{"p256dh":"\#(p256dh.dropLast())+","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"# + "\n", ":1: Web Push key 'p256dh'"),
            ("empty", "\n\n", ": holds no Web Push subscription"),
        ]
        for (name, text, message) in cases {
            let path = scratch.file("\(name).ndjson")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let error = #expect(throws: WebPushSubscriptionList.LoadError.self, "\(name)") { try WebPushSubscriptionList.load(path) }
            #expect(error?.description.hasPrefix(path + message) == true, "\(name): \(error?.description ?? "")")
        }
        // CRLF lines and blank lines are fine.
        let crlf = scratch.file("crlf.ndjson")
        try (firstLine + "\r\n\r\n" + firstLine + "\r\n").write(toFile: crlf, atomically: true, encoding: .utf8)
        #expect(try WebPushSubscriptionList.load(crlf).subscriptions.count == 2)

        // A short endpoint, so that 100,001 lines fit in 16 MiB: the line count is what is refused.
        let short = #"{"endpoint":"https://a/x","keys":{"p256dh":"\#(p256dh)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#
        let many = Array(String(repeating: short + "\n", count: WebPushSubscriptionList.maxSubscriptions + 1).utf8)
        #expect(many.count < WebPushSubscriptionList.maxBytes)
        let tooMany = #expect(throws: WebPushSubscriptionList.LoadError.self) { try WebPushSubscriptionList.parse(many, path: "many") }
        #expect(tooMany?.description == "many: more than 100000 Web Push subscriptions")

        let huge = scratch.file("huge.ndjson")
        try Data(count: WebPushSubscriptionList.maxBytes + 1).write(to: URL(fileURLWithPath: huge))
        let tooLarge = #expect(throws: WebPushSubscriptionList.LoadError.self) { try WebPushSubscriptionList.load(huge) }
        #expect(tooLarge?.description.hasPrefix(huge + ": larger than 16777216 bytes") == true, "\(tooLarge?.description ?? "")")
    }

    @Test(.enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
    func theCommandTakesTheFileAndRefusesABadOneInOneLine() async throws {
        let scratch = try Scratch()
        let subscriptions = try Self.subscriptionsFile(scratch)
        let out = scratch.file("audience.ndjson")
        let made = try await PushlineBinary.run(["generate-audience", "40", out, "--seed", "3", "--webpush-subscriptions", subscriptions])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8).contains("\"endpoint\":\"https://127.0.0.1:8443/push/s000\""))

        let bad = scratch.file("bad.ndjson")
        try "{}\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try await PushlineBinary.run(["generate-audience", "40", scratch.file("other.ndjson"), "--webpush-subscriptions", bad])
        #expect(refused.status == 4)
        #expect(refused.stderrLines.count == 1)
        #expect(refused.stderr.hasPrefix("pushline: error: \(bad):1: not a Web Push subscription object"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("other.ndjson")))
    }
}
