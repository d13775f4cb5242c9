/// An RFC 8259 validator written apart from PushlineCore's reader, so that the fuzz targets
/// check Pushline's output (and its reader's verdicts) against a second implementation rather
/// than against itself. A loop with an explicit stack: no recursion, whatever the nesting.
public enum StrictJSON {
    /// How `\uXXXX` escapes of UTF-16 surrogates are judged.
    public enum Surrogates: Sendable {
        /// Any four hex digits: what the grammar allows and Pushline's reader accepts on input.
        case anyEscape
        /// A high surrogate escape must be followed by a low one and a low one must follow a
        /// high one: what strict parsers require, and what Pushline promises for its output.
        case pairedOnly
    }

    /// Why a text is not valid JSON, with the byte offset where that became clear.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "byte \(offset): \(message)" }
    }

    /// Validates `text` as exactly one JSON value (whitespace around it allowed). Containers
    /// nested deeper than `maxDepth` are a failure, as in Pushline's reader.
    public static func validate(
        _ text: [UInt8], surrogates: Surrogates = .pairedOnly, maxDepth: Int = .max
    ) -> Failure? {
        var parser = Parser(text: text, surrogates: surrogates, maxDepth: maxDepth)
        do {
            try parser.run()
            return nil
        } catch {
            return error
        }
    }

    public static func isValid(_ text: [UInt8], surrogates: Surrogates = .pairedOnly, maxDepth: Int = .max) -> Bool {
        validate(text, surrogates: surrogates, maxDepth: maxDepth) == nil
    }

    private struct Parser {
        let text: [UInt8]
        let surrogates: Surrogates
        let maxDepth: Int
        var i = 0
        /// Open containers: true for an object.
        var stack: [Bool] = []

        init(text: [UInt8], surrogates: Surrogates, maxDepth: Int) {
            self.text = text
            self.surrogates = surrogates
            self.maxDepth = maxDepth
        }

        func fail(_ message: String) -> Failure { Failure(offset: i, message: message) }

        mutating func skipWhitespace() {
            while i < text.count, text[i] == 0x20 || text[i] == 0x0A || text[i] == 0x0D || text[i] == 0x09 { i += 1 }
        }

        mutating func run() throws(Failure) {
            skipWhitespace()
            valueLoop: while true {
                // On the first byte of a value.
                guard i < text.count else { throw fail("end of text, expected a value") }
                switch text[i] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = text[i] == UInt8(ascii: "{")
                    guard stack.count < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
                    stack.append(object)
                    i += 1
                    skipWhitespace()
                    if i < text.count, text[i] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        // Empty container: closed below.
                    } else {
                        if object { try key() }
                        continue valueLoop
                    }
                case UInt8(ascii: "\""):
                    try string()
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    try number()
                case UInt8(ascii: "t"): try literal("true")
                case UInt8(ascii: "f"): try literal("false")
                case UInt8(ascii: "n"): try literal("null")
                default: throw fail("not a value")
                }
                // After a value (or on the closer of an empty container).
                while true {
                    skipWhitespace()
                    guard let object = stack.last else {
                        guard i == text.count else { throw fail("text after the value") }
                        return
                    }
                    guard i < text.count else { throw fail("end of text inside a container") }
                    if text[i] == UInt8(ascii: ",") {
                        i += 1
                        skipWhitespace()
                        if object { try key() }
                        continue valueLoop
                    }
                    guard text[i] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { throw fail("expected , or a closer") }
                    stack.removeLast()
                    i += 1
                }
            }
        }

        mutating func key() throws(Failure) {
            guard i < text.count, text[i] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            try string()
            skipWhitespace()
            guard i < text.count, text[i] == UInt8(ascii: ":") else { throw fail("expected :") }
            i += 1
            skipWhitespace()
        }

        mutating func literal(_ word: StaticString) throws(Failure) {
            let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard i + bytes.count <= text.count, text[i..<(i + bytes.count)].elementsEqual(bytes) else { throw fail("bad literal") }
            i += bytes.count
        }

        mutating func number() throws(Failure) {
            func digit(_ k: Int) -> Bool { k < text.count && text[k] >= 0x30 && text[k] <= 0x39 }
            if text[i] == UInt8(ascii: "-") { i += 1 }
            if i < text.count, text[i] == UInt8(ascii: "0") {
                i += 1
            } else {
                guard digit(i) else { throw fail("expected a digit") }
                while digit(i) { i += 1 }
            }
            if i < text.count, text[i] == UInt8(ascii: ".") {
                i += 1
                guard digit(i) else { throw fail("expected a fraction digit") }
                while digit(i) { i += 1 }
            }
            if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
                i += 1
                if i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") { i += 1 }
                guard digit(i) else { throw fail("expected an exponent digit") }
                while digit(i) { i += 1 }
            }
        }

        func hex4(_ k: Int) -> UInt16? {
            guard k + 4 <= text.count else { return nil }
            var value: UInt16 = 0
            for b in text[k..<(k + 4)] {
                let d: UInt8
                switch b {
                case 0x30...0x39: d = b - 0x30
                case 0x41...0x46: d = b - 0x41 + 10
                case 0x61...0x66: d = b - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt16(d)
            }
            return value
        }

        mutating func string() throws(Failure) {
            i += 1   // opening quote
            while true {
                guard i < text.count else { throw fail("unterminated string") }
                let b = text[i]
                switch b {
                case UInt8(ascii: "\""):
                    i += 1
                    return
                case UInt8(ascii: "\\"):
                    guard i + 1 < text.count else { throw fail("unterminated escape") }
                    switch text[i + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 2
                    case UInt8(ascii: "u"):
                        guard let unit = hex4(i + 2) else { throw fail("bad \\u escape") }
                        i += 6
                        guard surrogates == .pairedOnly else { break }
                        if unit >= 0xDC00 && unit <= 0xDFFF { throw fail("lone low surrogate escape") }
                        if unit >= 0xD800 && unit <= 0xDBFF {
                            guard i + 1 < text.count, text[i] == UInt8(ascii: "\\"), text[i + 1] == UInt8(ascii: "u"),
                                  let low = hex4(i + 2), low >= 0xDC00 && low <= 0xDFFF
                            else { throw fail("lone high surrogate escape") }
                            i += 6
                        }
                    default:
                        throw fail("bad escape")
                    }
                case 0x00..<0x20:
                    throw fail("control character in a string")
                case 0x20..<0x80:
                    i += 1
                default:
                    guard let length = utf8Length(i) else { throw fail("invalid UTF-8") }
                    i += length
                }
            }
        }

        /// Length of the well-formed UTF-8 sequence at `k` (Unicode table 3-7), nil if ill-formed.
        func utf8Length(_ k: Int) -> Int? {
            let b0 = text[k]
            func cont(_ j: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool { j < text.count && range.contains(text[j]) }
            switch b0 {
            case 0xC2...0xDF: return cont(k + 1) ? 2 : nil
            case 0xE0: return cont(k + 1, 0xA0...0xBF) && cont(k + 2) ? 3 : nil
            case 0xE1...0xEC, 0xEE...0xEF: return cont(k + 1) && cont(k + 2) ? 3 : nil
            case 0xED: return cont(k + 1, 0x80...0x9F) && cont(k + 2) ? 3 : nil
            case 0xF0: return cont(k + 1, 0x90...0xBF) && cont(k + 2) && cont(k + 3) ? 4 : nil
            case 0xF1...0xF3: return cont(k + 1) && cont(k + 2) && cont(k + 3) ? 4 : nil
            case 0xF4: return cont(k + 1, 0x80...0x8F) && cont(k + 2) && cont(k + 3) ? 4 : nil
            default: return nil
            }
        }
    }
}
