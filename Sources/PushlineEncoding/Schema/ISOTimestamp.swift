/// ISO 8601 UTC timestamps as pipelines write expiry times: `2026-12-01T18:00:00Z`
/// (optionally with fractional seconds, or a `+00:00` offset). Parsed without Foundation.
public enum ISOTimestamp {
    /// Seconds since the UNIX epoch, or nil when the text is not such a timestamp.
    public static func parse(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<(from + count) {
                guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
              b[16] == UInt8(ascii: ":"), let second = digits(17, 2)
        else { return nil }
        var i = 19
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count && b[i] >= 0x30 && b[i] <= 0x39 { i += 1 }
        }
        let rest = Array(b[i...])
        guard rest == Array("Z".utf8) || rest == Array("+00:00".utf8) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month, year)).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        return daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
