/// Splits template source into literal text and `{{…}}` tags.
///
/// Handles the Handlebars escapes (`\{{` starts literal text up to the next `{{`; `\\{{` keeps one
/// backslash and a real tag), comments that may contain `}}` (`{{!-- … --}}`), triple-stash, and
/// the `~` whitespace-control markers, which are recorded on the tag and applied later.
struct HandlebarsToken {
    enum Kind: Equatable {
        case text
        /// `{{expr}}`
        case mustache
        /// `{{{expr}}}` or `{{& expr}}`
        case unescaped
        case blockOpen
        /// `{{^name}}` (an inverted section)
        case inverseOpen
        /// `{{else}}`, `{{^}}`, `{{else if …}}` (content holds what follows `else`)
        case elseTag
        case close
        case comment
        case partial
        /// Syntax Pushline does not support (`{{#>` partial blocks, `{{*` decorators, raw blocks).
        case unsupported
    }

    var kind: Kind
    /// Text bytes for `.text`; the expression bytes inside the tag otherwise.
    var bytes: [UInt8]
    /// Byte offset of the token in the source (of the expression for tags, for error positions).
    var offset: Int
    /// Byte offset of the tag's `{{` (for messages about the tag as a whole).
    var tagOffset: Int
    var stripBefore = false
    var stripAfter = false

    var isTag: Bool { kind != .text }
}

struct HandlebarsLexer {
    let source: [UInt8]
    let positions: HandlebarsSourcePositions

    init(source: [UInt8]) {
        self.source = source
        self.positions = HandlebarsSourcePositions(source: source)
    }

    func tokenize() throws(TemplateCompileError) -> [HandlebarsToken] {
        var tokens: [HandlebarsToken] = []
        var text: [UInt8] = []
        var textOffset = 0
        var textStart = 0
        var i = 0
        let n = source.count

        func flushText(_ tokens: inout [HandlebarsToken], _ text: inout [UInt8], _ offset: Int) {
            if !text.isEmpty {
                tokens.append(HandlebarsToken(kind: .text, bytes: text, offset: offset, tagOffset: offset))
                text.removeAll()
            }
        }

        while true {
            guard let open = find(open: i) else {
                text.append(contentsOf: source[textStart..<n])
                flushText(&tokens, &text, textOffset)
                break
            }
            let backslashes = open > textStart && source[open - 1] == UInt8(ascii: "\\")
            if backslashes && !(open - 1 > textStart && source[open - 2] == UInt8(ascii: "\\")) {
                // `\{{`: the `{{` and everything up to the next `{{` is literal text.
                text.append(contentsOf: source[textStart..<(open - 1)])
                var next = find(open: open + 2) ?? n
                // The literal run stops before backslashes that escape the next tag.
                for _ in 0..<2 where next < n && next - 1 > open + 1 && source[next - 1] == UInt8(ascii: "\\") { next -= 1 }
                text.append(contentsOf: source[open..<next])
                textStart = next
                i = next
                continue
            }
            // `\\{{` keeps one backslash before a real tag.
            text.append(contentsOf: source[textStart..<(backslashes ? open - 1 : open)])
            flushText(&tokens, &text, textOffset)
            let (token, end) = try lexTag(at: open)
            tokens.append(token)
            i = end
            textStart = end
            textOffset = end
        }
        return tokens
    }

    private func find(open from: Int) -> Int? {
        var i = from
        while i + 1 < source.count {
            if source[i] == UInt8(ascii: "{") && source[i + 1] == UInt8(ascii: "{") { return i }
            i += 1
        }
        return nil
    }

    private func error(_ offset: Int, _ message: String) -> TemplateCompileError {
        let (line, column) = positions.lineAndColumn(offset)
        return TemplateCompileError(line: line, column: column, message: message)
    }

    /// Lexes the tag whose `{{` is at `open`; returns it and the offset after its `}}`.
    private func lexTag(at open: Int) throws(TemplateCompileError) -> (HandlebarsToken, Int) {
        let n = source.count
        var j = open + 2
        if j + 1 < n && source[j] == UInt8(ascii: "{") && source[j + 1] == UInt8(ascii: "{") {
            return try lexRawBlock(at: open)
        }
        var stripBefore = false
        if j < n && source[j] == UInt8(ascii: "~") { stripBefore = true; j += 1 }
        var kind = HandlebarsToken.Kind.mustache
        var triple = false
        if j < n {
            switch source[j] {
            case UInt8(ascii: "{"): kind = .unescaped; triple = true; j += 1
            case UInt8(ascii: "&"): kind = .unescaped; j += 1
            case UInt8(ascii: "#"):
                j += 1
                if j < n && (source[j] == UInt8(ascii: ">") || source[j] == UInt8(ascii: "*")) {
                    kind = .unsupported
                } else {
                    kind = .blockOpen
                }
            case UInt8(ascii: "^"): kind = .inverseOpen; j += 1
            case UInt8(ascii: "/"): kind = .close; j += 1
            case UInt8(ascii: ">"): kind = .partial; j += 1
            case UInt8(ascii: "*"): kind = .unsupported
            case UInt8(ascii: "!"): return try lexComment(open: open, bang: j, stripBefore: stripBefore)
            case UInt8(ascii: "="): throw error(open, "set-delimiter tags ({{=<% %>=}}) are not supported")
            default: break
            }
        }
        // Find the closing `}}` (or `}}}`), skipping quoted strings and `[literal]` segments.
        let contentStart = j
        var k = j
        var quote: UInt8 = 0
        while k < n {
            let c = source[k]
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || c == UInt8(ascii: "[") {
                quote = c == UInt8(ascii: "[") ? UInt8(ascii: "]") : c
            } else if c == UInt8(ascii: "}") {
                if triple {
                    var m = k + 1
                    if m < n && source[m] == UInt8(ascii: "~") { m += 1 }
                    if m + 1 < n && source[m] == UInt8(ascii: "}") && source[m + 1] == UInt8(ascii: "}") {
                        let stripAfter = m > k + 1
                        return (makeTag(kind, contentStart, k, open, stripBefore, stripAfter), m + 2)
                    }
                } else if k + 1 < n && source[k + 1] == UInt8(ascii: "}") {
                    var end = k
                    var stripAfter = false
                    if end > contentStart && source[end - 1] == UInt8(ascii: "~") { stripAfter = true; end -= 1 }
                    return (makeTag(kind, contentStart, end, open, stripBefore, stripAfter), k + 2)
                }
            }
            k += 1
        }
        throw error(open, "unclosed tag: missing \(triple ? "}}}" : "}}")")
    }

    private func makeTag(
        _ kind: HandlebarsToken.Kind, _ start: Int, _ end: Int, _ open: Int, _ stripBefore: Bool, _ stripAfter: Bool
    ) -> HandlebarsToken {
        var kind = kind
        var content = Array(source[start..<max(start, end)])
        // `{{else …}}` and a bare `{{^}}` continue the enclosing block.
        if kind == .inverseOpen && content.allSatisfy(HandlebarsLexer.isWhitespace) {
            kind = .elseTag
            content = []
        } else if kind == .mustache {
            let trimmed = content.drop(while: HandlebarsLexer.isWhitespace)
            if trimmed.starts(with: HandlebarsLexer.elseKeyword) {
                let rest = trimmed.dropFirst(4)
                if rest.first.map(HandlebarsLexer.isWhitespace) ?? true {
                    kind = .elseTag
                    content = Array(rest)
                }
            }
        }
        return HandlebarsToken(
            kind: kind, bytes: content, offset: start, tagOffset: open,
            stripBefore: stripBefore, stripAfter: stripAfter)
    }

    /// `{{{{raw}}}} … {{{{/raw}}}}`: the content is literal text, tags and all. (Handlebars passes
    /// it to a helper; Pushline has no template-defined helpers, so the content is the output.)
    private func lexRawBlock(at open: Int) throws(TemplateCompileError) -> (HandlebarsToken, Int) {
        let closeMarker = Array("}}}}".utf8)
        guard let nameEnd = firstIndex(of: closeMarker, from: open + 4) else {
            throw error(open, "unclosed raw block tag: missing }}}}")
        }
        let name = source[(open + 4)..<nameEnd].filter { !HandlebarsLexer.isWhitespace($0) }
        let closing = Array("{{{{/".utf8) + name + closeMarker
        let contentStart = nameEnd + 4
        guard let close = firstIndex(of: closing, from: contentStart) else {
            throw error(open, "unclosed raw block: missing {{{{/\(String(decoding: name, as: UTF8.self))}}}}")
        }
        let token = HandlebarsToken(
            kind: .text, bytes: Array(source[contentStart..<close]), offset: contentStart, tagOffset: open)
        return (token, close + closing.count)
    }

    private func firstIndex(of marker: [UInt8], from start: Int) -> Int? {
        var i = start
        while i + marker.count <= source.count {
            if source[i..<(i + marker.count)].elementsEqual(marker) { return i }
            i += 1
        }
        return nil
    }

    private func lexComment(open: Int, bang: Int, stripBefore: Bool) throws(TemplateCompileError) -> (HandlebarsToken, Int) {
        let n = source.count
        let long = bang + 2 < n && source[bang + 1] == UInt8(ascii: "-") && source[bang + 2] == UInt8(ascii: "-")
        var k = long ? bang + 3 : bang + 1
        while k + 1 < n {
            if source[k] == UInt8(ascii: "}") && source[k + 1] == UInt8(ascii: "}") {
                var end = k
                let stripAfter = end > bang + 1 && source[end - 1] == UInt8(ascii: "~")
                if stripAfter { end -= 1 }
                if !long || (end >= bang + 5 && source[end - 1] == UInt8(ascii: "-") && source[end - 2] == UInt8(ascii: "-")) {
                    let token = HandlebarsToken(
                        kind: .comment, bytes: [], offset: bang, tagOffset: open,
                        stripBefore: stripBefore, stripAfter: stripAfter)
                    return (token, k + 2)
                }
            }
            k += 1
        }
        throw error(open, long ? "unclosed comment: missing --}}" : "unclosed comment: missing }}")
    }

    static let elseKeyword: [UInt8] = Array("else".utf8)

    static func isWhitespace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0C || c == 0x0B
    }
}

/// Maps byte offsets to 1-based line and column (columns count Unicode scalars, not bytes).
struct HandlebarsSourcePositions {
    let source: [UInt8]

    func lineAndColumn(_ offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var i = 0
        while i < min(offset, source.count) {
            let c = source[i]
            if c == 0x0A {
                line += 1
                column = 1
            } else if c & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return (line, column)
    }
}
