/// Applies the two whitespace rules to the token stream before parsing.
///
/// 1. Standalone lines (Mustache spec, Handlebars default): a line holding only a block tag,
///    `{{else}}`, a comment or a partial, plus spaces or tabs, disappears with its newline. A
///    standalone partial remembers the indentation so its lines can be indented.
/// 2. `{{~` and `~}}` strip all whitespace, newlines included, on that side of the tag.
///
/// Standalone checks read the original text so that one tag's trimming never changes whether
/// its neighbour counts as standalone.
enum HandlebarsWhitespace {
    /// Returns the tokens with text trimmed (empty texts dropped) and, for each standalone
    /// partial, the indentation it stood at (keyed by token offset).
    static func apply(_ tokens: [HandlebarsToken]) -> (tokens: [HandlebarsToken], partialIndents: [Int: [UInt8]]) {
        var tokens = tokens
        // Per text token: bytes to cut at the start and at the end.
        var leadCut = [Int](repeating: 0, count: tokens.count)
        var tailCut = [Int](repeating: 0, count: tokens.count)
        var indents: [Int: [UInt8]] = [:]

        for t in tokens.indices where isStandaloneCandidate(tokens[t].kind) {
            guard let before = whitespaceBefore(tokens, t), let after = lineEndAfter(tokens, t) else { continue }
            if t > 0 { tailCut[t - 1] = before }
            if t + 1 < tokens.count { leadCut[t + 1] = after }
            if tokens[t].kind == .partial {
                // `{{~>` strips the indentation away, so the partial is not indented.
                indents[tokens[t].offset] = t > 0 && !tokens[t].stripBefore ? Array(tokens[t - 1].bytes.suffix(before)) : []
            }
        }
        for t in tokens.indices where tokens[t].kind == .text {
            let count = tokens[t].bytes.count
            let lead = min(leadCut[t], count)
            let tail = min(tailCut[t], count - lead)
            if lead > 0 || tail > 0 {
                tokens[t].bytes = Array(tokens[t].bytes[lead..<(count - tail)])
                tokens[t].offset += lead
            }
        }
        for t in tokens.indices where tokens[t].isTag {
            if tokens[t].stripBefore, t > 0, tokens[t - 1].kind == .text {
                while let last = tokens[t - 1].bytes.last, HandlebarsLexer.isWhitespace(last) {
                    tokens[t - 1].bytes.removeLast()
                }
            }
            if tokens[t].stripAfter, t + 1 < tokens.count, tokens[t + 1].kind == .text {
                let skip = tokens[t + 1].bytes.prefix(while: HandlebarsLexer.isWhitespace).count
                tokens[t + 1].bytes.removeFirst(skip)
                tokens[t + 1].offset += skip
            }
        }
        return (tokens.filter { $0.isTag || !$0.bytes.isEmpty }, indents)
    }

    private static func isStandaloneCandidate(_ kind: HandlebarsToken.Kind) -> Bool {
        switch kind {
        case .blockOpen, .inverseOpen, .elseTag, .close, .comment, .partial: return true
        case .text, .mustache, .unescaped, .unsupported: return false
        }
    }

    /// Spaces and tabs between the line start and tag `t`, or nil when anything else is there.
    private static func whitespaceBefore(_ tokens: [HandlebarsToken], _ t: Int) -> Int? {
        if t == 0 { return 0 }
        let previous = tokens[t - 1]
        guard previous.kind == .text else { return nil }
        var count = 0
        for c in previous.bytes.reversed() {
            if c == 0x0A { return count }
            guard c == 0x20 || c == 0x09 else { return nil }
            count += 1
        }
        // No newline: only standalone when this text opens the template.
        return t - 1 == 0 ? count : nil
    }

    /// Bytes from tag `t` through the end of its line (spaces, tabs, then `\n`, `\r\n` or the
    /// end of the template), or nil when anything else follows on the line.
    private static func lineEndAfter(_ tokens: [HandlebarsToken], _ t: Int) -> Int? {
        if t + 1 == tokens.count { return 0 }
        let next = tokens[t + 1]
        guard next.kind == .text else { return nil }
        let bytes = next.bytes
        var i = 0
        while i < bytes.count && (bytes[i] == 0x20 || bytes[i] == 0x09) { i += 1 }
        if i == bytes.count { return t + 2 == tokens.count ? i : nil }
        if bytes[i] == 0x0A { return i + 1 }
        if bytes[i] == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A { return i + 2 }
        return nil
    }
}
