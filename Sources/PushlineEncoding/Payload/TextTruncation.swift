/// Byte budgets for personalized text while an oversize payload is re-encoded (`on_oversize: truncate`).
public struct TruncationBudget: Sendable {
    public var body: Int?
    public var title: Int?
    public var didTruncate = false

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

/// Shortens text at a grapheme-cluster boundary and ends it with an ellipsis.
public enum TextTruncation {
    static let ellipsis = "…"

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
