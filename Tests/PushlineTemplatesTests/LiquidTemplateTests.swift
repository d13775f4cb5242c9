import PushlineCore
import Testing
@testable import PushlineTemplates

/// Focused tests: expected values are worked out by hand from the Liquid documentation.
@Suite struct LiquidTemplateTests {
    static let record = #"{"customer":{"first_name":"Ana","points":120,"ratio":1.5,"tags":["vip","eu"],"name":"Zo\u00eb \"Z\""},"event":{"event_title":"Lisbon trip","title":"T"}}"#

    func render(_ template: String, _ json: String = record, options: TemplateOptions = TemplateOptions(), mode: RenderOutput.Mode = .raw) throws -> String {
        let compiled = try TemplateCompiler.compile(template, dialect: .liquid, options: options)
        let document = try JSONDocument(parsing: json)
        var output = RenderOutput(mode: mode, limit: options.maxOutputBytes)
        try compiled.render(record: document.root, into: &output)
        return String(decoding: output.bytes, as: UTF8.self)
    }

    func compileError(_ template: String, options: TemplateOptions = TemplateOptions()) -> TemplateCompileError? {
        do {
            _ = try TemplateCompiler.compile(template, dialect: .liquid, options: options)
            return nil
        } catch {
            return error
        }
    }

    func renderError(_ template: String, options: TemplateOptions) -> TemplateRenderError? {
        do {
            _ = try render(template, options: options)
            return nil
        } catch let error as TemplateRenderError {
            return error
        } catch {
            return nil
        }
    }

    @Test func pathsAndSpecialProperties() throws {
        #expect(try render("Hi {{ customer.first_name }}, your {{ event.event_title }} is waiting") == "Hi Ana, your Lisbon trip is waiting")
        #expect(try render("{{ customer.tags[0] }}/{{ customer.tags[-1] }}/{{ event[\"title\"] }}") == "vip/eu/T")
        #expect(try render("{{ customer.tags.first }} {{ customer.tags.last }} {{ customer.tags.size }}") == "vip eu 2")
        #expect(try render("{{ customer.points }} {{ customer.ratio }}") == "120 1.5")
        // Escapes in the record are decoded before output.
        #expect(try render("{{ customer.name }}") == "Zoë \"Z\"")
        #expect(try render("[{{ customer.nope }}]") == "[]")
    }

    @Test func jsonStringModeEscapesAsItWrites() throws {
        #expect(try render("{{ customer.name }}\n", mode: .jsonStringContent) == #"Zoë \"Z\"\n"#)
    }

    @Test func literalTextOnlyWithoutSyntax() throws {
        let plain = try TemplateCompiler.compile("Welcome back!", dialect: .liquid)
        #expect(plain.literalText == "Welcome back!")
        let templated = try TemplateCompiler.compile("Hi {{ a }}", dialect: .liquid)
        #expect(templated.literalText == nil)
    }

    /// The encoder writes `literalText` as a constant instead of rendering, so whenever it is set
    /// it must be exactly what rendering gives: comments, `raw`, empty outputs and whitespace
    /// control leave no source text behind. (Fuzz finding: the source itself was sent.)
    @Test(arguments: [
        ("{% raw %}{{ x }}{% endraw %}", "{{ x }}"),
        ("Hi{% comment %}x{% endcomment %}", "Hi"),
        ("{{}}", ""),
        ("a{%# note %}b", "ab"),
        ("a{% # note %}b", "ab"),
        ("a {%- comment -%} x {%- endcomment -%} b", "ab"),
        ("{% raw %}{% if %}{% endraw %}!", "{% if %}!"),
        ("plain", "plain"),
    ])
    func literalTextIsWhatRenderingGives(_ template: String, _ expected: String) throws {
        let compiled = try TemplateCompiler.compile(template, dialect: .liquid)
        let rendered = try render(template, "{}")
        #expect(rendered == expected)
        if let literal = compiled.literalText { #expect(literal == expected) }
    }

    @Test func whitespaceControl() throws {
        #expect(try render("a  {{- customer.first_name -}}  b") == "aAnab")
        #expect(try render("a \n {%- if true -%} \n x \n {%- endif -%} \n b") == "axb")
        #expect(try render("a {% if true %} x {% endif %} b") == "a  x  b")
    }

    @Test func filtersAndConditions() throws {
        #expect(try render("{{ customer.missing | default: 'there' }}") == "there")
        #expect(try render("{{ false | default: 'x', allow_false: true }}") == "false")
        #expect(try render("{{ customer.first_name | upcase | append: '!' }}") == "ANA!")
        #expect(try render("{% if customer.points > 100 and customer.tags contains 'vip' %}gold{% else %}std{% endif %}") == "gold")
        // and/or group from the right: true or (false and false) → true.
        #expect(try render("{% if true or false and false %}y{% else %}n{% endif %}") == "y")
        #expect(try render("{{ 10 | divided_by: 4 }} {{ 10.0 | divided_by: 4 }} {{ -7 | modulo: 3 }}") == "2 2.5 2")
        #expect(try render("{{ 1152098955 | date: '%Y-%m-%d %H:%M' }}") == "2006-07-05 11:29")
    }

    @Test func truncationNeverSplitsUTF8() throws {
        // "ção" is 3 scalars but 5 bytes; truncate counts scalars.
        #expect(try render("{{ 'açãoxyz' | truncate: 5, '…' }}") == "ação…")
        #expect(try render("{{ '日本語テキスト' | truncate: 3, '' }}") == "日本語")
        #expect(try render("{{ 'héllo' | slice: 1, 2 }}") == "él")
    }

    @Test func loopsAndForloop() throws {
        #expect(try render("{% for t in customer.tags %}{{ forloop.index }}{{ t }}{% unless forloop.last %},{% endunless %}{% endfor %}") == "1vip,2eu")
        #expect(try render("{% for i in (1..5) reversed limit:3 %}{{ i }}{% endfor %}") == "321")
        #expect(try render("{% for i in (1..3) %}{% for j in (1..2) %}{{ forloop.parentloop.index }}{{ j }} {% endfor %}{% endfor %}") == "11 12 21 22 31 32 ")
        #expect(try render("{% for i in customer.nothing %}x{% else %}empty{% endfor %}") == "empty")
    }

    @Test func snippetsComeOnlyFromOptions() throws {
        let options = TemplateOptions(snippets: ["greet": "Hi {{ name }}"])
        #expect(try render("{% render 'greet', name: customer.first_name %}", options: options) == "Hi Ana")
        let error = try #require(compileError("{% include 'missing' %}", options: options))
        #expect(error.message.contains("unknown snippet 'missing'"))
    }

    @Test func strictModeErrors() throws {
        let strict = TemplateOptions(strict: true)
        #expect(renderError("Hi {{ customer.first_name }} {{ customer.middle_name }}", options: strict) == .missingVariable("customer.middle_name"))
        #expect(renderError("{{ 1 | divided_by: 0 }}", options: strict) == .filter("divided_by", "divided by 0"))
        // `default` declares the variable optional, even in strict mode.
        #expect(try render("Hi {{ customer.middle_name | default: 'there' }}", options: strict) == "Hi there")
        // Lax mode renders the missing variable as nothing.
        #expect(try render("[{{ customer.middle_name }}]") == "[]")
    }

    @Test func limits() throws {
        #expect(renderError("{% for i in (1..100) %}{% for j in (1..100) %}x{% endfor %}{% endfor %}", options: TemplateOptions(maxLoopIterations: 1000)) == .loopLimit(1000))
        #expect(renderError("{% for i in (1..100) %}0123456789{% endfor %}", options: TemplateOptions(maxOutputBytes: 64)) == .outputLimit(64))
        let deep = String(repeating: "{% if true %}", count: 5) + String(repeating: "{% endif %}", count: 5)
        #expect(compileError(deep, options: TemplateOptions(maxNestingDepth: 4)) != nil)
        #expect(compileError(deep, options: TemplateOptions(maxNestingDepth: 5)) == nil)
    }

    @Test func compileErrorsCarryLineAndColumn() throws {
        let unknownTag = try #require(compileError("line one\n  {% frobnicate %}"))
        #expect((unknownTag.line, unknownTag.column) == (2, 3))
        #expect(unknownTag.message.contains("unknown tag 'frobnicate'"))

        let unclosed = try #require(compileError("a\nb {% if x %}\nc"))
        #expect((unclosed.line, unclosed.column) == (2, 3))
        #expect(unclosed.message.contains("opened at line 2"))

        let filter = try #require(compileError("{{ x | upcase | nosuch }}"))
        #expect((filter.line, filter.column) == (1, 17))
        #expect(filter.message.contains("unknown filter 'nosuch'"))

        let syntax = try #require(compileError("ok\n{{ a..b }}"))
        #expect(syntax.line == 2)
    }

    /// `now` and `today` are the instant the options fix, not the clock (2016 is not today): a
    /// campaign's recipients all read one date, and two renders of a record are the same bytes
    /// (the fuzzer found two renders a second apart that differed).
    @Test func nowIsTheCampaignsInstant() throws {
        // 1457913600 = 2016-03-14T00:00:00Z (date -u -d 2016-03-14 +%s), a Monday.
        let fixed = TemplateOptions(now: 1_457_913_600 + 3_723)
        #expect(try render("{{ 'now' | date: '%Y-%m-%d %H:%M:%S %a' }}", options: fixed) == "2016-03-14 01:02:03 Mon")
        #expect(try render("{{ ' today ' | date: '%s' }}", options: fixed) == "1457917323")
    }
}
