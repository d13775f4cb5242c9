import PushlineCore

/// Expiries (`ios.expiry`, `android.time_to_live`, `web.time_to_live`, `amazon.expires_after`,
/// `sms.expiry`): seconds from the run's start or an absolute ISO 8601 UTC timestamp.
public enum ExpiryRule {
    /// Relative seconds: 0 to 2^31 − 1 (about 68 years). The providers read expiries as 32-bit
    /// UNIX seconds (the schema's other APNs times use the same bound), FCM caps a TTL at 28 days
    /// and an SMS at 48 hours, so a larger value is a typo; bounding it keeps `now + seconds`
    /// meaningful.
    public static let relativeSeconds = 0...Int(Int32.max)

    /// The absolute UNIX time `seconds` after `now`, never below 0 (an expiry in the past means
    /// "deliver now or never", APNs' 0). Nil when the sum leaves Int's range (`--now` is any Int64).
    public static func timestamp(now: Int, plus seconds: Int) -> Int? {
        CheckedMath.add(now, max(0, seconds)).map { max(0, $0) }
    }

    /// Seconds from `now` until `timestamp`, never below 0; nil when the difference overflows.
    public static func seconds(from now: Int, until timestamp: Int) -> Int? {
        CheckedMath.subtract(timestamp, now).map { max(0, $0) }
    }
}
