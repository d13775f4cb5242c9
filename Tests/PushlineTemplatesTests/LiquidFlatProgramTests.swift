import PushlineCore
import Testing
@testable import PushlineTemplates

/// The flat program is an optimization only: for every template it takes and every record, it
/// must render exactly what the general renderer renders (or fail with the same error). The
/// expected side is the general renderer, run on the same template and record.
@Suite struct LiquidFlatProgramTests {
    static let templates = [
        "Hi {{ customer.first_name | default: 'there' }}",
        "{% if customer.points > 1000 %}You have {{ customer.points }} points. {% endif %}Your {{ event.event_title | downcase }} is waiting",
        "app://trips/{{ event.city | url_encode }}",
        "{{ customer.tier | upcase }}",
        "{% if customer.points <= 5 %}few{% else %}{% if customer.points != 7 %}many {{ customer.points | default: 'none' | upcase }}{% endif %}{% endif %}",
        "{% if customer.points == 120 %}=120{% endif %}{% if customer.points >= 120 %}>=120{% endif %}{% if customer.points < 0 %}neg{% endif %}",
        "{{ customer.missing | default: 'x y' | url_encode }}|{{ customer.first_name | downcase }}",
        "{{ customer.tags | default: 'no tags' }}",
        "{{ customer.ratio | upcase }}|{{ customer.ok | default: 'F' }}",
        // Literal and default text that JSON escaping changes (copied verbatim only when it does not).
        "Say \"{{ customer.first_name }}\"\t\\ \u{2028}{{ customer.missing | default: 'q\"\u{2029}' }}",
        "{{ customer.missing | default: 'é 東' | upcase }}\u{2028}",
    ]

    static let records = [
        #"{"customer":{"first_name":"Ana","points":1200,"tier":"gold","tags":["a"],"ok":false},"event":{"event_title":"Lisbon TRIP","city":"São Paulo & co/x"}}"#,
        #"{"customer":{"first_name":"","points":120,"tier":"Ünïcode","ratio":1.5,"ok":true},"event":{"event_title":"ÉTÉ à Paris","city":"a b+c~d"}}"#,
        #"{"customer":{"first_name":null,"points":"1200","tier":7},"event":{"event_title":7,"city":null}}"#,
        #"{"customer":{"first_name":false,"points":1e3,"tier":["x"]},"event":{"event_title":"Tab\tand \"quotes\" \u00e9","city":""}}"#,
        #"{"customer":{"points":-3,"tags":[]},"event":{}}"#,
        #"{"customer":{"points":99999999999999999999,"first_name":"\ud83d\ude00 hi"},"event":{"event_title":"\u0041BC"}}"#,
        #"{"customer":{"points":7,"first_name":{"a":1}},"event":{"event_title":["A","B"]}}"#,
        #"{"other":1}"#,
        #"{"customer":[1,2],"event":"x"}"#,
        #"{"customer":{"tier":"Zürich ÀÉÎ ΟΔΟΣ Москва","first_name":"ß straße İstanbul ǅ"},"event":{"event_title":"Ünïcödé ÿ Ÿ ǈ","city":"東京 Zürich"}}"#,
        #"{"customer":{"tier":"a\u0301 e\u0300 ĸ ŉ ſ","first_name":"\u00df"},"event":{"event_title":"\u0130 \u0131 \u03a3\u03c2","city":"\u00ff"}}"#,
        // U+2028 / U+2029 as they are: valid JSON with no escape, which the writer still escapes.
        #"{"customer":{"first_name":"line\#u{2028}sep","tier":"up\#u{2029}x"},"event":{"event_title":"A\#u{2028}B é","city":"c\#u{2028}d é"}}"#,
    ]

    @Test(arguments: [TemplateOptions(), TemplateOptions(strict: true), TemplateOptions(maxOutputBytes: 24)])
    func theFlatProgramRendersWhatTheGeneralRendererRenders(options: TemplateOptions) throws {
        for source in Self.templates {
            let template = try LiquidTemplate(compiling: source, options: options)
            #expect(template.flat != nil, "\(source) should take the flat program")
            for json in Self.records {
                let record = try JSONDocument(parsing: json).root
                for mode in [RenderOutput.Mode.raw, .jsonStringContent] {
                    let fast = outcome({ try template.render(record: record, into: &$0) }, mode: mode, limit: options.maxOutputBytes)
                    let general = outcome({ try template.render(root: .json(record), into: &$0) }, mode: mode, limit: options.maxOutputBytes)
                    #expect(fast == general, "\(source) on \(json) (\(mode))")
                }
            }
        }
    }

    /// Filtered text longer than the 256-byte runs the flat path writes in: every run boundary
    /// falls somewhere inside an escape, a `%XX` or a multi-byte character at one length or another.
    @Test func textLongerThanOneRunIsFilteredWhole() throws {
        let piece = "a b/é東🎫\\\"ÀΣ%+~"
        for source in ["{{ a | url_encode }}", "{{ a | downcase }}", "{{ a | upcase }}"] {
            let template = try LiquidTemplate(compiling: source, options: TemplateOptions(maxOutputBytes: 1 << 20))
            for repeats in [1, 15, 16, 17, 40, 41, 100] {
                for prefix in 0..<4 {
                    let text = String(repeating: "x", count: prefix) + String(repeating: piece, count: repeats)
                    let record = try JSONDocument(parsing: #"{"a":"\#(text)"}"#).root
                    for mode in [RenderOutput.Mode.raw, .jsonStringContent] {
                        let fast = outcome({ try template.render(record: record, into: &$0) }, mode: mode, limit: 1 << 20)
                        let general = outcome({ try template.render(root: .json(record), into: &$0) }, mode: mode, limit: 1 << 20)
                        #expect(fast == general, "\(source) × \(repeats) after \(prefix) (\(mode))")
                    }
                }
            }
        }
    }

    @Test func shapesItDoesNotTakeStayWithTheGeneralRenderer() throws {
        for source in [
            "{{ a | truncate: 3 }}", "{{ a | downcase | upcase }}", "{% if a > b %}x{% endif %}", "{% if a contains 'x' %}x{% endif %}",
            "{% if a > 1 %}x{% elsif a > 0 %}y{% endif %}", "{% for x in a %}{{ x }}{% endfor %}", "{{ a | default: b }}",
            "{{ a | default: 'x', allow_false: true }}", "{% if a > 1.5 %}x{% endif %}",
        ] {
            #expect(try LiquidTemplate(compiling: source, options: TemplateOptions()).flat == nil, "\(source)")
        }
    }

    @Test func aRecordLargerThanTheBoundIsRenderedByTheGeneralRenderer() throws {
        let options = TemplateOptions(maxOutputBytes: 64)
        let template = try LiquidTemplate(compiling: "{{ a | url_encode }}", options: options)
        let flat = try #require(template.flat)
        #expect(flat.maxRecordBytes == 64 / 3)
        let long = try JSONDocument(parsing: #"{"a":"\#(String(repeating: "é", count: 30))"}"#).root
        var output = RenderOutput(mode: .raw, limit: 64)
        #expect(try !flat.render(record: long, into: &output, renderer: template.renderer))
        #expect(output.bytes.isEmpty)
    }
}
