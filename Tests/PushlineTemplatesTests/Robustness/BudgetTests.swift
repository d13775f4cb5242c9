import Testing
@testable import PushlineTemplates

/// Issue 7, class 2: a render has a byte budget (every value a filter, `assign`, `capture` or
/// helper builds stays within the field limit while it is built) and a step budget (loop
/// iterations, filter and helper calls, snippet and partial expansions, and every byte or
/// element they read or build). Exceeding either is a reject, never gigabytes or hours.
@Suite struct BudgetTests {
    static let defaults = TemplateOptions()

    /// `{"s": "<count copies of unit>"}`.
    static func record(_ key: String, repeating unit: String, _ count: Int, extra: String = "") -> String {
        #"{"\#(key)":"\#(String(repeating: unit, count: count))"\#(extra)}"#
    }

    @Test func doublingAnAssignedStringStopsAtTheFieldLimit() {
        // The reproduction: s doubles each iteration, 1 → 2 → … → 8192 bytes after 13 appends;
        // the 14th would build 16384 > 8192 and is refused before it is built.
        let template = #"{% assign s = "x" %}{% for i in (1..n) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}"#
        #expect(Robust.liquid(template, #"{"n":100}"#) == .renderError(.outputLimit(8192)))
        #expect(Robust.liquid(template, #"{"n":13}"#) == .rendered("8192"))
        // prepend and capture are bounded the same way.
        let prepend = #"{% assign s = "x" %}{% for i in (1..n) %}{% assign s = s | prepend: s %}{% endfor %}"#
        #expect(Robust.liquid(prepend, #"{"n":100}"#) == .renderError(.outputLimit(8192)))
        let capture = #"{% assign s = "xy" %}{% for i in (1..n) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}"#
        #expect(Robust.liquid(capture, #"{"n":100}"#) == .renderError(.outputLimit(8192)))
    }

    @Test func expandingFiltersCheckWhileBuilding() {
        // replace with an empty target inserts the replacement around each of 3 characters:
        // 4 × 3000 = 12000 bytes > 8192.
        let big = String(repeating: "r", count: 3000)
        #expect(Robust.liquid(#"{{ "abc" | replace: "", r }}"#, #"{"r":"\#(big)"}"#) == .renderError(.outputLimit(8192)))
        // Every "a" of 1000 becomes 3000 bytes.
        #expect(Robust.liquid(#"{{ s | replace: "a", r }}"#, Self.record("s", repeating: "a", 1000, extra: #","r":"\#(big)""#)) == .renderError(.outputLimit(8192)))
        // join: 5000 numbers with a 10-byte separator pass 8192 bytes long before the end.
        #expect(Robust.liquid(#"{{ (1..5000) | join: "----------" }}"#) == .renderError(.outputLimit(8192)))
        // escape of text already over the limit is refused before it is escaped.
        #expect(Robust.liquid("{{ s | escape }}", Self.record("s", repeating: "<", 9000)) == .renderError(.outputLimit(8192)))
        // Within the limit they still work: 100 × "&lt;" = 400 bytes.
        #expect(Robust.liquid("{{ s | escape | size }}", Self.record("s", repeating: "<", 100)) == .rendered("400"))
    }

    @Test func repeatedWorkOnALargeValueRunsOutOfSteps() {
        // Each `size` reads the 100,000-byte string: about 100 iterations exhaust 10,000,000 steps,
        // long before the 10,000-iteration loop limit.
        let template = "{% for i in (1..10000) %}{% assign n = s | size %}{% endfor %}{{ n }}"
        #expect(Robust.liquid(template, Self.record("s", repeating: "a", 100_000)) == .renderError(.stepLimit(10_000_000)))
        // A lower budget is honored too, and the same template on a short string renders.
        #expect(Robust.liquid(template, Self.record("s", repeating: "a", 10)) == .rendered("10"))
        // 10,000 iterations of two filter calls are more than 20,000 steps.
        let small = TemplateOptions(maxRenderSteps: 20_000)
        #expect(Robust.liquid("{% for i in (1..10000) %}{% assign n = i | plus: 0 | minus: 0 %}{% endfor %}", options: small) == .renderError(.stepLimit(20_000)))
        // A range bound that is a record string is copied and parsed each time the range is built:
        // 100,000 spaces then "0" (an empty range) in a 10,000-iteration loop.
        let bound = #"{"s":"\#(String(repeating: " ", count: 100_000))0"}"#
        #expect(Robust.liquid("{% for i in (1..10000) %}{% for j in (1..s) %}{% endfor %}{% endfor %}", bound) == .renderError(.stepLimit(10_000_000)))
        #expect(Robust.liquid("{% for j in (1..s) %}{{ j }}{% else %}none{% endfor %}", bound) == .rendered("none"))
        // The code a reject carries.
        #expect(TemplateRenderError.stepLimit(1).code == "render_step_limit")
    }

    @Test func arraysBuiltFromRecordsAreBounded() {
        // 100,000 pieces cost 16 steps each: within 10,000,000 steps.
        let pieces = Self.record("s", repeating: "a,", 100_000)
        #expect(Robust.liquid(#"{{ s | split: "," | size }}"#, pieces) == .rendered("100000"))
        // With a budget of 1,000,000 the split stops before building them all.
        let small = TemplateOptions(maxRenderSteps: 1_000_000)
        #expect(Robust.liquid(#"{{ s | split: "," | size }}"#, pieces, options: small) == .renderError(.stepLimit(1_000_000)))
        // uniq compares each element with every kept one: 20,000 distinct elements are about
        // 2 × 10^8 comparisons, refused as it goes.
        let distinct = (0..<20_000).map(String.init).joined(separator: ",")
        #expect(Robust.liquid(#"{{ s | split: "," | uniq | size }}"#, #"{"s":"\#(distinct)"}"#) == .renderError(.stepLimit(10_000_000)))
        // A range is counted, never built, in comparisons: (1..10^9) would be 10^9 elements.
        #expect(Robust.liquid("{% if (1..1000000000) contains 5 %}yes{% endif %}") == .renderError(.stepLimit(10_000_000)))
        #expect(Robust.liquid("{% if (1..10) contains 5 %}yes{% endif %}") == .rendered("yes"))
        // concat in a loop doubles the array: its elements are charged each time.
        let concat = #"{% assign a = "x" | split: "," %}{% for i in (1..40) %}{% assign a = a | concat: a %}{% endfor %}{{ a | size }}"#
        #expect(Robust.liquid(concat) == .renderError(.stepLimit(10_000_000)))
    }

    @Test func selfIncludingSnippetsAreBoundedBySteps() {
        // Each level includes itself twice, following a record nested 40 deep: 2^40 expansions.
        var nested = "1"
        for _ in 0..<40 { nested = #"{"a":\#(nested)}"# }
        let data = #"{"x":\#(nested)}"#
        let liquid = TemplateOptions(snippets: ["s": "{% if x.a %}{% include 's', x: x.a %}{% include 's', x: x.a %}{% endif %}"])
        #expect(Robust.liquid("{% include 's' %}", data, options: liquid) == .renderError(.stepLimit(10_000_000)))
        let handlebars = TemplateOptions(snippets: ["p": "{{#if a}}{{> p a}}{{> p a}}{{/if}}"])
        #expect(Robust.handlebars("{{> p x}}", data, options: handlebars) == .renderError(.stepLimit(10_000_000)))
    }

    @Test func handlebarsHelpersStayWithinTheLimits() {
        let tags = "[" + (0..<1000).map { "\"t\($0)\"" }.joined(separator: ",") + "]"
        // join with a 100-byte separator: 1000 elements pass 8192 bytes as it grows.
        let separator = String(repeating: "-", count: 100)
        #expect(Robust.handlebars(#"{{join tags "\#(separator)"}}"#, #"{"tags":\#(tags)}"#) == .renderError(.outputLimit(8192)))
        #expect(Robust.handlebars(#"{{len tags}}"#, #"{"tags":\#(tags)}"#) == .rendered("1000"))
        // upper builds a 9000-byte string: over the limit even before it is written.
        #expect(Robust.handlebars("{{upper (lower s)}}", Self.record("s", repeating: "a", 9000)) == .renderError(.outputLimit(8192)))
        // #each over a record array longer than the loop limit is refused before it starts.
        let many = "[" + Array(repeating: "1", count: 20_000).joined(separator: ",") + "]"
        #expect(Robust.handlebars("{{#each xs}}{{/each}}", #"{"xs":\#(many)}"#) == .renderError(.loopLimit(10_000)))
        // Helper work is charged: 10,000 iterations reading a 2,000-byte string is 2 × 10^7 steps.
        let each = "[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]"
        #expect(Robust.handlebars("{{#each xs}}{{#if (len ../s)}}{{/if}}{{/each}}", #"{"xs":\#(each),"s":"\#(String(repeating: "b", count: 2000))"}"#)
                == .renderError(.stepLimit(10_000_000)))
    }

    @Test func lookupsRepeatedOverLargeRecordValuesAreCharged() {
        // A 20,000-member object: every lookup into it scans its members. Once per render that is
        // bounded by the template; 10,000 times in a loop it is 2 × 10^8 steps.
        let members = (0..<20_000).map { #""k\#($0)":"""# }.joined(separator: ",")
        let items = Array(repeating: "0", count: 10_000).joined(separator: ",")
        let data = #"{"big":{\#(members)},"items":[\#(items)],"blanks":[\#(Array(repeating: #""""#, count: 20_000).joined(separator: ","))]}"#
        #expect(Robust.handlebars("{{#each items}}{{../big.k19999}}{{/each}}", data) == .renderError(.stepLimit(10_000_000)))
        #expect(Robust.handlebars("[{{big.k19999}}]", data) == .rendered("[]"))
        #expect(Robust.liquid("{% for i in items %}{{ big.k19999 }}{% endfor %}", data) == .renderError(.stepLimit(10_000_000)))
        // Printing an array of 20,000 empty strings writes nothing, so the output limit never
        // stops it: each print costs its elements.
        #expect(Robust.liquid("{% for i in items %}{{ blanks }}{% endfor %}", data) == .renderError(.stepLimit(10_000_000)))
        #expect(Robust.liquid("[{{ blanks }}]", data) == .rendered("[]"))
    }

    @Test func indentedPartialCopiesAreBounded() {
        // Each indentation compiles its own copy of the 1,001-line partial, 2,000 bytes plus the
        // indentation on every line: the copies pass 2^24 bytes at the 181st indentation.
        let partial = String(repeating: "x\n", count: 1000)
        let template = (1...300).map { String(repeating: " ", count: $0) + "{{> p}}\n" }.joined()
        let outcome = Robust.handlebars(template, options: TemplateOptions(snippets: ["p": partial]))
        #expect(outcome.compileError?.line == 181, "\(outcome.message)")
        #expect(outcome.compileError?.message.contains("partials expand to more than 16777216 bytes") == true)
        let few = (1...3).map { String(repeating: " ", count: $0) + "{{> p}}\n" }.joined()
        #expect(Robust.handlebars(few, options: TemplateOptions(snippets: ["p": "x\n"])) == .rendered(" x\n  x\n   x\n"))
    }

    @Test func hostileTextIsProcessedInLinearTime() {
        // Each of these was quadratic (minutes on 100,000-byte values); expected values by counting.
        let large = TemplateOptions(maxOutputBytes: 1 << 20)
        // 100,000 leading spaces before a number.
        #expect(Robust.liquid("{{ s | plus: 1 }}", #"{"s":"\#(String(repeating: " ", count: 100_000))1"}"#) == .rendered("2"))
        // strip_html of 200,000 `<` with no `>`: nothing is a tag, every byte stays.
        let angles = Self.record("s", repeating: "<", 200_000)
        #expect(Robust.liquid("{{ s | strip_html | size }}", angles, options: large) == .rendered("200000"))
        #expect(Robust.liquid("{{ s | strip_html | size }}", angles) == .renderError(.outputLimit(8192)))
        #expect(Robust.liquid("{{ '<b>x</b><!-- y -->z<' | strip_html }}") == .rendered("xz<"))
        // replace_last of a 1,000-byte target in 100,000 matching bytes: the last match starts at 99,000.
        let target = String(repeating: "a", count: 1000)
        let text = Self.record("s", repeating: "a", 100_000, extra: #","t":"\#(target)""#)
        #expect(Robust.liquid(#"{{ s | replace_last: t, "b" | size }}"#, text, options: large) == .rendered("99001"))
        #expect(Robust.liquid(#"{{ "xaaay" | replace_last: "aa", "b" }}"#) == .rendered("xaby"))
        // "abcab" (5 bytes) starts at 0, 3 and 6 in the 12 bytes; the last match leaves "abcabc" and "c".
        #expect(Robust.liquid(#"{{ "abcabcabcabc" | replace_last: "abcab", "-" }}"#) == .rendered("abcabc-c"))
        // Handlebars merges the text around 100,000 comments into one run, in place.
        let comments = String(repeating: "x{{! c }}", count: 100_000)
        #expect(Robust.handlebars(comments, options: large) == .rendered(String(repeating: "x", count: 100_000)))
        // contains: 100,000 "a" never holds 999 "a" then "b".
        let needle = String(repeating: "a", count: 999) + "b"
        #expect(Robust.liquid("{% if s contains n %}yes{% else %}no{% endif %}",
                              Self.record("s", repeating: "a", 100_000, extra: #","n":"\#(needle)""#)) == .rendered("no"))
    }

    @Test func conditionsRepeatedInLoopsAreSteps() {
        // 10,000 iterations of 100 false conditions are 10^6 steps: over a budget of 100,000,
        // although nothing is printed and no filter runs.
        let small = TemplateOptions(maxRenderSteps: 100_000)
        let ifs = String(repeating: "{% if false %}x{% endif %}", count: 100)
        #expect(Robust.liquid("{% for i in (1..10000) %}\(ifs){% endfor %}", options: small) == .renderError(.stepLimit(100_000)))
        let items = "[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]"
        let blocks = String(repeating: "{{#if nope}}x{{/if}}", count: 100)
        #expect(Robust.handlebars("{{#each items}}\(blocks){{/each}}", #"{"items":\#(items)}"#, options: small) == .renderError(.stepLimit(100_000)))
        // Ten iterations of the same are far within it.
        #expect(Robust.liquid("{% for i in (1..10) %}\(ifs){% endfor %}", options: small) == .rendered(""))
    }
}
