import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// ADM's own limits on `notification.amazon` (docs/overrides.md, "Fire OS"): `expires_after` 1
/// second to 31 days, `consolidation_key` at most 64 characters. A constant is refused by
/// `validate` with its path, line and column; a personalized key is checked once rendered and
/// rejects that device (`invalid_value`), instead of ADM refusing every send of the campaign.
@Suite("ADM limits: expires_after and consolidation_key")
struct ADMLimitTests {
    static func yaml(_ amazon: String) -> String {
        """
        name: t
        device_types: [amazon]
        notification:
          alert: x
          amazon: \(amazon)
        """
    }

    static let device = Reference.line(Reference.amazon)

    static func errors(_ yaml: String) -> [ConfigDiagnostic] {
        diagnostics(yaml).filter { $0.severity == .error }
    }

    static func body(_ amazon: String) throws -> [String: Any] {
        let out = try encode(try compileCampaign(yaml(amazon)), device)
        #expect(out.rejects.isEmpty, "\(out.rejects)")
        return try #require(out.requests.first?["body"] as? [String: Any])
    }

    // MARK: expires_after

    /// 1 second and 31 days (2,678,400 s) are the bounds Amazon documents, and both are sent.
    @Test(arguments: [1, 2_678_400])
    func expiresAfterWithinADMsRangeIsSent(seconds: Int) throws {
        #expect(Self.errors(Self.yaml("{ expires_after: \(seconds) }")).isEmpty)
        #expect(try Self.body("{ expires_after: \(seconds) }")["expiresAfter"] as? Int == seconds)
    }

    /// 0 (ADM takes no "now or never") and 31 days and a second are refused by validate, at the
    /// value: line 5, column 28.
    @Test(arguments: [0, 2_678_401, 40 * 86_400])
    func expiresAfterOutsideADMsRangeFailsValidate(seconds: Int) throws {
        let found = Self.errors(Self.yaml("{ expires_after: \(seconds) }"))
        #expect(found.count == 1, "\(found)")
        let error = try #require(found.first)
        #expect(error.path == "notification.amazon.expires_after")
        #expect(error.line == 5 && error.column == 28, "\(error)")
        #expect(error.message == "\(seconds) seconds is out of range: ADM keeps a message 1 to 2678400 seconds (1 second to 31 days)")
    }

    /// An ISO time is counted from the run's clock (1,800,000,000 in these tests): 31 days ahead
    /// is sent as 2678400, a second more or a time not after the clock is refused.
    @Test func anISOTimeIsCountedFromTheRunsClock() throws {
        let clock = 1_800_000_000
        func iso(_ unix: Int) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix)))
        }
        #expect(try Self.body("{ expires_after: \"\(iso(clock + 2_678_400))\" }")["expiresAfter"] as? Int == 2_678_400)
        #expect(try Self.body("{ expires_after: \"\(iso(clock + 1))\" }")["expiresAfter"] as? Int == 1)
        let late = Self.errors(Self.yaml("{ expires_after: \"\(iso(clock + 2_678_401))\" }"))
        #expect(late.map(\.message) == ["'\(iso(clock + 2_678_401))' is 2678401 seconds after the run's clock (1800000000): ADM keeps a message 1 to 2678400 seconds (1 second to 31 days)"])
        let past = Self.errors(Self.yaml("{ expires_after: \"\(iso(clock - 60))\" }"))
        #expect(past.map(\.message) == ["'\(iso(clock - 60))' is not after the run's clock (1800000000): ADM keeps a message 1 to 2678400 seconds (1 second to 31 days)"])
        #expect(past.first?.path == "notification.amazon.expires_after")
    }

    // MARK: consolidation_key

    @Test func aConsolidationKeyOf64CharactersIsSent() throws {
        let key = String(repeating: "k", count: 64)
        #expect(Self.errors(Self.yaml("{ consolidation_key: \(key) }")).isEmpty)
        #expect(try Self.body("{ consolidation_key: \(key) }")["consolidationKey"] as? String == key)
    }

    @Test func aConstantConsolidationKeyOf65CharactersFailsValidate() throws {
        let found = Self.errors(Self.yaml("{ consolidation_key: \(String(repeating: "k", count: 65)) }"))
        #expect(found.count == 1, "\(found)")
        let error = try #require(found.first)
        #expect(error.path == "notification.amazon.consolidation_key")
        #expect(error.line == 5 && error.column == 32, "\(error)")
        #expect(error.message == "is 65 characters long; ADM takes a consolidation key of at most 64 (counted in UTF-16 units: an emoji counts 2)")
        // 32 emoji are 64 UTF-16 units; 33 are 66.
        #expect(Self.errors(Self.yaml("{ consolidation_key: \"\(String(repeating: "😀", count: 32))\" }")).isEmpty)
        #expect(Self.errors(Self.yaml("{ consolidation_key: \"\(String(repeating: "😀", count: 33))\" }")).count == 1)
    }

    /// A personalized key is known per recipient only: one that renders over 64 characters
    /// rejects that device with the reason; one within the limit is sent.
    @Test func aRenderedConsolidationKeyIsCheckedPerDevice() throws {
        let campaign = try compileCampaign(Self.yaml("{ consolidation_key: \"deal-{{ customer.key }}\" }"))
        func line(_ key: String) -> String {
            Reference.line(Reference.amazon, extra: #""customer":{"key":"\#(key)"},"#)
        }
        let fits = try encode(campaign, line(String(repeating: "a", count: 59)), number: 3)
        #expect(fits.rejects.isEmpty)
        #expect((fits.requests.first?["body"] as? [String: Any])?["consolidationKey"] as? String == "deal-" + String(repeating: "a", count: 59))
        let long = try encode(campaign, line(String(repeating: "a", count: 60)), number: 4)
        #expect(long.requests.isEmpty)
        let reject = try #require(long.rejects.first)
        #expect(reject["code"] as? String == "invalid_value")
        #expect(reject["line"] as? Int == 4)
        let reason = try #require(reject["reason"] as? String)
        #expect(reason.hasPrefix("notification.amazon.consolidation_key: rendered 'deal-aaaa"), "\(reason)")
        #expect(reason.hasSuffix(", which is 65 characters long; ADM takes a consolidation key of at most 64 (counted in UTF-16 units: an emoji counts 2)"), "\(reason)")
        #expect(long.counts.reconciles)
    }

    @Test func keyLengthCountsUTF16Units() {
        #expect(ProviderLimits.admKeyLength(utf8: Array("abc".utf8)) == 3)
        #expect(ProviderLimits.admKeyLength(utf8: Array("é€".utf8)) == 2)
        #expect(ProviderLimits.admKeyLength(utf8: Array("😀x".utf8)) == 3)
        #expect(ProviderLimits.admKeyLength(utf8: [UInt8]()) == 0)
    }
}
