import Testing
@testable import PushlineTemplates

/// Issue 7, class 1: every integer operation on a value from a record or a template is checked.
/// Overflow or a number outside what an operation supports is `invalid_value` (a reject), never
/// a trap. Expected values follow from 64-bit ranges and Ruby Liquid's rules, worked out by hand.
@Suite struct ArithmeticTests {
    static let intMin = Int.min  // -9223372036854775808
    static let intMax = Int.max  //  9223372036854775807

    func expectInvalid(_ outcome: Robust.Outcome, mentioning text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.code == "invalid_value", "\(outcome.message)", sourceLocation: sourceLocation)
        #expect(outcome.message.contains(text), "\(outcome.message)", sourceLocation: sourceLocation)
    }

    @Test func dateOfAnExtremeTimestampIsInvalidValue() {
        // The reproduction from the issue.
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, Robust.x(-9223372036854775000)), mentioning: "filter 'date'")
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, Robust.x(Self.intMax)), mentioning: "filter 'date'")
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, Robust.x(Self.intMin)), mentioning: "filter 'date'")
        // The supported range ends with 9999-12-31T23:59:59Z = 253402300799 and starts at year 0.
        #expect(Robust.liquid(#"{{ x | date: "%Y-%m-%d %H:%M:%S" }}"#, Robust.x(253_402_300_799)) == .rendered("9999-12-31 23:59:59"))
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, Robust.x(253_402_300_800)), mentioning: "years 0 to 9999")
        #expect(Robust.liquid(#"{{ x | date: "%s" }}"#, Robust.x(-62_167_219_200)) == .rendered("-62167219200"))
        expectInvalid(Robust.liquid(#"{{ x | date: "%s" }}"#, Robust.x(-62_167_219_201)), mentioning: "years 0 to 9999")
        // A float beyond Int's range, a digit string beyond it, and a parsed date past year 9999.
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, #"{"x":1e300}"#), mentioning: "64-bit integer range")
        expectInvalid(Robust.liquid(#"{{ x | date: "%Y" }}"#, #"{"x":"99999-01-01"}"#), mentioning: "years 0 to 9999")
        // A digit string too long for an Int is not a timestamp it can read: returned unchanged, as Shopify does.
        #expect(Robust.liquid(#"{{ x | date: "%Y" }}"#, #"{"x":"99999999999999999999"}"#) == .rendered("99999999999999999999"))
    }

    /// `now` is whatever instant the campaign was compiled with (`Campaign.compile(now:)` takes
    /// any Int): at the extremes `'now' | date` is `invalid_value` like any other timestamp.
    @Test func dateOfAnExtremeNowIsInvalidValue() {
        for now in [Self.intMin, Self.intMax, 253_402_300_800, -62_167_219_201] {
            for text in ["now", "today"] {
                expectInvalid(Robust.liquid("{{ '\(text)' | date: '%Y' }}", options: TemplateOptions(now: now)), mentioning: "years 0 to 9999")
            }
        }
        #expect(Robust.liquid("{{ 'now' | date: '%Y-%m-%d' }}", options: TemplateOptions(now: 253_402_300_799)) == .rendered("9999-12-31"))
    }

    @Test func integerFiltersOverflowToInvalidValue() {
        expectInvalid(Robust.liquid("{{ x | divided_by: -1 }}", Robust.x(Self.intMin)), mentioning: "filter 'divided_by'")
        // Int.min modulo -1 is 0 in Ruby; Swift's % traps on it.
        #expect(Robust.liquid("{{ x | modulo: -1 }}", Robust.x(Self.intMin)) == .rendered("0"))
        #expect(Robust.liquid("{{ x | modulo: 7 }}", Robust.x(Self.intMin)) == .rendered("6"))  // -9223372036854775808 = -1317624576693539401 * 7 + 6
        expectInvalid(Robust.liquid("{{ x | plus: 1 }}", Robust.x(Self.intMax)), mentioning: "filter 'plus'")
        expectInvalid(Robust.liquid("{{ x | minus: 1 }}", Robust.x(Self.intMin)), mentioning: "filter 'minus'")
        expectInvalid(Robust.liquid("{{ x | times: 2 }}", Robust.x(5_000_000_000_000_000_000)), mentioning: "filter 'times'")
        expectInvalid(Robust.liquid("{{ x | times: -1 }}", Robust.x(Self.intMin)), mentioning: "filter 'times'")
        expectInvalid(Robust.liquid("{{ x | abs }}", Robust.x(Self.intMin)), mentioning: "filter 'abs'")
        #expect(Robust.liquid("{{ x | abs }}", Robust.x(Self.intMin + 1)) == .rendered("9223372036854775807"))
        // The same operations within range still compute exactly.
        #expect(Robust.liquid("{{ x | minus: 1 }}", Robust.x(Self.intMin + 1)) == .rendered("-9223372036854775808"))
        #expect(Robust.liquid("{{ x | divided_by: -2 }}", Robust.x(Self.intMin)) == .rendered("4611686018427387904"))
        #expect(Robust.liquid("{{ x | at_least: 5 }}", Robust.x(Self.intMin)) == .rendered("5"))
        #expect(Robust.liquid("{{ x | at_most: 5 }}", Robust.x(Self.intMax)) == .rendered("5"))
    }

    @Test func floatsBeyondIntRangeDoNotBecomeIntegers() {
        // ceil/floor/round of a float return integers: 1e300 has none.
        for filter in ["ceil", "floor", "round"] {
            expectInvalid(Robust.liquid("{{ x | \(filter) }}", #"{"x":1e300}"#), mentioning: "filter '\(filter)'")
            expectInvalid(Robust.liquid("{{ x | \(filter) }}", #"{"x":-9.3e18}"#), mentioning: "filter '\(filter)'")
        }
        // 2^62 as a float is within range.
        #expect(Robust.liquid("{{ x | floor }}", #"{"x":4611686018427387904.0}"#) == .rendered("4611686018427387904"))
        // Extreme digit counts clamp to ±18 (a Double has fewer digits): Int.min places must not
        // be negated. 1.5 rounded at 10^18 is 0.
        #expect(Robust.liquid("{{ 1.5 | round: x }}", Robust.x(Self.intMin)) == .rendered("0"))
        #expect(Robust.liquid("{{ 1.25 | round: x }}", Robust.x(Self.intMax)) == .rendered("1.25"))
    }

    @Test func truncateAndSliceTakeExtremeIntegers() {
        let text = #"{"x":%d,"s":"abcdef","w":"abc def ghi","tags":["a","b","c"]}"#
        func data(_ n: Int) -> String { text.replacingOccurrences(of: "%d", with: String(n)) }
        // A length at or below zero keeps no characters, only the ellipsis (Ruby: l = 0 if l < 0).
        #expect(Robust.liquid("{{ s | truncate: x }}", data(Self.intMin)) == .rendered("..."))
        #expect(Robust.liquid("{{ s | truncate: x }}", data(Self.intMax)) == .rendered("abcdef"))
        #expect(Robust.liquid("{{ w | truncatewords: x }}", data(Self.intMin)) == .rendered("abc..."))
        #expect(Robust.liquid("{{ w | truncatewords: x }}", data(Self.intMax)) == .rendered("abc def ghi"))
        // slice: start + length must not be added when the length is Int.max.
        #expect(Robust.liquid("{{ s | slice: 2, x }}", data(Self.intMax)) == .rendered("cdef"))
        #expect(Robust.liquid("{{ s | slice: x }}", data(Self.intMin)) == .rendered(""))
        #expect(Robust.liquid("{{ s | slice: x }}", data(Self.intMax)) == .rendered(""))
        #expect(Robust.liquid("{{ s | slice: -2, x }}", data(Self.intMax)) == .rendered("ef"))
        #expect(Robust.liquid("{{ s | slice: 1, x }}", data(Self.intMin)) == .rendered(""))
        #expect(Robust.liquid(#"{{ tags | slice: 1, x | join: "," }}"#, data(Self.intMax)) == .rendered("b,c"))
    }

    @Test func rangesWhoseCountDoesNotFitAreInvalid() {
        // (Int.min..5) has 2^63 + 6 elements: counting it overflows.
        expectInvalid(Robust.liquid("{% for i in (x..5) %}{{ i }}{% endfor %}", Robust.x(Self.intMin)), mentioning: "range")
        expectInvalid(Robust.liquid("{% assign r = (x..5) %}{{ r.size }}", Robust.x(Self.intMin)), mentioning: "range")
        expectInvalid(Robust.liquid("{{ (-1..x) | size }}", Robust.x(Self.intMax)), mentioning: "range")
        // A float bound beyond Int's range.
        expectInvalid(Robust.liquid("{% for i in (1..x) %}{% endfor %}", #"{"x":1e300}"#), mentioning: "64-bit integer range")
        // Ranges at the extremes whose count fits work.
        #expect(Robust.liquid("{% for i in (x..x) %}{{ i }}{% endfor %}", Robust.x(Self.intMin)) == .rendered("-9223372036854775808"))
        #expect(Robust.liquid("{% assign r = (x..x) %}{{ r.size }} {{ r.last }}", Robust.x(Self.intMax)) == .rendered("1 9223372036854775807"))
        // (1..Int.max) has Int.max elements: the loop limit refuses it before it starts.
        #expect(Robust.liquid("{% for i in (1..x) %}{% endfor %}", Robust.x(Self.intMax)) == .renderError(.loopLimit(10_000)))
    }

    @Test func forLimitAndOffsetTakeExtremeIntegers() {
        let loop = "{% for i in (1..3) limit: l offset: o %}{{ i }}{% endfor %}"
        #expect(Robust.liquid(loop, #"{"l":\#(Self.intMax),"o":0}"#) == .rendered("123"))
        #expect(Robust.liquid(loop, #"{"l":\#(Self.intMax),"o":\#(Self.intMax)}"#) == .rendered(""))
        #expect(Robust.liquid(loop, #"{"l":\#(Self.intMin),"o":\#(Self.intMin)}"#) == .rendered(""))
        #expect(Robust.liquid(loop, #"{"l":2,"o":\#(Self.intMin)}"#) == .rendered("12"))
        #expect(Robust.liquid("{% for i in (x..x) reversed limit: 1 %}{{ forloop.rindex }}{{ forloop.length }}{% endfor %}", Robust.x(Self.intMax)) == .rendered("11"))
        expectInvalid(Robust.liquid(loop, #"{"l":1e300,"o":0}"#), mentioning: "64-bit integer range")
    }

    @Test func handlebarsNumbersNeverTrap() {
        let data = #"{"name":"Ana Silva","tags":["a","b"],"big":1e300,"min":-9223372036854775808,"max":9223372036854775807}"#
        #expect(Robust.handlebars("{{truncate name big}}", data) == .rendered("Ana Silva"))
        #expect(Robust.handlebars("{{truncate name max}}", data) == .rendered("Ana Silva"))
        #expect(Robust.handlebars("[{{truncate name min}}]", data) == .rendered("[Ana Silva]"))  // not a length ≥ 0: lax mode keeps the text
        #expect(Robust.handlebars("[{{lookup tags big}}][{{lookup tags max}}][{{lookup tags min}}][{{lookup tags 1}}]", data) == .rendered("[][][][b]"))
        #expect(Robust.handlebars("{{gt max min}} {{lt big max}} {{eq min min}} {{len tags}}", data) == .rendered("true false true 2"))
        #expect(Robust.handlebars("{{min}} {{max}}", data) == .rendered("-9223372036854775808 9223372036854775807"))
    }
}
