/// The filters Pushline's Liquid knows; names resolve at compile time, so a typo is a config error.
enum LiquidFilter: String, Sendable, CaseIterable {
    // Strings
    case append, prepend, capitalize, upcase, downcase, strip, lstrip, rstrip
    case strip_newlines, newline_to_br, strip_html, escape, escape_once, url_encode, url_decode
    case truncate, truncatewords, replace, replace_first, replace_last, remove, remove_first, remove_last
    case slice, split
    // Arrays
    case join, first, last, size, reverse, sort, sort_natural, uniq, compact, map, `where`, concat
    // Numbers
    case abs, ceil, floor, round, plus, minus, times, divided_by, modulo, at_least, at_most
    // Other
    case `default`, date

    /// How many positional arguments the filter takes.
    var arity: ClosedRange<Int> {
        switch self {
        case .capitalize, .upcase, .downcase, .strip, .lstrip, .rstrip, .strip_newlines, .newline_to_br,
             .strip_html, .escape, .escape_once, .url_encode, .url_decode, .first, .last, .size, .reverse,
             .abs, .ceil, .floor:
            0...0
        case .sort, .sort_natural, .uniq, .compact, .round, .default:
            0...1
        case .append, .prepend, .remove, .remove_first, .remove_last, .split, .map, .concat,
             .plus, .minus, .times, .divided_by, .modulo, .at_least, .at_most, .date:
            1...1
        case .replace, .replace_first:
            1...2
        case .replace_last:
            2...2
        case .truncate, .truncatewords:
            0...2
        case .slice, .where:
            1...2
        case .join:
            0...1
        }
    }
}
