/// A token of tag or output markup: `customer.tags[0] | truncate: 20, '…'`.
struct LiquidMarkupToken: Sendable {
    enum Kind: Sendable, Equatable {
        case identifier
        case string
        case integer(Int)
        case float(Double)
        case dot, dotDot, comma, colon, pipe, equals
        case openBracket, closeBracket, openParen, closeParen
        case comparison(LiquidOperator)
        case end
    }
    var kind: Kind
    /// Identifier text, or a string's content without quotes.
    var range: Range<Int>
    var offset: Int
}

/// Splits markup into tokens. Liquid strings have no escapes: the content is the bytes between quotes.
struct LiquidMarkupLexer {
    let source: [UInt8]

    func tokenize(_ range: Range<Int>) throws(TemplateCompileError) -> [LiquidMarkupToken] {
        var tokens: [LiquidMarkupToken] = []
        var i = range.lowerBound
        let end = range.upperBound
        func peek(_ k: Int) -> UInt8 { i + k < end ? source[i + k] : 0 }
        while i < end {
            let b = source[i]
            let start = i
            if LiquidText.isWhitespace(b) { i += 1; continue }
            func add(_ kind: LiquidMarkupToken.Kind, _ length: Int) {
                tokens.append(LiquidMarkupToken(kind: kind, range: start..<(start + length), offset: start))
                i += length
            }
            switch b {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                var j = i + 1
                while j < end && source[j] != b { j += 1 }
                guard j < end else { throw LiquidSource(source).error(at: i, "unterminated string literal") }
                tokens.append(LiquidMarkupToken(kind: .string, range: (i + 1)..<j, offset: i))
                i = j + 1
            case UInt8(ascii: "."):
                if peek(1) == UInt8(ascii: ".") { add(.dotDot, 2) } else { add(.dot, 1) }
            case UInt8(ascii: ","): add(.comma, 1)
            case UInt8(ascii: ":"): add(.colon, 1)
            case UInt8(ascii: "|"): add(.pipe, 1)
            case UInt8(ascii: "["): add(.openBracket, 1)
            case UInt8(ascii: "]"): add(.closeBracket, 1)
            case UInt8(ascii: "("): add(.openParen, 1)
            case UInt8(ascii: ")"): add(.closeParen, 1)
            case UInt8(ascii: "="):
                if peek(1) == UInt8(ascii: "=") { add(.comparison(.equal), 2) } else { add(.equals, 1) }
            case UInt8(ascii: "!"):
                guard peek(1) == UInt8(ascii: "=") else { throw LiquidSource(source).error(at: i, "unexpected character '!'") }
                add(.comparison(.notEqual), 2)
            case UInt8(ascii: "<"):
                if peek(1) == UInt8(ascii: ">") { add(.comparison(.notEqual), 2) }
                else if peek(1) == UInt8(ascii: "=") { add(.comparison(.lessOrEqual), 2) }
                else { add(.comparison(.less), 1) }
            case UInt8(ascii: ">"):
                if peek(1) == UInt8(ascii: "=") { add(.comparison(.greaterOrEqual), 2) } else { add(.comparison(.greater), 1) }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var j = i
                if b == UInt8(ascii: "-") {
                    j += 1
                    guard j < end, isDigit(source[j]) else { throw LiquidSource(source).error(at: i, "unexpected character '-'") }
                }
                while j < end && isDigit(source[j]) { j += 1 }
                var isFloat = false
                if j + 1 < end, source[j] == UInt8(ascii: "."), isDigit(source[j + 1]) {
                    isFloat = true
                    j += 1
                    while j < end && isDigit(source[j]) { j += 1 }
                }
                // `123abc` and friends are words, not numbers (identifiers may contain digits).
                if j < end, LiquidLexer.isWordByte(source[j]) || source[j] == UInt8(ascii: "?"), b != UInt8(ascii: "-"), !isFloat {
                    i = wordEnd(from: i, end: end)
                    tokens.append(LiquidMarkupToken(kind: .identifier, range: start..<i, offset: start))
                    continue
                }
                let text = String(decoding: source[i..<j], as: UTF8.self)
                if isFloat {
                    tokens.append(LiquidMarkupToken(kind: .float(Double(text) ?? 0), range: i..<j, offset: i))
                } else if let v = Int(text) {
                    tokens.append(LiquidMarkupToken(kind: .integer(v), range: i..<j, offset: i))
                } else {
                    tokens.append(LiquidMarkupToken(kind: .float(Double(text) ?? 0), range: i..<j, offset: i))
                }
                i = j
            default:
                guard isWordStart(b) else {
                    throw LiquidSource(source).error(at: i, "unexpected character '\(String(decoding: source[i..<min(i + 1, end)], as: UTF8.self))'")
                }
                i = wordEnd(from: i, end: end)
                let word = source[start..<i]
                if word.elementsEqual("contains".utf8) {
                    tokens.append(LiquidMarkupToken(kind: .comparison(.contains), range: start..<i, offset: start))
                } else {
                    tokens.append(LiquidMarkupToken(kind: .identifier, range: start..<i, offset: start))
                }
            }
        }
        tokens.append(LiquidMarkupToken(kind: .end, range: end..<end, offset: end))
        return tokens
    }

    private func wordEnd(from start: Int, end: Int) -> Int {
        var j = start
        while j < end, LiquidLexer.isWordByte(source[j]) { j += 1 }
        if j < end, source[j] == UInt8(ascii: "?") { j += 1 }
        return j
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    private func isWordStart(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == UInt8(ascii: "_")
    }
}
