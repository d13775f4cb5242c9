public import PushlineCore
import Foundation

extension SkipReason {
    /// Every device of a recipient whose local time is inside `quiet_hours`: not sent or written
    /// now; the line is in `deferred.ndjson` for a later run.
    public static let quietHours = SkipReason("quiet_hours", "the recipient's local time is inside quiet_hours: deferred to deferred.ndjson")
}

/// `quiet_hours:` compiled: a daily window in the recipient's time zone, judged once at the run's
/// clock (`--now`, else the start of the run; docs/pipeline.md, "Quiet hours").
///
/// Judging at one instant makes the decision a function of the zone alone, so it is computed up
/// front for every zone Foundation knows (about 600) into one immutable table the encode workers
/// share: per device, a dictionary lookup, no `TimeZone` on the hot path and no cache to bound.
/// The same audience and `--now` defer the same lines on every run (and every resume).
public struct QuietHours: Sendable {
    /// Minutes after local midnight, `start` included and `end` excluded; `start > end` wraps midnight.
    public var startMinute: Int
    public var endMinute: Int
    /// Where the record names its IANA zone (nil: every recipient is in the default zone).
    public var timeZoneField: JSONPath?
    public var defaultTimeZone: String
    /// The run's clock, UNIX seconds.
    public var now: Int
    /// Inside the window at `now`, per zone name.
    let insideByZone: [String: Bool]
    let insideInDefault: Bool

    public struct Verdict: Sendable, Equatable {
        /// The recipient's local time is inside the window: defer the line.
        public var inside: Bool
        /// The record's zone was absent or not a zone name Foundation knows: the default was used.
        public var usedDefaultZone: Bool

        public init(inside: Bool, usedDefaultZone: Bool) {
            self.inside = inside
            self.usedDefaultZone = usedDefaultZone
        }
    }

    init(startMinute: Int, endMinute: Int, timeZoneField: JSONPath?, defaultTimeZone: String, now: Int) {
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.timeZoneField = timeZoneField
        self.defaultTimeZone = defaultTimeZone
        self.now = now
        let instant = Date(timeIntervalSince1970: TimeInterval(now))
        var table: [String: Bool] = [:]
        for name in QuietHoursZones.names {
            guard let zone = TimeZone(identifier: name) else { continue }
            table[name] = Self.isInside(minute: Self.localMinute(now: now, offset: zone.secondsFromGMT(for: instant)), start: startMinute, end: endMinute)
        }
        insideByZone = table
        insideInDefault = table[defaultTimeZone] ?? false
    }

    /// Minute of the local day (0..<1440) at UNIX time `now` in a zone `offset` seconds from UTC.
    static func localMinute(now: Int, offset: Int) -> Int {
        let local = now + offset
        let secondOfDay = ((local % 86_400) + 86_400) % 86_400
        return secondOfDay / 60
    }

    static func isInside(minute: Int, start: Int, end: Int) -> Bool {
        start < end ? (minute >= start && minute < end) : (minute >= start || minute < end)
    }

    /// Whether `record`'s recipient is inside the window now.
    public func verdict(for record: JSONValue) -> Verdict {
        guard let timeZoneField, let value = record.value(at: timeZoneField), value.kind == .string else {
            return Verdict(inside: insideInDefault, usedDefaultZone: true)
        }
        // Zone names are short ASCII; anything longer is not one (and is not copied).
        let inside: Bool?? = value.withUnescapedString { bytes -> Bool? in
            guard bytes.count <= QuietHoursZones.longestName else { return nil }
            return insideByZone[String(decoding: bytes, as: UTF8.self)]
        }
        if let known = inside.flatMap({ $0 }) { return Verdict(inside: known, usedDefaultZone: false) }
        return Verdict(inside: insideInDefault, usedDefaultZone: true)
    }
}

/// The zone names quiet hours accept: those Foundation knows (`TimeZone.knownTimeZoneIdentifiers`:
/// the IANA database's names as ICU ships them), plus `UTC` and `GMT`.
public enum QuietHoursZones {
    public static let names: Set<String> = {
        var names = Set(TimeZone.knownTimeZoneIdentifiers)
        for alias in ["UTC", "GMT"] where TimeZone(identifier: alias) != nil { names.insert(alias) }
        return names
    }()

    static let longestName = names.map(\.utf8.count).max() ?? 64

    public static func isKnown(_ name: String) -> Bool { names.contains(name) }
}
