/// One piece of template source: literal text, an `{{ output }}`, or a `{% tag %}`.
struct LiquidToken: Sendable {
    enum Kind: Sendable { case text, output, tag }
    var kind: Kind
    /// Text: the literal bytes. Output: the expression. Tag: the markup after the tag name.
    var content: Range<Int>
    /// Tag name (empty for text and output).
    var name: Range<Int>
    /// Byte offset where the token starts in the source, for error positions.
    var offset: Int
    var trimLeft = false
    var trimRight = false
    /// A line of a `{% liquid %}` tag: a `comment` there still has its body in the following lines.
    var fromLiquidTag = false
}

/// Splits template source into tokens and applies whitespace control (`{{-`, `-%}`...).
///
/// `raw` and `comment` bodies are consumed here, since their content is not Liquid.
struct LiquidLexer {
    let source: [UInt8]

    func tokenize() throws(TemplateCompileError) -> [LiquidToken] {
        var tokens: [LiquidToken] = []
        var i = 0
        var textStart = 0
        let n = source.count
        while i + 1 < n {
            guard source[i] == UInt8(ascii: "{"), source[i + 1] == UInt8(ascii: "{") || source[i + 1] == UInt8(ascii: "%") else {
                i += 1
                continue
            }
            if textStart < i { tokens.append(LiquidToken(kind: .text, content: textStart..<i, name: i..<i, offset: textStart)) }
            let isTag = source[i + 1] == UInt8(ascii: "%")
            let close: UInt8 = isTag ? UInt8(ascii: "%") : UInt8(ascii: "}")
            guard let end = find(close, UInt8(ascii: "}"), from: i + 2) else {
                throw LiquidSource(source).error(at: i, isTag ? "tag '{%' was not properly terminated with '%}'" : "output '{{' was not properly terminated with '}}'")
            }
            var token = markupToken(start: i, end: end, isTag: isTag)
            i = end + 2
            if isTag {
                let name = source[token.name]
                if name.elementsEqual("raw".utf8) {
                    guard let (bodyEnd, closeEnd, trim) = findClosing(endName: "endraw", nestedName: nil, from: i) else {
                        throw LiquidSource(source).error(at: token.offset, "'raw' tag was never closed")
                    }
                    tokens.append(token)
                    tokens.append(LiquidToken(kind: .text, content: i..<bodyEnd.start, name: i..<i, offset: i))
                    var endToken = LiquidToken(kind: .tag, content: bodyEnd.name.upperBound..<bodyEnd.name.upperBound, name: bodyEnd.name, offset: bodyEnd.start)
                    endToken.trimLeft = trim.left
                    endToken.trimRight = trim.right
                    tokens.append(endToken)
                    i = closeEnd
                    textStart = i
                    continue
                }
                if name.elementsEqual("comment".utf8) {
                    guard let (_, closeEnd, trim) = findClosing(endName: "endcomment", nestedName: "comment", from: i) else {
                        throw LiquidSource(source).error(at: token.offset, "'comment' tag was never closed")
                    }
                    // The comment becomes one tag without a body that keeps both ends' whitespace control.
                    token.content = i..<i
                    token.trimRight = trim.right
                    tokens.append(token)
                    i = closeEnd
                    textStart = i
                    continue
                }
            }
            tokens.append(token)
            textStart = i
        }
        if textStart < n { tokens.append(LiquidToken(kind: .text, content: textStart..<n, name: n..<n, offset: textStart)) }
        applyWhitespaceControl(&tokens)
        return tokens
    }

    private func find(_ a: UInt8, _ b: UInt8, from start: Int) -> Int? {
        var i = start
        while i + 1 < source.count {
            if source[i] == a && source[i + 1] == b { return i }
            i += 1
        }
        return nil
    }

    private func markupToken(start: Int, end: Int, isTag: Bool) -> LiquidToken {
        var lo = start + 2
        var hi = end
        var token = LiquidToken(kind: isTag ? .tag : .output, content: lo..<hi, name: lo..<lo, offset: start)
        if lo < hi, source[lo] == UInt8(ascii: "-") { token.trimLeft = true; lo += 1 }
        if hi > lo, source[hi - 1] == UInt8(ascii: "-") { token.trimRight = true; hi -= 1 }
        while lo < hi, LiquidText.isWhitespace(source[lo]) { lo += 1 }
        while hi > lo, LiquidText.isWhitespace(source[hi - 1]) { hi -= 1 }
        if isTag {
            var nameEnd = lo
            if nameEnd < hi, source[nameEnd] == UInt8(ascii: "#") {
                nameEnd += 1
            } else {
                while nameEnd < hi, LiquidLexer.isWordByte(source[nameEnd]) { nameEnd += 1 }
            }
            token.name = lo..<nameEnd
            var markup = nameEnd
            while markup < hi, LiquidText.isWhitespace(source[markup]) { markup += 1 }
            token.content = markup..<max(markup, hi)
        } else {
            token.content = lo..<hi
        }
        return token
    }

    /// Finds `{% endName %}` (counting nested `{% nestedName %}`); returns the closing tag's name
    /// range, the offset after it, and its whitespace control.
    private func findClosing(endName: String, nestedName: String?, from start: Int) -> (ClosingTag, Int, (left: Bool, right: Bool))? {
        var depth = 0
        var i = start
        while let open = find(UInt8(ascii: "{"), UInt8(ascii: "%"), from: i) {
            // Only a well-formed `{% name %}` counts; any other `{%` inside the body is text.
            var j = open + 2
            let trimLeft = j < source.count && source[j] == UInt8(ascii: "-")
            if trimLeft { j += 1 }
            while j < source.count, LiquidText.isWhitespace(source[j]) { j += 1 }
            let nameStart = j
            while j < source.count, LiquidLexer.isWordByte(source[j]) { j += 1 }
            let name = source[nameStart..<j]
            let isEnd = name.elementsEqual(endName.utf8)
            let isNested = nestedName.map { name.elementsEqual($0.utf8) } ?? false
            let isRaw = nestedName != nil && name.elementsEqual("raw".utf8)
            guard isEnd || isNested || isRaw, let close = find(UInt8(ascii: "%"), UInt8(ascii: "}"), from: j) else {
                i = open + 2
                continue
            }
            if isRaw {
                // A raw block inside a comment hides whatever looks like tags in it.
                guard let (_, rawEnd, _) = findClosing(endName: "endraw", nestedName: nil, from: close + 2) else { return nil }
                i = rawEnd
                continue
            }
            if isNested {
                depth += 1
            } else if depth == 0 {
                let trimRight = close > j && source[close - 1] == UInt8(ascii: "-")
                return (ClosingTag(start: open, name: nameStart..<j), close + 2, (trimLeft, trimRight))
            } else {
                depth -= 1
            }
            i = close + 2
        }
        return nil
    }

    struct ClosingTag {
        var start: Int
        var name: Range<Int>
    }

    private func applyWhitespaceControl(_ tokens: inout [LiquidToken]) {
        for i in tokens.indices where tokens[i].kind == .text {
            var range = tokens[i].content
            if i > 0, tokens[i - 1].trimRight {
                while !range.isEmpty, LiquidText.isWhitespace(source[range.lowerBound]) { range = (range.lowerBound + 1)..<range.upperBound }
            }
            if i + 1 < tokens.count, tokens[i + 1].trimLeft {
                while !range.isEmpty, LiquidText.isWhitespace(source[range.upperBound - 1]) { range = range.lowerBound..<(range.upperBound - 1) }
            }
            tokens[i].content = range
        }
    }

    static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }
}

/// Maps byte offsets to 1-based line and column (columns in Unicode scalars).
struct LiquidSource {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func position(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for b in bytes[..<min(offset, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else if !LiquidText.isContinuation(b) {
                column += 1
            }
        }
        return (line, column)
    }

    func error(at offset: Int, _ message: String) -> TemplateCompileError {
        let (line, column) = position(of: offset)
        return TemplateCompileError(line: line, column: column, message: message)
    }
}
