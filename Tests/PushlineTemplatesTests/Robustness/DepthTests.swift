import Testing
@testable import PushlineTemplates

/// Issue 7, class 3: nothing reachable from template text recurses with the text's length.
/// Long flat chains are parsed and evaluated iteratively; nesting (parentheses, brackets,
/// subexpressions, blocks, `else if`, partials) is a compile error past a documented bound, with
/// its line and column. The inputs are generated here at the sizes that overflowed the stack.
@Suite struct DepthTests {
    func expectCompileError(
        _ outcome: Robust.Outcome, line: Int, column: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = outcome.compileError else {
            Issue.record("expected a compile error, got \(outcome.message)", sourceLocation: sourceLocation)
            return
        }
        #expect((error.line, error.column) == (line, column), "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(message), "\(error)", sourceLocation: sourceLocation)
    }

    @Test func hundredThousandTermConditionsRunWithoutRecursion() {
        let terms = 100_000
        let and = "{% if " + Array(repeating: "a", count: terms).joined(separator: " and ") + " %}yes{% else %}no{% endif %}"
        #expect(Robust.liquid(and, #"{"a":true}"#) == .rendered("yes"))
        #expect(Robust.liquid(and, #"{"a":false}"#) == .rendered("no"))
        // All false but the last: `or` goes through every term.
        let or = "{% if " + Array(repeating: "b", count: terms - 1).joined(separator: " or ") + " or a %}yes{% endif %}"
        #expect(Robust.liquid(or, #"{"a":true,"b":false}"#) == .rendered("yes"))
        let mixed = "{% unless " + Array(repeating: "a == 1", count: terms).joined(separator: " and ") + " %}no{% endunless %}"
        #expect(Robust.liquid(mixed, #"{"a":1}"#) == .rendered(""))
    }

    @Test func andOrKeepShopifysRightToLeftGrouping() {
        // Shopify reads `a or b and c` as `a or (b and c)` and `a and b or c` as `a and (b or c)`.
        #expect(Robust.liquid("{% if true or false and false %}y{% else %}n{% endif %}") == .rendered("y"))
        #expect(Robust.liquid("{% if false and true or true %}y{% else %}n{% endif %}") == .rendered("n"))
        #expect(Robust.liquid("{% if true and false or true %}y{% else %}n{% endif %}") == .rendered("y"))
        #expect(Robust.liquid("{% if false or false or true and true %}y{% else %}n{% endif %}") == .rendered("y"))
        #expect(Robust.liquid("{% if false or true and false %}y{% else %}n{% endif %}") == .rendered("n"))
    }

    @Test func nestedBracketsStopAt64() {
        // `{{ a[a[a[…0…]]] }}`: the 65th `[` is at offset 3 + 2 × 64 + 1 = 132, column 133.
        let deep = "{{ " + String(repeating: "a[", count: 100_000) + "0" + String(repeating: "]", count: 100_000) + " }}"
        expectCompileError(Robust.liquid(deep), line: 1, column: 133, "expression nests deeper than 64 levels")
        // 64 levels compile and look up: a = [0], so a[0] = 0 at every level.
        let ok = "{{ " + String(repeating: "a[", count: 64) + "0" + String(repeating: "]", count: 64) + " }}"
        #expect(Robust.liquid(ok, #"{"a":[0]}"#) == .rendered("0"))
        // A computed root `[[[…]]]` counts the same way: the 65th `[` is at offset 3 + 64, column 68.
        let roots = "{{ " + String(repeating: "[", count: 20_000) + "'k'" + String(repeating: "]", count: 20_000) + " }}"
        expectCompileError(Robust.liquid(roots), line: 1, column: 68, "expression nests deeper than 64 levels")
    }

    @Test func nestedRangeParenthesesStopAt64() {
        // `{% for i in ((((1..1)..1)..1)… %}` on line 2: "{% for i in " is 12 bytes, so the 65th
        // `(` is at column 12 + 65 = 77.
        let deep = "x\n{% for i in " + String(repeating: "(", count: 100_000) + "1" + String(repeating: "..1)", count: 100_000) + " %}{% endfor %}"
        expectCompileError(Robust.liquid(deep), line: 2, column: 77, "expression nests deeper than 64 levels")
        // Nested ranges within the bound evaluate (a range as a bound counts as 0, as in Ruby).
        #expect(Robust.liquid("{% for i in ((2..3)..1) %}{{ i }}{% endfor %}") == .rendered("01"))
    }

    @Test func nestedBlocksAndLiquidTagsStopAt64() {
        let ifs = String(repeating: "{% if true %}", count: 20_000) + String(repeating: "{% endif %}", count: 20_000)
        // The 65th `{% if` starts at offset 13 × 64 = 832, column 833.
        expectCompileError(Robust.liquid(ifs), line: 1, column: 833, "blocks nest deeper than 64 levels")
        // `{% liquid liquid liquid … echo 1 %}`: each `liquid` line opens a block.
        let liquids = "{% liquid " + String(repeating: "liquid ", count: 20_000) + "echo 1 %}"
        #expect(Robust.liquid(liquids).compileError?.message.contains("blocks nest deeper than 64 levels") == true)
        #expect(Robust.liquid("{% liquid liquid liquid echo 'ok' %}") == .rendered("ok"))
    }

    @Test func snippetsRecursingThroughBlocksStopAtTheRenderDepth() {
        // 60 nested ifs per snippet level: the fifth level passes 256 nested renders.
        let body = String(repeating: "{% if true %}", count: 60) + "{% include 's' %}" + String(repeating: "{% endif %}", count: 60)
        let options = TemplateOptions(snippets: ["s": body])
        #expect(Robust.liquid("{% include 's' %}", options: options)
                == .renderError(.other("blocks and snippets nest deeper than 256 levels while rendering")))
        // A snippet including itself directly stops at the snippet depth.
        let direct = TemplateOptions(snippets: ["s": "{% include 's' %}"])
        #expect(Robust.liquid("{% include 's' %}", options: direct) == .renderError(.other("snippets nest deeper than 64 levels")))
    }

    @Test func twentyThousandNestedSubexpressionsStopAt64() {
        // `{{upper (upper (… x))}}`: "{{upper " is 8 bytes and each "(upper " 7, so the 65th `(`
        // is at offset 8 + 7 × 64 = 456, column 457.
        let n = 20_000
        let upper = "{{upper " + String(repeating: "(upper ", count: n) + "x" + String(repeating: ")", count: n) + "}}"
        expectCompileError(Robust.handlebars(upper), line: 1, column: 457, "expression nests deeper than 64 levels")
        // lookup chains: "{{lookup " is 9 bytes and each "(lookup " 8: 9 + 8 × 64 = 521, column 522.
        let lookup = "{{lookup " + String(repeating: "(lookup ", count: n) + "o" + String(repeating: " \"o\")", count: n) + " \"o\"}}"
        expectCompileError(Robust.handlebars(lookup), line: 1, column: 522, "expression nests deeper than 64 levels")
        // 64 levels compile and render.
        let ok = "{{upper " + String(repeating: "(lower ", count: 64) + "x" + String(repeating: ")", count: 64) + "}}"
        #expect(Robust.handlebars(ok, #"{"x":"aB"}"#) == .rendered("AB"))
    }

    @Test func longElseIfChainsStopAt256() {
        let n = 100_000
        let chain = "{{#if a}}a" + String(repeating: "{{else if b}}b", count: n) + "{{/if}}"
        // The 256th `{{else if` is the one refused: offset 10 + 14 × 255 = 3580, column 3581.
        expectCompileError(Robust.handlebars(chain), line: 1, column: 3581, "nest deeper than 256 levels")
        // 200 branches compile, and the last one renders.
        let ok = "{{#if a}}a" + (0..<200).map { "{{else if b\($0)}}\($0)" }.joined() + "{{/if}}"
        #expect(Robust.handlebars(ok, #"{"b199":true}"#) == .rendered("199"))
        let blocks = String(repeating: "{{#if a}}", count: n) + String(repeating: "{{/if}}", count: n)
        #expect(Robust.handlebars(blocks).compileError?.message.contains("blocks nested deeper than 64 levels") == true)
    }

    @Test func partialsIncludingThemselvesStop() {
        // A standalone, indented partial including itself compiles again at each indentation.
        let indented = TemplateOptions(snippets: ["p": "  {{> p}}\n"])
        #expect(Robust.handlebars("{{> p}}", options: indented).compileError?.message.contains("partials nest deeper than 64 levels") == true)
        // Not indented: one compiled program, and the recursion stops at render time.
        let plain = TemplateOptions(snippets: ["p": "x{{> p}}"])
        #expect(Robust.handlebars("{{> p}}", options: plain) == .renderError(.other("partials nested deeper than 64 levels")))
    }

    @Test func deeplyNestedRecordValuesPrint() {
        // The JSON reader accepts 128 levels; printing a value walks it recursively within that bound.
        var arrays = "7"
        for _ in 0..<120 { arrays = "[\(arrays)]" }
        var objects = "7"
        for _ in 0..<120 { objects = #"{"a":\#(objects)}"# }
        let data = #"{"x":\#(arrays),"o":\#(objects)}"#
        #expect(Robust.liquid("{{ x }}|{{ x | join: ',' }}|{{ x | size }}", data) == .rendered("7|7|1"))
        #expect(Robust.liquid("{{ o }}", data) == .rendered(objects))
        #expect(Robust.liquid("{% if x == x %}eq{% endif %}", data) == .rendered("eq"))
        #expect(Robust.handlebars("{{x}}|{{o}}|{{join x}}", data) == .rendered("7|[object Object]|7"))
    }

    @Test func everyBoundAtOnceStaysWithinTheStack() {
        // The deepest stack a template can reach: snippets or partials recursing until the
        // render depth (256) stops them, each level 60 blocks deep, each printing a record value
        // nested 120 deep through 60 nested filters or subexpressions.
        var arrays = "\"v\""
        for _ in 0..<120 { arrays = "[\(arrays)]" }
        let data = #"{"x":\#(arrays)}"#
        let filters = String(repeating: " | append: ''", count: 60)
        let liquidBody = String(repeating: "{% if true %}", count: 60) + "{{ x }}{{ x\(filters) }}{% include 's' %}" + String(repeating: "{% endif %}", count: 60)
        #expect(Robust.liquid("{% include 's' %}", data, options: TemplateOptions(snippets: ["s": liquidBody]))
                == .renderError(.other("blocks and snippets nest deeper than 256 levels while rendering")))
        let subexpressions = String(repeating: "(lower ", count: 60) + "x" + String(repeating: ")", count: 60)
        let handlebarsBody = String(repeating: "{{#if x}}", count: 60) + "{{x}}{{upper \(subexpressions)}}{{> p}}" + String(repeating: "{{/if}}", count: 60)
        #expect(Robust.handlebars("{{> p}}", data, options: TemplateOptions(snippets: ["p": handlebarsBody]))
                == .renderError(.other("blocks and partials nest deeper than 256 levels while rendering")))
    }
}
