import PushlineDelivery
import Testing

@Suite("Send rate")
struct SendRateTests {
    @Test("the pipeline's forms", arguments: [
        ("10000/s", 10_000.0, 1_000), ("600000/min", 10_000.0, 1_000), ("5000/m", 5000.0 / 60, 9),
        (" 3600 / h ", 1.0, 1), ("1/second", 1.0, 1), ("120/MIN", 2.0, 1), ("7/sec", 7.0, 1),
    ])
    func parses(text: String, perSecond: Double, burst: Int) throws {
        let rate = try SendRate(parsing: text)
        #expect(rate.perSecond == perSecond)
        #expect(rate.burst == burst)
    }

    @Test("FCM's default is its project quota, 600,000 a minute")
    func fcmDefault() throws {
        #expect(SendRate.fcmDefault == (try SendRate(parsing: "600000/min")))
        #expect(SendRate.fcmDefault.perSecond == 10_000)
    }

    @Test("an explicit burst is kept")
    func burst() throws {
        #expect(try SendRate(parsing: "10000/s", burst: 50).burst == 50)
        #expect(throws: SendRate.Invalid.self) { try SendRate(parsing: "10/s", burst: 0) }
        #expect(throws: SendRate.Invalid.self) { try SendRate(parsing: "10/s", burst: -1) }
        #expect(throws: SendRate.Invalid.self) { try SendRate(parsing: "10/s", burst: Int.max) }
    }

    @Test("bad forms are errors quoting the text", arguments: [
        "0/s", "-5/s", "10/day", "abc", "10", "1e3/s", "1.5/s", "/s", "10/", "10/s/s",
        "9999999999999/s", "100000000/s", "", "+5/s", "5 0/s",
    ])
    func invalid(text: String) {
        #expect(throws: SendRate.Invalid.self) { try SendRate(parsing: text) }
    }

    @Test("numeric rates: positive, finite, at most 10^7/s")
    func numeric() {
        for bad in [0, -1, .nan, .infinity, 1e8] as [Double] {
            #expect(throws: SendRate.Invalid.self) { try SendRate(perSecond: bad) }
        }
    }

    @Test("shared over transfer threads: each gets its part of the rate and the burst, never a burst of zero")
    func divided() throws {
        let rate = try SendRate(parsing: "9000/s", burst: 900)
        let third = rate.divided(by: 3)
        #expect(third.perSecond == 3_000 && third.burst == 300)
        let tiny = try SendRate(parsing: "2/s", burst: 1).divided(by: 16)
        #expect(tiny.perSecond == 0.125 && tiny.burst == 1)
        // Nonsense counts are taken as one.
        #expect(rate.divided(by: 0) == rate && rate.divided(by: -4) == rate)
    }
}
