import Foundation
import PushlineCore
import Testing
@testable import PushlineTemplates

/// The flat programs case text from its bytes (`SimpleCasing`); the general renderers call
/// `String.lowercased()` / `uppercased()`. They must agree on every character.
@Suite struct SimpleCasingTests {
    /// Each template renders `record` on its flat path exactly as its general renderer does.
    func expectFlatEqualsGeneral(_ liquid: [LiquidTemplate], _ handlebars: [HandlebarsTemplate], _ record: JSONValue, _ what: String) {
        for template in liquid {
            let fast = outcome { try template.render(record: record, into: &$0) }
            #expect(fast == outcome { try template.render(root: .json(record), into: &$0) }, "Liquid \(what)")
        }
        for template in handlebars {
            let fast = outcome { try template.render(record: record, into: &$0) }
            #expect(fast == outcome { try template.render(context: .json(record), into: &$0) }, "Handlebars \(what)")
        }
    }


    /// Every character of two UTF-8 bytes, alone (between ASCII letters) and all in one text,
    /// escaped as `\uXXXX` in the record or written as it is (which the flat programs copy
    /// without an escaping pass): the two-byte tables give what the general filters and helpers
    /// give, in Liquid and in Handlebars (escaped and not).
    @Test(arguments: [false, true])
    func everyTwoByteCharacterIsCasedAsTheGeneralRenderersCaseIt(asItIs: Bool) throws {
        let options = TemplateOptions(maxOutputBytes: 1 << 20)
        let liquid = try ["{{ a | downcase }}", "{{ a | upcase }}"].map { try LiquidTemplate(compiling: $0, options: options) }
        let handlebars = try ["{{upper a}}", "{{lower a}}", "{{{uppercase a}}}", "{{lowercase a}}"].map {
            try HandlebarsTemplate(compiling: $0, options: options)
        }
        var all = ""
        var texts: [String] = []
        for value in UInt32(0x80)...0x7FF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            all.unicodeScalars.append(scalar)
            texts.append("x" + String(scalar) + "Y")
        }
        texts.append(all)
        for text in texts {
            var escaped = ""
            for scalar in text.unicodeScalars {
                escaped += scalar.value < 0x80 || asItIs ? String(scalar) : String(format: "\\u%04x", scalar.value)
            }
            let record = try JSONDocument(parsing: #"{"a":"\#(escaped)"}"#).root
            let what = text.unicodeScalars.map { String($0.value, radix: 16) }
            expectFlatEqualsGeneral(liquid, handlebars, record, "\(what)")
        }
    }

    /// ASCII text of one run has its own path (`writeASCII`): every ASCII byte, and mixed-case
    /// letters up to, at and past the run's length (where the byte-by-byte walk takes over),
    /// come out as `String` cases them, through `write` and through both template languages.
    @Test func asciiTextIsCasedAsStringCasesIt() throws {
        let options = TemplateOptions(maxOutputBytes: 1 << 20)
        let liquid = try ["{{ a | downcase }}", "{{ a | upcase }}"].map { try LiquidTemplate(compiling: $0, options: options) }
        let handlebars = try ["{{lower a}}", "{{{upper a}}}"].map { try HandlebarsTemplate(compiling: $0, options: options) }
        let letters = Array("aZ@[`{mQ".utf8)
        var texts: [[UInt8]] = [Array(0..<128), [], Array("A".utf8)]
        for length in [255, 256, 257, 600] { texts.append((0..<length).map { letters[$0 % letters.count] }) }
        for bytes in texts {
            let text = String(decoding: bytes, as: UTF8.self)
            for upper in [false, true] {
                var cased: [UInt8] = []
                var emits = 0
                #expect(SimpleCasing.write(bytes, upper: upper) { cased.append(contentsOf: $0); emits += 1 })
                #expect(cased == Array((upper ? text.uppercased() : text.lowercased()).utf8), "\(bytes.count) bytes, upper: \(upper)")
                #expect(bytes.isEmpty ? emits == 0 : emits >= 1)
            }
            // The JSON text escapes the control characters; the record's content is `text`.
            var json = JSONWriter()
            json.beginObject()
            json.writeKey("a")
            json.writeString(text)
            json.endObject()
            let record = try JSONDocument(bytes: json.bytes).root
            expectFlatEqualsGeneral(liquid, handlebars, record, "\(bytes.count) ASCII bytes")
        }
    }

    /// Every character of three and four UTF-8 bytes, 1,024 to a text: where `SimpleCasing`
    /// takes the text, its bytes are `String.lowercased()` / `uppercased()`'s. Every eighth text
    /// also goes through Liquid's `downcase` / `upcase` and Handlebars' `lower` / `upper`, flat
    /// path against general renderer. (Async and yielding between texts: this is seconds of
    /// CPU, and the tests beside it on a two-core machine need the cooperative pool too.)
    @Test func everyLongerCharacterIsCasedAsTheGeneralRenderersCaseIt() async throws {
        let options = TemplateOptions(maxOutputBytes: 1 << 20)
        let liquid = try ["{{ a | downcase }}", "{{ a | upcase }}"].map { try LiquidTemplate(compiling: $0, options: options) }
        let handlebars = try ["{{lower a}}", "{{{upper a}}}"].map { try HandlebarsTemplate(compiling: $0, options: options) }
        var scalars: [Unicode.Scalar] = []
        var texts = 0
        var flat = 0
        func check() throws {
            // Raw UTF-8 in the JSON text: no character here needs an escape.
            let text = "x" + String(String.UnicodeScalarView(scalars)) + "Y"
            let bytes = Array(text.utf8)
            let from = "from U+\(String(scalars[0].value, radix: 16))"
            for upper in [false, true] where SimpleCasing.mappable(bytes, upper: upper) {
                var cased: [UInt8] = []
                #expect(SimpleCasing.write(bytes, upper: upper) { cased.append(contentsOf: $0) })
                #expect(cased == Array((upper ? text.uppercased() : text.lowercased()).utf8), "\(from), upper: \(upper)")
                if !upper { flat += 1 }
            }
            if texts % 8 == 0 {
                let record = try JSONDocument(parsing: #"{"a":"\#(text)"}"#).root
                expectFlatEqualsGeneral(liquid, handlebars, record, from)
            }
            texts += 1
            scalars.removeAll(keepingCapacity: true)
        }
        for value in UInt32(0x800)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            scalars.append(scalar)
            if scalars.count == 1024 {
                try check()
                await Task.yield()
            }
        }
        if !scalars.isEmpty { try check() }
        // 1,112,064 scalars from U+0800 less the 2,048 surrogates.
        #expect(texts == 1084)
        // Most blocks of the code space have no case at all: the fast path took them.
        #expect(flat > 900)
    }

    /// Text is checked while it is cased: `write` must take exactly the texts this test's own
    /// reading of `String` says can be cased from their bytes, case them as `String` does, and
    /// emit nothing when it refuses. Random texts of ASCII, characters that keep or change their
    /// case, cut characters, overlong forms and stray bytes, on both sides of the one-run length
    /// (252 bytes), where `write` checks the whole text first.
    @Test func textIsCheckedAsItIsCased() {
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("Z".utf8), Array(" 9".utf8), Array("é".utf8), Array("Ω".utf8), Array("ß".utf8),
            Array("東".utf8), Array("🎫".utf8), Array("Ⅻ".utf8), Array("ⓐ".utf8), Array("𐐀".utf8),
            [0xC3], [0xE6, 0x9D], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80], [0x80], [0xF8],
            Array(repeating: UInt8(ascii: "k"), count: 130),
        ]
        /// Valid UTF-8 whose every scalar is ASCII, two bytes cased to one two-byte scalar, or
        /// longer and left as it is by the casing.
        func castable(_ bytes: [UInt8], upper: Bool) -> Bool {
            guard let text = String(validating: bytes, as: UTF8.self) else { return false }
            return text.unicodeScalars.allSatisfy { scalar in
                let cased = upper ? String(scalar).uppercased() : String(scalar).lowercased()
                switch String(scalar).utf8.count {
                case 1: return true
                case 2: return cased.unicodeScalars.count == 1 && cased.utf8.count == 2
                default: return Array(cased.unicodeScalars) == [scalar]
                }
            }
        }
        var random = SplitMix64(seed: 0xCA5E_0001)
        var taken = 0, refused = 0, long = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<random.next(12) { bytes += pieces[random.next(pieces.count)] }
            if bytes.count > 252 { long += 1 }
            for upper in [false, true] {
                var cased: [UInt8] = []
                let wrote = SimpleCasing.write(bytes, upper: upper) { cased.append(contentsOf: $0) }
                #expect(wrote == castable(bytes, upper: upper), "\(bytes), upper: \(upper)")
                #expect(wrote == SimpleCasing.mappable(bytes, upper: upper), "\(bytes)")
                if wrote {
                    taken += 1
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(cased == Array((upper ? text.uppercased() : text.lowercased()).utf8), "\(text.debugDescription), upper: \(upper)")
                } else {
                    refused += 1
                    #expect(cased.isEmpty, "\(bytes): refused after emitting \(cased.count) bytes")
                }
            }
        }
        // Both outcomes, and both sides of the one-run length, were exercised.
        #expect(taken > 1_000 && refused > 1_000 && long > 100)
    }

    /// The demo audience's texts are cased on the flat path whole; a character whose case
    /// changes, a cut character and a UTF-8-encoded surrogate are not.
    @Test func whatTheFlatPathCases() {
        for text in ["Concert tickets 🎫", "東京 서울 القاهرة", "Tōkyō ÀÉ", "𝄞 music"] {
            #expect(SimpleCasing.mappable(Array(text.utf8), upper: false), "\(text)")
            #expect(SimpleCasing.mappable(Array(text.utf8), upper: true), "\(text)")
        }
        // Ⅻ (U+216B) and ⓐ (U+24D0) change case in three bytes; 𐐀 (U+10400) in four.
        for bytes in [Array("Ⅻ".utf8), Array("𐐀".utf8), [0xE6, 0x9D], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80], [0xF8]] {
            #expect(!SimpleCasing.mappable(bytes, upper: false), "\(bytes)")
        }
        #expect(!SimpleCasing.mappable(Array("ⓐ".utf8), upper: true))
        #expect(SimpleCasing.mappable(Array("ⓐ".utf8), upper: false), "already lowercase: lowercasing copies it")
    }
}
