import Foundation
import PushlineCore
import Testing
@testable import PushlineTemplates

/// The flat program is an optimization only: for every template it takes and every record, it
/// must render exactly what the general renderer renders (or fail with the same error). The
/// expected side is the general renderer (`render(context:)`), run on the same template and record.
@Suite struct HandlebarsFlatProgramTests {
    static let templates = [
        "Hi {{customer.first_name}}, your {{event.event_title}}",
        "{{#if customer.points}}You have {{customer.points}} points. {{/if}}{{upper customer.tier}} members get {{event.event_title}} first.",
        "{{{customer.first_name}}}|{{customer.first_name}}|{{{event.event_title}}}",
        "{{uppercase customer.first_name}}|{{lower customer.tier}}|{{lowercase event.event_title}}|{{{upper event.city}}}",
        "{{#if customer.points}}yes{{else}}no{{/if}}|{{#unless customer.points}}none{{else}}some{{/unless}}",
        "{{#if customer.points includeZero=true}}z{{else}}nz{{/if}}{{#unless customer.points includeZero=true}}u{{/unless}}",
        "{{#if customer.ok}}{{#if customer.tags}}[{{customer.tags}}]{{else if customer.first_name}}{{upper customer.first_name}}{{else}}-{{/if}}{{else}}{{#unless event}}no event{{/unless}}{{lower event.city}}{{/if}}",
        "{{customer.missing}}|{{upper customer.missing}}|{{#if customer.missing}}x{{/if}}",
        "{{customer}}|{{customer.tags}}|{{upper customer.tags}}|{{lower customer}}|{{customer.ok}}|{{upper customer.ok}}",
        "{{customer.points}} {{upper customer.points}} {{customer.ratio}} {{lower customer.ratio}}",
        "{{this.customer.first_name}}|{{./event.city}}",
        "plain text only & <b>",
        // Literal text that JSON escaping changes (copied verbatim only when it does not).
        "Say \"{{customer.first_name}}\"\t\\ \u{2028}{{upper event.city}}\u{2029}",
    ]

    static let long = String(repeating: "Long text & <more> ", count: 40)

    static let records = [
        #"{"customer":{"first_name":"Ana","points":120,"tier":"gold","tags":["a","b"],"ok":false},"event":{"event_title":"Lisbon trip","city":"São Paulo & co/x"}}"#,
        #"{"customer":{"first_name":"","points":0,"tier":"Ünïcode","ratio":1.5,"ok":true},"event":{"event_title":"ÉTÉ à Paris","city":"a b+c~d"}}"#,
        #"{"customer":{"first_name":null,"points":-0,"tier":7,"ok":null},"event":{"event_title":7,"city":null}}"#,
        #"{"customer":{"first_name":false,"points":1e400,"tier":["x"],"ok":true,"tags":[]},"event":{"event_title":"Tab\tand \"quotes\" \u00e9","city":""}}"#,
        #"{"customer":{"points":-3,"tags":[],"ratio":0.0},"event":{}}"#,
        #"{"customer":{"points":99999999999999999999,"first_name":"\ud83d\ude00 hi","ratio":-0.0},"event":{"event_title":"\u0041BC"}}"#,
        #"{"customer":{"points":"0","first_name":{"a":1},"ok":[0],"tags":[{},{}]},"event":{"event_title":["A","B"]}}"#,
        #"{"other":1}"#,
        #"{"customer":[1,2],"event":"x"}"#,
        #"{"customer":{"tier":"Zürich ÀÉÎ ΟΔΟΣ Москва","first_name":"ß straße İstanbul ǅ","ok":1},"event":{"event_title":"Ünïcödé ÿ Ÿ ǈ","city":"東京 Zürich"}}"#,
        #"{"customer":{"tier":"a\u0301 e\u0300 ĸ ŉ ſ","first_name":"\u00df","ok":"x"},"event":{"event_title":"\u0130 \u0131 \u03a3\u03c2","city":"\u00ff"}}"#,
        #"{"customer":{"first_name":"<script>alert('x' + `y`)</script> a=b & \"c\"","tier":"lone \ud800 surrogate \udc00","points":1e5,"ratio":12345678901234567890.5},"event":{"event_title":"emoji 👍🏽 and \u2028 line","city":"İ"}}"#,
        #"{"customer":{"first_name":"\#(long)","tier":"\#(long)","points":true,"ok":{"x":[]}},"event":{"event_title":"\#(long)","city":"\#(long)"}}"#,
        #"{"customer":{"first_name":"x","points":[],"tags":[[]],"ok":[]},"event":null}"#,
    ]

    static let optionSets: [TemplateOptions] = [
        TemplateOptions(),
        TemplateOptions(strict: true),
        TemplateOptions(htmlEscape: true),
        TemplateOptions(strict: true, htmlEscape: true),
        TemplateOptions(maxOutputBytes: 24),
        TemplateOptions(maxOutputBytes: 9, htmlEscape: true),
        TemplateOptions(strict: true, maxOutputBytes: 7),
        TemplateOptions(maxRenderSteps: 60),
        TemplateOptions(maxOutputBytes: 24, maxRenderSteps: 3),
    ]

    @Test(arguments: optionSets)
    func theFlatProgramRendersWhatTheGeneralRendererRenders(options: TemplateOptions) throws {
        for source in Self.templates {
            let template = try HandlebarsTemplate(compiling: source, options: options)
            // (A budget smaller than the template's blocks leaves it to the general renderer.)
            #expect(template.flat != nil || options.maxRenderSteps < 10, "\(source) should take the flat program")
            for json in Self.records {
                let record = try JSONDocument(parsing: json).root
                // The output's own limit both as the template's and tighter, so writes fail midway.
                for limit in [options.maxOutputBytes, 5] {
                    for mode in [RenderOutput.Mode.raw, .jsonStringContent] {
                        let fast = outcome({ try template.render(record: record, into: &$0) }, mode: mode, limit: limit)
                        let general = outcome({ try template.render(context: .json(record), into: &$0) }, mode: mode, limit: limit)
                        #expect(fast == general, "\(source) on \(json) (\(mode), limit \(limit))")
                    }
                }
            }
        }
    }

    /// Records the benchmarks and typical campaigns render are within the bound: the fast path
    /// does run (not the whole-record fallback).
    @Test func typicalRecordsTakeTheFastPath() throws {
        let template = try HandlebarsTemplate(compiling: Self.templates[1], options: TemplateOptions())
        let flat = try #require(template.flat)
        let record = try JSONDocument(parsing: Self.records[0]).root
        var output = RenderOutput(mode: .jsonStringContent, limit: 8192)
        #expect(try flat.render(record: record, into: &output, template: template))
        #expect(String(decoding: output.bytes, as: UTF8.self) == "You have 120 points. GOLD members get Lisbon trip first.")
    }

    @Test func shapesItDoesNotTakeStayWithTheGeneralRenderer() throws {
        for source in [
            "{{#each a}}{{this}}{{/each}}", "{{#with a}}{{b}}{{/with}}", "{{#a}}x{{/a}}", "{{^a}}x{{/a}}",
            "{{capitalize a}}", "{{upper (lower a)}}", "{{upper a key=1}}", "{{upper \"x\"}}", "{{#if (eq a 1)}}x{{/if}}",
            "{{../a}}", "{{@root.a}}", "{{default a \"x\"}}", "{{> p}}",
            "{{#if a}}{{#each b}}x{{/each}}{{/if}}",
        ] {
            let options = TemplateOptions(snippets: ["p": "x"])
            #expect(try HandlebarsTemplate(compiling: source, options: options).flat == nil, "\(source)")
        }
        // Mustache's name resolution up the context stack is the general renderer's.
        #expect(try HandlebarsTemplate(compiling: "{{a}}", options: TemplateOptions(), compat: true).flat == nil)
        // A depth limit the blocks reach: the general renderer's error.
        #expect((try? HandlebarsTemplate(compiling: "{{a}}", options: TemplateOptions(maxNestingDepth: 0)))?.flat == nil)
    }

    @Test func aRecordLargerThanTheBoundIsRenderedByTheGeneralRenderer() throws {
        let options = TemplateOptions(maxRenderSteps: 1000)
        let template = try HandlebarsTemplate(compiling: "{{#if a}}{{upper a}}{{/if}}", options: options)
        let flat = try #require(template.flat)
        #expect(flat.maxRecordBytes == (999 - TemplateCost.call - 16) / 17)
        let long = try JSONDocument(parsing: #"{"a":"\#(String(repeating: "x", count: 60))"}"#).root
        var output = RenderOutput(mode: .raw, limit: 8192)
        #expect(try !flat.render(record: long, into: &output, template: template))
        #expect(output.bytes.isEmpty)
        // Without helpers no record size matters: lookups outside loops cost no steps.
        #expect(try HandlebarsTemplate(compiling: "{{#if a}}{{a}}{{/if}}", options: options).flat?.maxRecordBytes == .max)
    }
}
