import PushlineCore
import Testing
@testable import PushlineTemplates

/// Focused behaviour of the Handlebars dialect; expected values are worked out by hand from the
/// Handlebars documentation (handlebarsjs.com/guide) and the helper list in HandlebarsHelpers.swift.
@Suite struct HandlebarsTemplateTests {
    typealias H = HandlebarsHarness
    static let record = #"""
    {"customer":{"first_name":"Ana","last_name":"Lima","points":120,"zero":0,"tags":["vip","eu"],"nick":"  ana  ",
     "empty":"","none":null,"bio":"Caf\u00e9 <b> & \"co\""},
     "event":{"event_title":"Lisbon trip","price":19.90},
     "items":[{"name":"A","qty":1},{"name":"B","qty":2},{"name":"C","qty":3}],
     "prefs":{"push":true,"email":false},"emoji":"👩‍👩‍👧‍👦 family"}
    """#

    func render(_ template: String, options: TemplateOptions = TemplateOptions()) -> String? {
        H.render(template, json: Self.record, options: options)
    }

    @Test func pathsAndLiterals() {
        #expect(render("Hi {{customer.first_name}}, your {{event.event_title}}") == "Hi Ana, your Lisbon trip")
        #expect(render("{{customer/last_name}} {{customer.[last_name]}} {{customer.tags.[1]}} {{customer.tags.0}}") == "Lima Lima eu vip")
        #expect(render("{{customer.points}}|{{event.price}}|{{prefs.push}}|{{customer.none}}|{{missing.deep}}") == "120|19.90|true||")
        #expect(render("{{customer.tags}}") == "vip,eu")
        #expect(render("{{customer}}") == "[object Object]")
        #expect(render("{{#with customer}}{{this.first_name}} {{./last_name}} {{../event.event_title}} {{@root.emoji}}{{/with}}")
            == "Ana Lima Lisbon trip 👩‍👩‍👧‍👦 family")
    }

    @Test func escapingFollowsTheOption() {
        // Push text is not HTML: no escaping unless asked.
        #expect(render("{{customer.bio}}") == "Café <b> & \"co\"")
        let html = TemplateOptions(htmlEscape: true)
        #expect(render("{{customer.bio}}", options: html) == "Café &lt;b&gt; &amp; &quot;co&quot;")
        #expect(render("{{{customer.bio}}}|{{& customer.bio}}", options: html) == "Café <b> & \"co\"|Café <b> & \"co\"")
        #expect(H.render("{{x}}", json: #"{"x":"'`="}"#, options: html) == "&#x27;&#x60;&#x3D;")
    }

    @Test func conditionals() {
        #expect(render("{{#if customer.points}}yes{{else}}no{{/if}}") == "yes")
        #expect(render("{{#if customer.zero}}yes{{else}}no{{/if}}") == "no")
        #expect(render("{{#if customer.zero includeZero=true}}yes{{else}}no{{/if}}") == "yes")
        #expect(render("{{#if customer.empty}}a{{else if customer.none}}b{{else if prefs.push}}c{{else}}d{{/if}}") == "c")
        #expect(render("{{#unless prefs.email}}no email{{/unless}}") == "no email")
        #expect(render("{{#if (gt customer.points 100)}}gold{{/if}}") == "gold")
        #expect(render("{{#eq customer.first_name \"Ana\"}}hi Ana{{else}}hi{{/eq}}") == "hi Ana")
        #expect(render("{{^customer.tags}}none{{/customer.tags}}{{^customer.none}}null{{/customer.none}}") == "null")
    }

    @Test func iteration() {
        #expect(render("{{#each items}}{{@index}}:{{name}}x{{qty}}{{#unless @last}}, {{/unless}}{{/each}}") == "0:Ax1, 1:Bx2, 2:Cx3")
        #expect(render("{{#each prefs}}{{@key}}={{this}}{{#if @first}};{{/if}}{{/each}}") == "push=true;email=false")
        #expect(render("{{#each items as |item i|}}{{i}}{{item.name}}{{/each}}") == "0A1B2C")
        #expect(render("{{#each customer.none}}x{{else}}empty{{/each}}") == "empty")
        #expect(render("{{#items}}{{name}}{{/items}}") == "ABC")
        #expect(render("{{#each items}}{{../customer.first_name}}{{/each}}") == "AnaAnaAna")
    }

    @Test func helpers() {
        #expect(render("{{upper customer.first_name}} {{lowercase \"ÉTÉ\"}} {{capitalize \"élan vital\"}}") == "ANA été Élan vital")
        #expect(render("{{upper \"straße\"}} {{lower \"MiXeD 1\"}}") == "STRASSE mixed 1")
        #expect(render("[{{trim customer.nick}}]") == "[ana]")
        #expect(render("{{default customer.empty \"friend\"}} {{default customer.first_name \"friend\"}} {{default nope customer.none \"x\"}}") == "friend Ana x")
        #expect(render("{{join customer.tags \" / \"}}|{{join customer.tags}}") == "vip / eu|vip, eu")
        #expect(render("{{len items}} {{len customer.tags}} {{len emoji}} {{len prefs}}") == "3 2 8 2")
        #expect(render("{{lookup customer \"last_name\"}} {{lookup customer.tags 1}}") == "Lima eu")
        #expect(render("{{and prefs.push customer.points}} {{or prefs.email customer.zero}} {{not customer.empty}}") == "true false true")
        #expect(render("{{eq customer.points 120}} {{ne customer.first_name \"Ana\"}} {{lte event.price 19.9}} {{lt \"abc\" \"abd\"}}") == "true false true true")
        #expect(render("{{log \"debug\" customer}}x") == "x")
        // Grapheme aware: the family emoji is one character of 7 scalars; never split.
        #expect(render("{{truncate emoji 3}}") == "👩‍👩‍👧‍👦 f")
        #expect(render("{{truncate event.event_title 8 \"…\"}}") == "Lisbon …")
        #expect(render("{{truncate event.event_title 50 \"…\"}}") == "Lisbon trip")
        #expect(render("{{upper (default customer.none \"guest\")}}") == "GUEST")
    }

    @Test func commentsAndWhitespaceControl() {
        #expect(render("a {{! note }}b{{!-- has }} inside --}} c") == "a b c")
        #expect(render("a   {{~customer.first_name~}}   b") == "aAnab")
        #expect(render("Hello\n  {{#if prefs.push}}\n  on\n  {{/if}}\nbye") == "Hello\n  on\nbye")
        #expect(render("{{#each customer.tags}}\n- {{this}}\n{{/each}}\n") == "- vip\n- eu\n")
        #expect(render(#"\{{customer.first_name}} \\{{customer.first_name}}"#) == #"{{customer.first_name}} \Ana"#)
        #expect(render("{{{{raw}}}}{{customer.first_name}} {{#if}}{{{{/raw}}}} {{customer.first_name}}") == "{{customer.first_name}} {{#if}} Ana")
    }

    @Test func partialsComeFromSnippets() {
        let options = TemplateOptions(snippets: ["greet": "Hi {{first_name}}!", "line": "- {{this}}\n"])
        #expect(render("{{> greet customer}} {{#with customer}}{{> greet}}{{/with}}", options: options) == "Hi Ana! Hi Ana!")
        #expect(render("List:\n  {{#each customer.tags}}\n  {{> line}}\n  {{/each}}\n", options: options) == "List:\n  - vip\n  - eu\n")
        guard case .compileError(let error) = H.run("a\n {{> nope}}", options: options) else {
            Issue.record("an unknown partial must not compile")
            return
        }
        #expect(error.line == 2 && error.column == 5)
    }

    @Test func literalTextOnlyWithoutSyntax() throws {
        #expect(try HandlebarsTemplate(compiling: "Welcome back!", options: TemplateOptions()).literalText == "Welcome back!")
        #expect(try HandlebarsTemplate(compiling: "Hi {{x}}", options: TemplateOptions()).literalText == nil)
        let viaCompiler = try TemplateCompiler.compile("Hi {{name}}", dialect: .handlebars)
        var output = RenderOutput(mode: .jsonStringContent)
        try viaCompiler.render(record: JSONDocument(parsing: #"{"name":"\"Zé\"\n"}"#).root, into: &output)
        // jsonStringContent mode: the rendered text arrives JSON-escaped.
        #expect(String(decoding: output.bytes, as: UTF8.self) == #"Hi \"Zé\"\n"#)
    }

    @Test func strictMode() {
        let strict = TemplateOptions(strict: true)
        #expect(H.run("Hi {{customer.first_name}}", json: Self.record, options: strict).text == "Hi Ana")
        #expect(H.run("Hi {{customer.nickname}}", json: Self.record, options: strict) == .renderError(.missingVariable("customer.nickname")))
        #expect(H.run("{{upper customer.nickname}}", json: Self.record, options: strict) == .renderError(.missingVariable("customer.nickname")))
        // Conditions and `default` may test for absence.
        #expect(H.run("{{#if customer.nickname}}x{{/if}}{{default customer.nickname \"y\"}}", json: Self.record, options: strict).text == "y")
        // JSON null is present, not missing.
        #expect(H.run("[{{customer.none}}]", json: Self.record, options: strict).text == "[]")
        #expect(H.run("{{truncate customer.first_name \"x\"}}", json: Self.record, options: strict)
            == .renderError(.filter("truncate", "the length must be a whole number ≥ 0")))
        #expect(H.run("{{truncate customer.first_name \"x\"}}", json: Self.record).text == "Ana")
    }

    @Test func limits() {
        let small = TemplateOptions(maxOutputBytes: 10)
        #expect(H.run("{{event.event_title}} and more", json: Self.record, options: small) == .renderError(.outputLimit(10)))
        let loops = TemplateOptions(maxLoopIterations: 5)
        #expect(H.run("{{#each items}}{{#each ../items}}x{{/each}}{{/each}}", json: Self.record, options: loops) == .renderError(.loopLimit(5)))
        #expect(H.run("{{#each items}}{{/each}}{{#each customer.tags}}{{/each}}", json: Self.record, options: loops).text == "")
        let shallow = TemplateOptions(maxNestingDepth: 2)
        guard case .compileError(let error) = H.run("{{#if a}}{{#if b}}\n  {{#if c}}{{/if}}{{/if}}{{/if}}", options: shallow) else {
            Issue.record("nesting beyond the limit must not compile")
            return
        }
        #expect(error.line == 2 && error.column == 3)
        // A partial that includes itself forever stops at the nesting depth.
        let recursive = TemplateOptions(maxNestingDepth: 4, snippets: ["loop": "x{{> loop}}"])
        #expect(H.run("{{> loop}}", options: recursive) == .renderError(.other("partials nested deeper than 4 levels")))
    }

    @Test func compileErrorsCarryPositions() {
        func failure(_ template: String) -> TemplateCompileError? {
            if case .compileError(let error) = H.run(template) { return error }
            return nil
        }
        let unclosed = failure("Hi\n{{#each items}}\n{{name}}")
        #expect(unclosed?.message == "unclosed {{#each}} opened at line 2, column 1")
        let mismatched = failure("{{#if a}}\n  x {{/each}}")
        #expect(mismatched?.line == 2 && mismatched?.column == 5)
        #expect(mismatched?.message == "mismatched {{/each}}: {{#if}} opened at line 1, column 1 is still open")
        let unknown = failure("ok\n  {{shout name}}")
        #expect(unknown?.line == 2 && unknown?.column == 5)
        #expect(unknown?.message.hasPrefix("unknown helper 'shout'") == true)
        #expect(failure("{{eq a}}")?.message == "helper 'eq' takes 2 arguments, not 1")
        #expect(failure("{{#each}}{{/each}}")?.message == "#each requires exactly one argument")
        #expect(failure("{{name")?.message == "unclosed tag: missing }}")
        #expect(failure("{{!-- open")?.message == "unclosed comment: missing --}}")
        #expect(failure("{{else}}")?.message == "{{else}} outside a block")
        // Handlebars reports this at 0-based column 13 (the path); 1-based that is 14.
        #expect(failure("{{#with a}}{{text/this/foo}}{{/with}}")?.column == 14)
        #expect(failure("{{*decorator}}") != nil)
        #expect(failure("{{=<% %>=}}") != nil)
    }
}
