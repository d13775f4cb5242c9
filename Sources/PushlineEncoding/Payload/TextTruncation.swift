import PushlineCore

/// The truncate policy's state while an oversize payload is re-encoded (`on_oversize: truncate`):
/// a byte budget per role, and every body and title text of the payload with its cut points,
/// rendered and segmented once per device however many encodes it takes.
public struct TruncationBudget: Sendable {
    public var body: Int?
    public var title: Int?
    public var didTruncate = false
    /// Texts met so far, in program order (the same order on every encode of one payload).
    var texts: [TruncatableText] = []
    /// Position of the next text in `texts` during an encode.
    var cursor = 0

    public init(body: Int? = nil, title: Int? = nil) {
        self.body = body
        self.title = title
    }

    func budget(for role: TextRole) -> Int? {
        switch role {
        case .body: body
        case .title: title
        case .other: nil
        }
    }
}

/// One rendered text with its grapheme cut points and the escaped size of each prefix, so the
/// escaped size of any cut is known without encoding it.
struct TruncatableText: Sendable {
    let role: TextRole
    /// The render as it came out (written unchanged when it fits its budget).
    let raw: [UInt8]
    /// The render as valid UTF-8 (invalid sequences replaced, as the escaper would).
    let text: [UInt8]
    /// End offset in `text` of each grapheme cluster, and the escaped size of the text up to it.
    let ends: [Int]
    let escapedEnds: [Int]
    let escapedSize: Int

    init(role: TextRole, raw: [UInt8]) {
        self.role = role
        self.raw = raw
        let string = String(decoding: raw, as: UTF8.self)
        text = Array(string.utf8)
        var ends: [Int] = []
        var escapedEnds: [Int] = []
        var offset = 0
        var escaped = 0
        text.withUnsafeBytes { all in
            for character in string {
                let count = character.utf8.count
                escaped += JSONEscaper.escapedLength(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)]))
                offset += count
                ends.append(offset)
                escapedEnds.append(escaped)
            }
        }
        self.ends = ends
        self.escapedEnds = escapedEnds
        escapedSize = raw.withUnsafeBytes { JSONEscaper.escapedLength($0) }
    }

    /// What `TextTruncation.truncate(raw, toBytes: budget)` keeps: nil when the text fits
    /// unchanged, else the byte length of the kept prefix of `text` (trailing spaces dropped)
    /// and its escaped size, or (0, 0) with no ellipsis when even "…" does not fit.
    func cut(_ budget: Int) -> (bytes: Int, escaped: Int, ellipsis: Bool)? {
        guard raw.count > budget else { return nil }
        let ellipsisBytes = TextTruncation.ellipsisBytes.count
        guard budget > ellipsisBytes else { return (0, 0, false) }
        // The number of whole graphemes whose bytes fit with the ellipsis: a binary search.
        var low = 0, high = ends.count
        while low < high {
            let mid = (low + high + 1) / 2
            if ends[mid - 1] + ellipsisBytes <= budget { low = mid } else { high = mid - 1 }
        }
        var bytes = low == 0 ? 0 : ends[low - 1]
        var escaped = low == 0 ? 0 : escapedEnds[low - 1]
        while bytes > 0 && text[bytes - 1] == 0x20 {   // no dangling space before the ellipsis
            bytes -= 1
            escaped -= 1
        }
        return (bytes, escaped + ellipsisBytes, true)
    }

    /// Escaped bytes saved by cutting at `budget` (0 when it fits unchanged).
    func saving(_ budget: Int) -> Int {
        guard let cut = cut(budget) else { return 0 }
        return escapedSize - cut.escaped
    }

    /// Writes the text cut at `budget` as a JSON string; returns false (writing nothing) when
    /// it is empty and may be omitted, and whether it was shortened.
    func write(budget: Int, into writer: inout JSONWriter, omitIfEmpty: Bool) -> (written: Bool, shortened: Bool) {
        guard let cut = cut(budget) else {
            if raw.isEmpty && omitIfEmpty { return (false, false) }
            writer.writeString(utf8: raw)
            return (true, false)
        }
        if cut.bytes == 0 && !cut.ellipsis && omitIfEmpty { return (false, true) }
        let bytes = text[..<cut.bytes]
        let ellipsis = cut.ellipsis
        writer.writeString(utf8: ellipsis ? Array(bytes) + TextTruncation.ellipsisBytes : Array(bytes))
        return (true, true)
    }
}

/// Shortens text at a grapheme-cluster boundary and ends it with an ellipsis.
public enum TextTruncation {
    static let ellipsis = "…"
    static let ellipsisBytes = Array(ellipsis.utf8)

    /// The longest prefix of `text`, cut between grapheme clusters, that fits in `maxBytes` UTF-8
    /// bytes together with a trailing "…". Text that already fits is returned unchanged.
    public static func truncate(_ text: [UInt8], toBytes maxBytes: Int) -> [UInt8] {
        guard text.count > maxBytes else { return text }
        let ellipsisBytes = ellipsis.utf8.count
        guard maxBytes > ellipsisBytes else { return [] }
        let string = String(decoding: text, as: UTF8.self)
        var kept = 0
        var end = string.startIndex
        for character in string {
            let size = character.utf8.count
            if kept + size + ellipsisBytes > maxBytes { break }
            kept += size
            end = string.index(after: end)
        }
        var result = Array(string[..<end].utf8)
        // Do not leave a dangling space before the ellipsis.
        while result.last == 0x20 { result.removeLast() }
        result.append(contentsOf: ellipsis.utf8)
        return result
    }
}

/// Picks the truncate policy's budgets from the byte excess and the texts' cut tables, without
/// encoding: the longest body that removes `excess` escaped bytes, or, when even an empty body
/// does not, an empty body and the longest title that removes the rest.
enum TruncationModel {
    static func budgets(texts: [TruncatableText], excess: Int) -> (body: Int, title: Int?)? {
        let bodies = texts.filter { $0.role == .body }
        let titles = texts.filter { $0.role == .title }
        let bodyMax = bodies.map(\.raw.count).max() ?? 0
        let allBody = bodies.reduce(0) { $0 + $1.saving(0) }
        if allBody >= excess && !bodies.isEmpty {
            return (longest(bodies, upTo: bodyMax, saving: excess), nil)
        }
        let rest = excess - allBody
        let titleMax = titles.map(\.raw.count).max() ?? 0
        guard !titles.isEmpty, titles.reduce(0, { $0 + $1.saving(0) }) >= rest else { return nil }
        return (0, longest(titles, upTo: titleMax, saving: rest))
    }

    /// The largest budget in 0...upper whose cuts save at least `needed` bytes (savings shrink
    /// as the budget grows).
    static func longest(_ texts: [TruncatableText], upTo upper: Int, saving needed: Int) -> Int {
        var low = 0, high = upper
        while low < high {
            let mid = (low + high + 1) / 2
            if texts.reduce(0, { $0 + $1.saving(mid) }) >= needed { low = mid } else { high = mid - 1 }
        }
        return low
    }
}
