import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Class 1 of issue 7 outside templates: every integer from a record, the configuration or the
/// run's clock that reaches encoding arithmetic is range-checked; overflow is a reject
/// (`invalid_value`, naming the field) or a diagnostic (path, line, column), never a trap.
@Suite("Integer bounds in encoding")
struct ArithmeticBoundsTests {
    static let ios = """
    name: t
    device_types: [ios]
    providers:
      apns: { topic: com.example.app }
    notification:
      alert: x

    """

    static func badgeCampaign(_ badge: String) throws -> Campaign {
        try compileCampaign(ios + "  ios: { badge: \"\(badge)\" }\n")
    }

    static func line(deviceBadge: String?) -> String {
        let badge = deviceBadge.map { #","badge":\#($0)"# } ?? ""
        return #"{"id":"c","platform":"ios","token":"\#(apnsToken)"\#(badge)}"#
    }

    static func badge(_ out: EncodedLine) -> Int? {
        ((out.requests.first?["body"] as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int
    }

    // MARK: Relative badges against the device's badge

    /// (badge spec, device badge JSON, expected badge) for devices that are written.
    static let written: [(String, String?, Int)] = [
        ("+1", nil, 1), ("auto", "4", 5), ("-1", "0", 0), ("-5", "3", 0), ("+99998", "1", 99_999),
        ("-99999", "99999", 0), ("+1", "null", 1),
    ]

    @Test(arguments: written.indices)
    func relativeBadgeWithinRange(_ i: Int) throws {
        let (spec, device, expected) = Self.written[i]
        let out = try encode(try Self.badgeCampaign(spec), Self.line(deviceBadge: device))
        #expect(out.rejects.isEmpty)
        #expect(Self.badge(out) == expected)
    }

    /// (badge spec, device badge JSON, the reject's message after `notification.ios.badge: `).
    static let rejected: [(String, String, String)] = [
        ("-1", "-9223372036854775808", "the device's badge is -9223372036854775808, expected an integer from 0 to 99999"),
        ("+1", "9223372036854775807", "the device's badge is 9223372036854775807, expected an integer from 0 to 99999"),
        ("+1", "99999", "the device's badge 99999 changed by 1 gives 100000, expected 0 to 99999"),
        ("auto", "99999", "the device's badge 99999 changed by 1 gives 100000, expected 0 to 99999"),
        ("+99999", "2", "the device's badge 2 changed by 99999 gives 100001, expected 0 to 99999"),
        ("-1", "-1", "the device's badge is -1, expected an integer from 0 to 99999"),
        ("+1", "100000", "the device's badge is 100000, expected an integer from 0 to 99999"),
        ("+1", "2.5", "the device's badge is 2.5, expected an integer from 0 to 99999"),
        ("+1", "1e3", "the device's badge is 1e3, expected an integer from 0 to 99999"),
        ("+1", #""5""#, #"the device's badge is "5", expected an integer from 0 to 99999"#),
        ("+1", "99999999999999999999999", "the device's badge is 99999999999999999999999, expected an integer from 0 to 99999"),
    ]

    @Test(arguments: rejected.indices)
    func relativeBadgeOutOfRangeIsAReject(_ i: Int) throws {
        let (spec, device, message) = Self.rejected[i]
        let out = try encode(try Self.badgeCampaign(spec), Self.line(deviceBadge: device), number: 12)
        #expect(out.requests.isEmpty)
        let reject = try #require(out.rejects.first)
        #expect(reject["code"] as? String == "invalid_value")
        #expect(reject["line"] as? Int == 12)
        #expect(reject["reason"] as? String == "notification.ios.badge: \(message)")
        #expect(out.counts.reconciles)
    }

    @Test func templatedBadgeUsesTheSameRange() throws {
        let campaign = try Self.badgeCampaign("{{ customer.n }}")
        for (value, message) in [
            ("100000", "rendered 100000, expected 0 to 99999"),
            ("-1", "rendered -1, expected 0 to 99999"),
            ("-9223372036854775808", "rendered '-9223372036854775808', expected an integer"),
        ] {
            let out = try encode(campaign, #"{"id":"c","customer":{"n":\#(value)},"platform":"ios","token":"\#(apnsToken)"}"#)
            #expect(out.rejects.first?["code"] as? String == "invalid_value")
            #expect(out.rejects.first?["reason"] as? String == "notification.ios.badge: \(message)")
        }
    }

    // MARK: Configuration values

    static func single(_ yaml: String, path: String) -> ConfigDiagnostic? {
        diagnostics(yaml).first { $0.path == path && $0.severity == .error }
    }

    @Test(arguments: [
        ("\"+100000\"", "a relative badge changes it by at most 99999, found '+100000'"),
        ("\"-100000\"", "a relative badge changes it by at most 99999, found '-100000'"),
        ("\"123456\"", "123456 is out of range: expected 0 to 99999"),
        ("\"+9223372036854775808\"", "expected an integer, \"auto\", \"+N\" or \"-N\", found '+9223372036854775808'"),
        ("100000", "100000 is out of range: expected 0 to 99999"),
    ])
    func badgeConstantsAreCheckedByValidate(_ badge: String, _ message: String) throws {
        let found = try #require(Self.single(Self.ios + "  ios: { badge: \(badge) }\n", path: "notification.ios.badge"))
        #expect(found.message == message)
        #expect(found.line == 7 && found.column == 17)
    }

    @Test(arguments: [
        ("ios: { expiry: 9223372036854775807 }", "notification.ios.expiry", 18),
        ("ios: { expiry: 2147483648 }", "notification.ios.expiry", 18),
        ("ios: { expiry: -1 }", "notification.ios.expiry", 18),
        ("android: { time_to_live: 9223372036854775807 }", "notification.android.time_to_live", 28),
        ("web: { time_to_live: 2147483648 }", "notification.web.time_to_live", 24),
        ("amazon: { expires_after: 99999999999 }", "notification.amazon.expires_after", 28),
    ])
    func relativeExpiriesAreBounded(_ override: String, _ path: String, _ column: Int) throws {
        // `column` is where the value starts on line 5 (two spaces of indentation, 1-based).
        let yaml = """
        name: t
        providers: { apns: { topic: a.b }, fcm: { project_id: p } }
        notification:
          alert: x
          \(override)
        """
        let found = try #require(Self.single(yaml, path: path), "\(diagnostics(yaml))")
        #expect(found.message.contains("is out of range: expected 0 to 2147483647 seconds from now"), "\(found.message)")
        #expect(found.line == 5 && found.column == column)
    }

    /// `--now` may be any Int64: adding an expiry to it, or subtracting it from a timestamp, is
    /// checked, and an overflow is a diagnostic on the expiry.
    @Test func expiryAgainstAnExtremeClockIsADiagnostic() throws {
        func compileErrors(_ yaml: String, now: Int) -> [ConfigDiagnostic] {
            do {
                _ = try compileCampaign(yaml, now: now)
                return []
            } catch let error as CampaignCompileError {
                return error.diagnostics
            } catch {
                Issue.record("\(error)")
                return []
            }
        }
        let relative = compileErrors(Self.ios + "  ios: { expiry: 86400 }\n", now: Int.max - 10)
        #expect(relative.map(\.path) == ["notification.ios.expiry"])
        #expect(relative.first?.message == "86400 seconds after the run's clock (\(Int.max - 10)) is out of range")
        #expect(relative.first?.line == 7)

        let absolute = compileErrors("""
        name: t
        providers: { fcm: { project_id: p } }
        device_types: [android]
        notification: { alert: x, android: { time_to_live: "2030-01-01T00:00:00Z" } }
        """, now: Int.min)
        #expect(absolute.map(\.path) == ["notification.android.time_to_live"])

        let sms = compileErrors("""
        name: t
        device_types: [sms]
        providers: { sms: { url: "https://hooks.example.com/sms" } }
        notification: { alert: x }
        """, now: Int.max - 100)
        #expect(sms.map(\.path) == ["notification.sms.expiry"])

        // The same expiries with an ordinary clock compile, and the header is now + seconds.
        let campaign = try compileCampaign(Self.ios + "  ios: { expiry: 86400 }\n", now: 1_800_000_000)
        let out = try encode(campaign, Self.line(deviceBadge: nil))
        #expect((out.requests.first?["headers"] as? [String: String])?["apns-expiration"] == "1800086400")
    }

    @Test func pastTimestampsAreNeverNegative() throws {
        let campaign = try compileCampaign(Self.ios + "  ios: { expiry: \"0000-03-01T00:00:00Z\" }\n", now: 1_800_000_000)
        let out = try encode(campaign, Self.line(deviceBadge: nil))
        #expect((out.requests.first?["headers"] as? [String: String])?["apns-expiration"] == "0")
    }
}

@Suite("Non-finite numbers in the pipeline")
struct NonFiniteNumberTests {
    @Test(arguments: [".nan", ".inf", "-.inf"])
    func areDiagnostics(_ value: String) throws {
        let found = diagnostics("""
        name: t
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification:
          ios: { live_activity: { event: update, content_state: {}, relevance_score: \(value) } }
        """).filter { $0.severity == .error }
        let diagnostic = try #require(found.first, "\(found)")
        #expect(diagnostic.path == "notification.ios.live_activity.relevance_score")
        #expect(diagnostic.message.hasPrefix("expected a finite number, found "))
        #expect(diagnostic.line == 5)
    }
}

@Suite("The run clock as a default")
struct RunClockDefaultTests {
    static let yaml = """
    name: t
    device_types: [ios]
    providers: { apns: { topic: com.example.app } }
    notification:
      ios: { live_activity: { event: update, content_state: {} } }
    """

    @Test(arguments: [-1, Int(Int32.max) + 1, Int.min, Int.max])
    func liveActivityTimestampFromAClockOutOfRange(_ now: Int) throws {
        do {
            _ = try compileCampaign(Self.yaml, now: now)
            Issue.record("compiled with now = \(now)")
        } catch let error as CampaignCompileError {
            let diagnostic = try #require(error.diagnostics.first)
            #expect(diagnostic.path == "notification.ios.live_activity.timestamp")
            #expect(diagnostic.message == "the run's clock (\(now)) is outside 0 to 2147483647: give live_activity.timestamp")
            #expect(diagnostic.line == 5)
        }
    }

    @Test func anOrdinaryClockIsTheTimestamp() throws {
        let out = try encode(try compileCampaign(Self.yaml, now: 1_800_000_000), #"{"id":"c","platform":"ios","token":"\#(apnsToken)"}"#)
        #expect(((out.requests.first?["body"] as? [String: Any])?["aps"] as? [String: Any])?["timestamp"] as? Int == 1_800_000_000)
    }
}
