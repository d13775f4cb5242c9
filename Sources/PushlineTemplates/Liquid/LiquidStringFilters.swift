/// String filters over UTF-8 bytes. ASCII is handled byte by byte; only case mapping of
/// non-ASCII text goes through Swift's Unicode tables.
enum LiquidStringFilters {
    enum Occurrence { case all, first, last }

    static func upcase(_ s: [UInt8]) -> [UInt8] {
        if s.allSatisfy({ $0 < 0x80 }) { return s.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 32 : $0 } }
        return Array(LiquidText.string(s).uppercased().utf8)
    }

    static func downcase(_ s: [UInt8]) -> [UInt8] {
        if s.allSatisfy({ $0 < 0x80 }) { return s.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 } }
        return Array(LiquidText.string(s).lowercased().utf8)
    }

    /// Ruby's capitalize: first character upper case, the rest lower case.
    static func capitalize(_ s: [UInt8]) -> [UInt8] {
        guard !s.isEmpty else { return s }
        var end = 1
        while end < s.count, LiquidText.isContinuation(s[end]) { end += 1 }
        return upcase(Array(s[..<end])) + downcase(Array(s[end...]))
    }

    static func strip(_ s: [UInt8], leading: Bool, trailing: Bool) -> [UInt8] {
        var lo = 0, hi = s.count
        if leading { while lo < hi, LiquidText.isWhitespace(s[lo]) { lo += 1 } }
        if trailing { while hi > lo, LiquidText.isWhitespace(s[hi - 1]) { hi -= 1 } }
        return Array(s[lo..<hi])
    }

    static func newlineToBr(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < s.count {
            if s[i] == 0x0D, i + 1 < s.count, s[i + 1] == 0x0A { i += 1 }
            if s[i] == 0x0A { out += "<br />\n".utf8 } else { out.append(s[i]) }
            i += 1
        }
        return out
    }

    static func escapeHTML(_ s: [UInt8], once: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        for (i, b) in s.enumerated() {
            switch b {
            case UInt8(ascii: "&"):
                if once && isEntity(s, at: i) { out.append(b) } else { out += "&amp;".utf8 }
            case UInt8(ascii: "<"): out += "&lt;".utf8
            case UInt8(ascii: ">"): out += "&gt;".utf8
            case UInt8(ascii: "\""): out += "&quot;".utf8
            case UInt8(ascii: "'"): out += "&#39;".utf8
            default: out.append(b)
            }
        }
        return out
    }

    /// `&name;`, `&#123;` or `&#x1F;` starting at `i`.
    private static func isEntity(_ s: [UInt8], at i: Int) -> Bool {
        var j = i + 1
        let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
        let isAlpha = { (b: UInt8) in (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
        if j < s.count, s[j] == UInt8(ascii: "#") {
            j += 1
            if j < s.count, s[j] | 0x20 == UInt8(ascii: "x") {
                j += 1
                let start = j
                while j < s.count, isDigit(s[j]) || ((s[j] | 0x20) >= 0x61 && (s[j] | 0x20) <= 0x66) { j += 1 }
                return j > start && j < s.count && s[j] == UInt8(ascii: ";")
            }
            let start = j
            while j < s.count, isDigit(s[j]) { j += 1 }
            return j > start && j < s.count && s[j] == UInt8(ascii: ";")
        }
        let start = j
        while j < s.count, isAlpha(s[j]) { j += 1 }
        return j > start && j < s.count && s[j] == UInt8(ascii: ";")
    }

    /// Like Ruby's CGI.escape: unreserved bytes stay, space becomes `+`, the rest `%XX`.
    /// The uppercase hex digit of a nibble (0...15), by arithmetic: a static table would be read
    /// through its lazy initializer's `swift_once` on every byte `url_encode` escapes (Linux).
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "A") &+ (nibble &- 10)
    }

    /// For each scalar U+0080…U+07FF (two UTF-8 bytes), its lower / upper case as `downcase` and
    /// `upcase` map it (`String.lowercased()` / `uppercased()`, which map scalar by scalar with no
    /// context), when that is one scalar of two bytes too; `noSimpleMapping` otherwise (`ß` upper
    /// is `SS`, `İ` lower is `i̇`). Built once, from the very function the general filters call,
    /// so text in Latin, Greek and Cyrillic scripts is cased from its bytes.
    static let lowercaseTwoByte = twoByteCaseTable { String($0).lowercased() }
    static let uppercaseTwoByte = twoByteCaseTable { String($0).uppercased() }
    static let noSimpleMapping: UInt16 = 0xFFFF

    private static func twoByteCaseTable(_ map: (Unicode.Scalar) -> String) -> [UInt16] {
        var table = [UInt16](repeating: noSimpleMapping, count: 0x800)
        for value in UInt32(0x80)...0x7FF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let mapped = map(scalar).unicodeScalars
            guard mapped.count == 1, let only = mapped.first, (0x80...0x7FF).contains(only.value) else { continue }
            table[Int(value)] = UInt16(only.value)
        }
        return table
    }

    /// What `url_encode` keeps as it is (CGI.escape): letters, digits, `-`, `_`, `.`, `~`.
    @inline(__always)
    static func isURLUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "~")
    }

    static func urlEncode(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for b in s {
            if isURLUnreserved(b) {
                out.append(b)
            } else if b == 0x20 {
                out.append(UInt8(ascii: "+"))
            } else {
                out += [UInt8(ascii: "%"), hexDigit(b >> 4), hexDigit(b & 0xF)]
            }
        }
        return out
    }

    static func urlDecode(_ s: [UInt8]) -> [UInt8] {
        func hexValue(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: b - 0x30
            case 0x41...0x46: b - 0x37
            case 0x61...0x66: b - 0x57
            default: nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < s.count {
            if s[i] == UInt8(ascii: "+") {
                out.append(0x20)
            } else if s[i] == UInt8(ascii: "%"), i + 2 < s.count, let h = hexValue(s[i + 1]), let l = hexValue(s[i + 2]) {
                out.append(h << 4 | l)
                i += 2
            } else {
                out.append(s[i])
            }
            i += 1
        }
        return out
    }

    /// Cuts to `length` characters including the ellipsis; never splits a UTF-8 sequence.
    static func truncate(_ s: [UInt8], length: Int, ellipsis: [UInt8]) -> [UInt8] {
        let boundaries = LiquidText.scalarBoundaries(s)
        let count = boundaries.count - 1
        guard count > length else { return s }
        // length < count here, so it is at most Int.max - 1; a negative length keeps nothing
        // (subtracting from Int.min would overflow).
        let keep = length <= 0 ? 0 : max(0, length - LiquidText.characterCount(ellipsis))
        return Array(s[..<boundaries[keep]]) + ellipsis
    }

    static func truncateWords(_ s: [UInt8], words: Int, ellipsis: [UInt8]) -> [UInt8] {
        let all = split(s, by: [UInt8(ascii: " ")]) ?? []
        let n = max(words, 1)
        guard all.count > n else { return s }
        var out: [UInt8] = []
        for (i, w) in all.prefix(n).enumerated() {
            if i > 0 { out.append(0x20) }
            out += w
        }
        return out + ellipsis
    }

    /// Nil when the result would pass `limit` bytes: checked as it grows, since every match can
    /// multiply the text by the replacement's length.
    static func replace(_ s: [UInt8], _ target: [UInt8], with replacement: [UInt8], _ which: Occurrence, limit: Int) -> [UInt8]? {
        switch which {
        case .all:
            if target.isEmpty {
                // Ruby inserts the replacement between every character and at both ends.
                var out = replacement
                let b = LiquidText.scalarBoundaries(s)
                for k in 0..<(b.count - 1) {
                    out += s[b[k]..<b[k + 1]]
                    out += replacement
                    if out.count > limit { return nil }
                }
                return out.count > limit ? nil : out
            }
            var out: [UInt8] = []
            var i = 0
            while let found = LiquidText.find(target, in: s, from: i) {
                out += s[i..<found]
                out += replacement
                if out.count > limit { return nil }
                i = found + target.count
            }
            out += s[i...]
            return out.count > limit ? nil : out
        case .first:
            guard let found = LiquidText.find(target, in: s) else { return s }
            return Array(s[..<found]) + replacement + s[(found + target.count)...]
        case .last:
            // One pass for the last (possibly overlapping) match: searching again after each
            // match was quadratic for a long target in text full of matches.
            let last = target.isEmpty ? s.count : LiquidText.findLast(target, in: s)
            guard let found = last else { return s }
            return Array(s[..<found]) + replacement + s[(found + target.count)...]
        }
    }

    /// Ruby's String#split: `" "` splits on runs of whitespace, `""` into characters, and
    /// trailing empty pieces are dropped.
    /// Nil when there would be more than `maxParts` pieces (checked as they are made).
    static func split(_ s: [UInt8], by separator: [UInt8], maxParts: Int = .max) -> [[UInt8]]? {
        var parts: [[UInt8]] = []
        if separator == [UInt8(ascii: " ")] {
            var current: [UInt8] = []
            var inWord = false
            for b in s {
                if LiquidText.isWhitespace(b) {
                    if inWord {
                        if parts.count >= maxParts { return nil }
                        parts.append(current); current = []; inWord = false
                    }
                } else {
                    current.append(b)
                    inWord = true
                }
            }
            if inWord { parts.append(current) }
            return parts.count > maxParts ? nil : parts
        }
        if separator.isEmpty {
            let b = LiquidText.scalarBoundaries(s)
            guard b.count - 1 <= maxParts else { return nil }
            return (0..<(b.count - 1)).map { Array(s[b[$0]..<b[$0 + 1]]) }
        }
        var i = 0
        while let found = LiquidText.find(separator, in: s, from: i) {
            if parts.count >= maxParts { return nil }
            parts.append(Array(s[i..<found]))
            i = found + separator.count
        }
        parts.append(Array(s[i...]))
        while let last = parts.last, last.isEmpty { parts.removeLast() }
        return parts
    }

    /// Removes tags, and `<script>`, `<style>` and comments together with their content.
    /// Linear: a `<` with no `>` after it means no later `<` has one either, and markers are
    /// compared in place (this ran a scan to the end for every `<` of `<<<<…`, and built an
    /// array for every byte it skipped).
    static func stripHTML(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        func startsWith(_ text: StaticString, at k: Int) -> Bool {
            let n = text.utf8CodeUnitCount
            guard k + n <= s.count else { return false }
            let t = text.utf8Start
            for j in 0..<n where (s[k + j] | (t[j] >= 0x61 ? 0x20 : 0)) != t[j] { return false }
            return true
        }
        func skipPast(_ text: StaticString, from k: Int) -> Int {
            var j = k
            while j < s.count { if startsWith(text, at: j) { return j + text.utf8CodeUnitCount }; j += 1 }
            return s.count
        }
        var noCloseFrom = s.count  // no `>` at or after this offset
        while i < s.count {
            if s[i] == UInt8(ascii: "<") {
                if startsWith("<!--", at: i) { i = skipPast("-->", from: i + 4); continue }
                if startsWith("<script", at: i) { i = skipPast("</script>", from: i); continue }
                if startsWith("<style", at: i) { i = skipPast("</style>", from: i); continue }
                if i < noCloseFrom {
                    var j = i + 1
                    while j < s.count && s[j] != UInt8(ascii: ">") { j += 1 }
                    if j < s.count { i = j + 1; continue }
                    noCloseFrom = i
                }
            }
            out.append(s[i])
            i += 1
        }
        return out
    }
}
