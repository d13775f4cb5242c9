import PushlineCore

/// `quiet_hours:` in the pipeline (docs/pipeline.md, "Quiet hours").
enum QuietHoursSchema {
    static let object = ObjectSchema("quiet_hours", [
        SchemaProperty("start", .string(.constant), required: true),
        SchemaProperty("end", .string(.constant), required: true),
        SchemaProperty("time_zone_field", .string(.constant)),
        SchemaProperty("default_time_zone", .string(.constant), required: true),
    ], rules: [rule])

    static let rule: SchemaRule = { node, path, log, _ in
        var minutes: [String: Int] = [:]
        for key in ["start", "end"] {
            guard let value = node[key], let text = value.stringValue else { continue }
            if let minute = minuteOfDay(text) {
                minutes[key] = minute
            } else {
                log.error(path / key, "expected a time of day as HH:MM from 00:00 to 23:59, found '\(text)'", at: value)
            }
        }
        if let start = minutes["start"], let end = minutes["end"], start == end {
            log.error(path / "end", "is the same time as start: the window would be empty (or the whole day); give two different times", at: node["end"])
        }
        if let value = node["default_time_zone"], let name = value.stringValue, !QuietHoursZones.isKnown(name) {
            log.error(path / "default_time_zone", "'\(name)' is not a time zone name this system knows (IANA names such as America/New_York, Europe/Paris, UTC)", at: value)
        }
        if let value = node["time_zone_field"], let text = value.stringValue {
            do {
                _ = try JSONPath(parsing: text)
            } catch {
                log.error(path / "time_zone_field", "not a field path (e.g. customer.time_zone): \(error)", at: value)
            }
        }
    }

    /// `HH:MM` (two digits each, 24-hour) as minutes after midnight.
    static func minuteOfDay(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        func digit(_ i: Int) -> Int? {
            let b = bytes[i]
            return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) ? Int(b - UInt8(ascii: "0")) : nil
        }
        guard let h1 = digit(0), let h2 = digit(1), let m1 = digit(3), let m2 = digit(4) else { return nil }
        let hour = h1 * 10 + h2, minute = m1 * 10 + m2
        guard hour < 24, minute < 60 else { return nil }
        return hour * 60 + minute
    }

    /// The compiled window, once the schema found no error.
    static func compile(_ node: ConfigNode?, now: Int) -> QuietHours? {
        guard let node, let start = node["start"]?.stringValue.flatMap(minuteOfDay),
              let end = node["end"]?.stringValue.flatMap(minuteOfDay),
              let zone = node["default_time_zone"]?.stringValue else { return nil }
        let field = node["time_zone_field"]?.stringValue.flatMap { try? JSONPath(parsing: $0) }
        return QuietHours(startMinute: start, endMinute: end, timeZoneField: field, defaultTimeZone: zone, now: now)
    }
}
