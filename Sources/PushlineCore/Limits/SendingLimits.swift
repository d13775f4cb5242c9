/// How many connections and concurrent streams a provider may be sent over: the one
/// definition. The pipeline schema validates `connections` and `streams` against it, and the
/// sender's in-flight limit and the HTTP/2 transport refuse or clamp with the same ranges, so a
/// value the pipeline accepts is never cut or refused later.
public enum SendingLimits {
    /// Per provider: APNs wants few long-lived connections; FCM about 10 for 10,000/s.
    public static let connections = 1...64
    /// Per connection (libcurl uses the lower of this and the server's SETTINGS_MAX_CONCURRENT_STREAMS).
    public static let streamsPerConnection = 1...10_000
    /// Transfer threads per provider: each runs one libcurl multi handle with its share of the
    /// provider's connections and rate. At most one per connection.
    public static let transferThreads = 1...16
}
