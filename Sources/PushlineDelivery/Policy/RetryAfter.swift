/// A `Retry-After` header value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter: Sendable, Equatable {
    case delay(Duration)
    /// Wall-clock UNIX seconds.
    case date(unixTime: Int64)

    /// Longer waits are cut to this: a hostile value cannot park a provider for days (the retry
    /// policy's total-time bound gives such a request up anyway).
    public static let maximumDelay: Duration = .seconds(86_400)

    /// How long to wait from `unixTimeNow` (zero for a date in the past), at most a day.
    public func delay(unixTimeNow: Int64) -> Duration {
        switch self {
        case .delay(let duration):
            return Swift.min(duration, Self.maximumDelay)
        case .date(let unixTime):
            let (difference, overflow) = unixTime.subtractingReportingOverflow(unixTimeNow)
            if overflow { return unixTime > unixTimeNow ? Self.maximumDelay : .zero }
            if difference <= 0 { return .zero }
            return difference >= 86_400 ? Self.maximumDelay : .seconds(difference)
        }
    }

    /// Parses the header's value; nil for anything else (then the backoff alone decides). A
    /// value holding a byte a field value may not (a control byte, DEL, or any non-ASCII byte,
    /// RFC 9110 §5.5) is not a Retry-After at all: ignored, whatever else it holds. The answer
    /// it came with is still an answer with its status.
    public init?(headerValue: some Collection<UInt8>) {
        let bytes = Array(headerValue.prefix(64))
        guard headerValue.count <= 64 else { return nil }
        guard bytes.allSatisfy({ $0 == 0x09 || (0x20...0x7E).contains($0) }) else { return nil }
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let text = bytes[start..<end]
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // More than 9 digits is over 31 years: cut to the maximum rather than parsed.
            guard text.count <= 9 else { self = .delay(Self.maximumDelay); return }
            var seconds: Int64 = 0
            for digit in text { seconds = seconds * 10 + Int64(digit - UInt8(ascii: "0")) }
            self = .delay(.seconds(seconds))
            return
        }
        guard let unixTime = HTTPDate.parse(Array(text)) else { return nil }
        self = .date(unixTime: unixTime)
    }

    public init?(headerValue: String) {
        self.init(headerValue: Array(headerValue.utf8))
    }
}

/// The three HTTP-date forms a recipient must accept (RFC 9110 §5.6.7): IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, and asctime
/// `Sun Nov  6 08:49:37 1994`. The weekday is not checked.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ bytes: [UInt8]) -> Int64? {
        // Split on spaces, commas and '-' into words; the shapes differ only in order.
        var words: [[UInt8]] = []
        var word: [UInt8] = []
        for byte in bytes {
            if byte == 0x20 || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "-") {
                if !word.isEmpty { words.append(word); word = [] }
            } else {
                word.append(byte)
            }
        }
        if !word.isEmpty { words.append(word) }
        guard words.count >= 5 else { return nil }
        let day, month, year: Int
        let time: [UInt8]
        if words.count == 6, lower(words[5]) == "gmt" {
            // IMF-fixdate or RFC 850: weekday day month year time GMT.
            guard let d = number(words[1], digits: 1...2), let m = monthNumber(words[2]),
                  var y = number(words[3], digits: 2...4) else { return nil }
            // RFC 850's two-digit year: RFC 9110 says a year more than 50 years ahead is in the past.
            if words[3].count == 2 { y += y < 70 ? 2000 : 1900 }
            (day, month, year, time) = (d, m, y, words[4])
        } else if words.count == 5 {
            // asctime: weekday month day time year.
            guard let m = monthNumber(words[1]), let d = number(words[2], digits: 1...2),
                  let y = number(words[4], digits: 4...4) else { return nil }
            (day, month, year, time) = (d, m, y, words[3])
        } else {
            return nil
        }
        guard (1...31).contains(day), (1...9999).contains(year), time.count == 8,
              time[2] == UInt8(ascii: ":"), time[5] == UInt8(ascii: ":"),
              let hour = number(Array(time[0..<2]), digits: 2...2), hour < 24,
              let minute = number(Array(time[3..<5]), digits: 2...2), minute < 60,
              let second = number(Array(time[6..<8]), digits: 2...2), second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func lower(_ word: [UInt8]) -> String {
        String(decoding: word.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func monthNumber(_ word: [UInt8]) -> Int? {
        months.firstIndex(of: lower(word)).map { $0 + 1 }
    }

    private static func number(_ word: [UInt8], digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(word.count), word.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return word.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
