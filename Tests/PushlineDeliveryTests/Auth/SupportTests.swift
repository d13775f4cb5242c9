import Foundation
import PushlineCore
@testable import PushlineDelivery
import Testing

@Suite("Delivery support: base64url, printable text, durations")
struct SupportTests {
    @Test("base64url without padding round-trips every length and matches Foundation's alphabet-swapped base64")
    func base64url() {
        var random = SeededRandomSource(seed: 11)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let encoded = String(decoding: Base64URL.encode(bytes), as: UTF8.self)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(Array(encoded.utf8)) == bytes)
        }
        #expect(Base64URL.decode(Array("a".utf8)) == nil)
        #expect(Base64URL.decode(Array("ab=".utf8)) == nil)
        #expect(Base64URL.decode(Array("a+b/".utf8)) == nil)
    }

    @Test("printable text: control bytes become ?, length is bounded, token-like runs are redacted")
    func printable() {
        #expect(PrintableText.bounded("BadDeviceToken") == "BadDeviceToken")
        #expect(PrintableText.bounded("a\u{0}b\nc\u{7F}") == "a?b?c?")
        #expect(PrintableText.bounded(Array<UInt8>([0x41, 0xFF, 0xC3, 0x28])) == "A??(")
        #expect(PrintableText.bounded(String(repeating: "ab ", count: 100), limit: 10) == "ab ab ab a…")
        let token = String(repeating: "x", count: 40)
        #expect(PrintableText.bounded("key \(token) end") == "key [redacted] end")
        #expect(PrintableText.bounded("key \(token.dropLast()) end") == "key \(token.dropLast()) end")
        // A run crossing the bound is dropped, not printed in part.
        #expect(!PrintableText.bounded("ab " + String(repeating: "Q", count: 5_000), limit: 10).contains("Q"))
        // Paths print whole when asked.
        let path = "/tmp/pushline-delivery-" + String(repeating: "A", count: 50) + "/key.p8"
        #expect(PrintableText.bounded(path, limit: 512, redactingTokens: false) == path)
    }

    @Test("durations and instants saturate instead of trapping")
    func durations() {
        #expect(DurationMath.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(DurationMath.nanoseconds(.seconds(Int64.min)) == .min)
        #expect(DurationMath.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
        #expect(DeliveryInstant(nanoseconds: .max - 1).advanced(by: .seconds(5)) == DeliveryInstant(nanoseconds: .max))
        #expect(DeliveryInstant(nanoseconds: .min + 1).advanced(by: .seconds(-5)) == DeliveryInstant(nanoseconds: .min))
        #expect(DeliveryInstant(nanoseconds: .max).duration(since: DeliveryInstant(nanoseconds: .min)) == .nanoseconds(Int64.max))
        #expect(DurationMath.duration(seconds: .nan) == nil)
        #expect(DurationMath.duration(seconds: 1e30) == nil)
        // The system clock is monotonic and its UNIX time plausible.
        let clock = SystemDeliveryClock()
        let a = clock.now(), b = clock.now()
        #expect(b >= a)
        #expect(clock.unixTime() > 1_600_000_000)
    }
}
