import PushlineCore
import PushlineEncoding

/// `summary.json`'s `quiet_hours`, present when the pipeline has quiet hours.
enum QuietHoursSummary {
    static func entry(_ quietHours: QuietHours, counts: RunCounts) -> [String: Any] {
        func clock(_ minute: Int) -> String {
            let h = minute / 60, m = minute % 60
            return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
        }
        return [
            "start": clock(quietHours.startMinute),
            "end": clock(quietHours.endMinute),
            "default_time_zone": quietHours.defaultTimeZone,
            "judged_at": quietHours.now,
            "deferred_lines": counts.deferredLines,
            "deferred_devices": counts.skipped[SkipReason.quietHours.code] ?? 0,
            "default_time_zone_lines": counts.defaultTimeZoneLines,
        ]
    }
}
