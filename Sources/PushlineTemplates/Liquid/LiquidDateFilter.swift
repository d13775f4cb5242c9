/// `date`: parses timestamps, ISO 8601 and "March 14, 2016"-style dates, formats with a strftime
/// subset, always in UTC. Input it cannot read is returned unchanged, as Shopify does.
enum LiquidDateFilter {
    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let dayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// The instants `date` formats: 0000-01-01T00:00:00Z through 9999-12-31T23:59:59Z, the years
    /// `%Y` writes in four digits. A timestamp or date outside them is `invalid_value`: the
    /// calendar arithmetic below would overflow for the extremes, and no push needs them.
    static let supportedSeconds = -62_167_219_200...253_402_300_799

    static func format(_ input: LiquidValue, _ format: [UInt8], now: Int) throws(LiquidFilterError) -> LiquidValue {
        if input.isNil { return .null }
        if format.isEmpty { return input }
        guard let seconds = try epochSeconds(input, now: now) else { return input }
        guard supportedSeconds.contains(seconds) else {
            throw LiquidFilterError(TemplateArithmeticError(
                message: "\(seconds) is outside the dates it can format (years 0 to 9999, UNIX seconds \(supportedSeconds.lowerBound) to \(supportedSeconds.upperBound))"))
        }
        return .string(strftime(format, seconds))
    }

    /// Seconds since 1970 for a timestamp or a date it can read; nil when it cannot read it.
    /// `now` and `today` are the campaign's instant, not the clock's.
    static func epochSeconds(_ input: LiquidValue, now: Int) throws(LiquidFilterError) -> Int? {
        switch input.normalized {
        case .int(let i): return i
        case .double(let d): return try LiquidFilters.checked { () throws(TemplateArithmeticError) in try TemplateMath.int(d) }
        case .string(let s):
            let text = LiquidText.string(s).trimmingWhitespace
            if text == "now" || text == "today" { return now }
            if let i = Int(text) {
                // Shopify reads only unsigned digit strings as timestamps.
                return i >= 0 ? i : nil
            }
            return parse(text)
        default: return nil
        }
    }

    /// `2016-03-14`, `2016-03-14T10:30:00Z`, `2016-03-14 10:30:00 +0100`, `March 14, 2016`, `14 March 2016`.
    /// Numbers are at most 9 digits, so the result cannot overflow (|seconds| < 2^56).
    static func parse(_ text: String) -> Int? {
        let scanner = Array(text.utf8)
        var i = 0
        func number(maxDigits: Int = 9) -> Int? {
            var v = 0, n = 0
            while i < scanner.count, n < maxDigits, scanner[i] >= 0x30, scanner[i] <= 0x39 { v = v * 10 + Int(scanner[i] - 0x30); i += 1; n += 1 }
            return n > 0 ? v : nil
        }
        func word() -> String {
            let start = i
            while i < scanner.count, (scanner[i] | 0x20) >= 0x61, (scanner[i] | 0x20) <= 0x7A { i += 1 }
            return String(decoding: scanner[start..<i], as: UTF8.self)
        }
        func skip(_ chars: String) { while i < scanner.count, chars.utf8.contains(scanner[i]) { i += 1 } }
        func month(_ name: String) -> Int? {
            guard name.count >= 3 else { return nil }
            return monthNames.firstIndex { $0.lowercased().hasPrefix(name.lowercased()) }.map { $0 + 1 }
        }

        var year: Int, mon: Int, day: Int
        if let first = number() {
            if i < scanner.count, scanner[i] == UInt8(ascii: "-") {
                year = first
                i += 1
                guard let m = number(maxDigits: 2) else { return nil }
                guard i < scanner.count, scanner[i] == UInt8(ascii: "-") else { return nil }
                i += 1
                guard let d = number(maxDigits: 2) else { return nil }
                mon = m; day = d
            } else {
                skip(" ")
                guard let m = month(word()) else { return nil }
                skip(" ,")
                guard let y = number() else { return nil }
                year = y; mon = m; day = first
            }
        } else {
            skip(" ")
            var name = word()
            if dayNames.contains(where: { $0.lowercased().hasPrefix(name.lowercased()) && name.count >= 3 }) {
                skip(" ,")
                name = word()
            }
            guard let m = month(name) else { return nil }
            skip(" ")
            guard let d = number(maxDigits: 2) else { return nil }
            skip(" ,")
            guard let y = number() else { return nil }
            year = y; mon = m; day = d
        }
        guard (1...12).contains(mon), (1...31).contains(day) else { return nil }
        var seconds = daysFromCivil(year, mon, day) * 86_400
        skip(" T")
        if let h = number(maxDigits: 2) {
            guard i < scanner.count, scanner[i] == UInt8(ascii: ":"), h < 24 else { return nil }
            i += 1
            guard let m = number(maxDigits: 2) else { return nil }
            var s = 0
            if i < scanner.count, scanner[i] == UInt8(ascii: ":") { i += 1; s = number(maxDigits: 2) ?? 0 }
            if i < scanner.count, scanner[i] == UInt8(ascii: ".") { i += 1; _ = number(maxDigits: 12) }
            seconds += h * 3600 + m * 60 + s
            skip(" ")
            if i < scanner.count, scanner[i] == UInt8(ascii: "+") || scanner[i] == UInt8(ascii: "-") {
                let sign = scanner[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = number(maxDigits: 2) else { return nil }
                if i < scanner.count, scanner[i] == UInt8(ascii: ":") { i += 1 }
                let om = number(maxDigits: 2) ?? 0
                seconds -= sign * (oh * 3600 + om * 60)
            } else if i < scanner.count, scanner[i] == UInt8(ascii: "Z") || word().uppercased() == "UTC" {
                i = scanner.count
            }
        }
        return seconds
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// `seconds` must be within `supportedSeconds` (callers check): no step below can overflow.
    static func strftime(_ format: [UInt8], _ seconds: Int) -> [UInt8] {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        let hour = secondOfDay / 3600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        let yearDay = days - daysFromCivil(year, 1, 1) + 1

        var out: [UInt8] = []
        var i = 0
        func pad(_ v: Int, _ width: Int, _ flag: UInt8?) {
            var digits = String(v)
            if flag == UInt8(ascii: "-") { out += digits.utf8; return }
            let fill: Character = flag == UInt8(ascii: "_") ? " " : "0"
            while digits.count < width { digits.insert(fill, at: digits.startIndex) }
            out += digits.utf8
        }
        while i < format.count {
            guard format[i] == UInt8(ascii: "%"), i + 1 < format.count else { out.append(format[i]); i += 1; continue }
            i += 1
            var flag: UInt8? = nil
            if format[i] == UInt8(ascii: "-") || format[i] == UInt8(ascii: "_") || format[i] == UInt8(ascii: "0") || format[i] == UInt8(ascii: "^"), i + 1 < format.count {
                flag = format[i]
                i += 1
            }
            let upper = flag == UInt8(ascii: "^")
            func text(_ s: String) { out += (upper ? s.uppercased() : s).utf8 }
            switch format[i] {
            case UInt8(ascii: "Y"): pad(year, 1, flag)
            case UInt8(ascii: "y"): pad(year % 100, 2, flag)
            case UInt8(ascii: "C"): pad(year / 100, 2, flag)
            case UInt8(ascii: "m"): pad(month, 2, flag)
            case UInt8(ascii: "d"): pad(day, 2, flag)
            case UInt8(ascii: "e"): pad(day, 2, flag ?? UInt8(ascii: "_"))
            case UInt8(ascii: "j"): pad(yearDay, 3, flag)
            case UInt8(ascii: "H"): pad(hour, 2, flag)
            case UInt8(ascii: "k"): pad(hour, 2, flag ?? UInt8(ascii: "_"))
            case UInt8(ascii: "I"): pad(hour % 12 == 0 ? 12 : hour % 12, 2, flag)
            case UInt8(ascii: "l"): pad(hour % 12 == 0 ? 12 : hour % 12, 2, flag ?? UInt8(ascii: "_"))
            case UInt8(ascii: "M"): pad(minute, 2, flag)
            case UInt8(ascii: "S"): pad(second, 2, flag)
            case UInt8(ascii: "L"): out += "000".utf8
            case UInt8(ascii: "p"): text(hour < 12 ? "AM" : "PM")
            case UInt8(ascii: "P"): out += (hour < 12 ? "am" : "pm").utf8
            case UInt8(ascii: "b"), UInt8(ascii: "h"): text(String(monthNames[month - 1].prefix(3)))
            case UInt8(ascii: "B"): text(monthNames[month - 1])
            case UInt8(ascii: "a"): text(String(dayNames[weekday].prefix(3)))
            case UInt8(ascii: "A"): text(dayNames[weekday])
            case UInt8(ascii: "u"): pad(weekday == 0 ? 7 : weekday, 1, flag)
            case UInt8(ascii: "w"): pad(weekday, 1, flag)
            case UInt8(ascii: "s"): out += String(seconds).utf8
            case UInt8(ascii: "z"): out += "+0000".utf8
            case UInt8(ascii: "Z"): out += "UTC".utf8
            case UInt8(ascii: "F"): out += strftime(Array("%Y-%m-%d".utf8), seconds)
            case UInt8(ascii: "D"), UInt8(ascii: "x"): out += strftime(Array("%m/%d/%y".utf8), seconds)
            case UInt8(ascii: "T"), UInt8(ascii: "X"): out += strftime(Array("%H:%M:%S".utf8), seconds)
            case UInt8(ascii: "R"): out += strftime(Array("%H:%M".utf8), seconds)
            case UInt8(ascii: "c"): out += strftime(Array("%a %b %e %H:%M:%S %Y".utf8), seconds)
            case UInt8(ascii: "%"): out.append(UInt8(ascii: "%"))
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            default:
                out.append(UInt8(ascii: "%"))
                if let flag { out.append(flag) }
                out.append(format[i])
            }
            i += 1
        }
        return out
    }
}

private extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
