import PushlineCore

/// The two implementations behind `HTTP2Transport` (docs/delivery.md, "The HTTP/2 engine").
public enum TransportEngine: String, Sendable, CaseIterable {
    /// nghttp2 and OpenSSL on non-blocking sockets in the transfer thread's epoll loop.
    case nghttp2
    /// libcurl's multi interface (its version's workarounds live in Transport/Curl).
    case curl
}

/// How one `HTTP2Transport` (one libcurl multi handle, one thread) talks to one host.
///
/// Concurrency is `connections × streamsPerConnection` transfers in flight; curl uses the lower
/// of `streamsPerConnection` and the server's SETTINGS_MAX_CONCURRENT_STREAMS per connection.
public struct TransportConfiguration: Sendable {
    /// Connections to the host at most (the libcurl engine's `CURLMOPT_MAX_HOST_CONNECTIONS`:
    /// Transport/Curl says why it needs the cap).
    public var connections: Int
    /// Streams per connection at most (`CURLMOPT_MAX_CONCURRENT_STREAMS`, curl's default is 100).
    public var streamsPerConnection: Int
    /// Requests held by the transport at most: queued, in flight, and completed but not yet taken
    /// by the consumer. `submit` suspends while the transport holds this many, which is how a slow
    /// consumer slows admission instead of growing memory. At least the concurrency.
    public var capacity: Int
    /// A PEM file whose certificates are trusted in addition to the system store (a test server,
    /// the emulator). Verification of the peer and host name is always on.
    public var caFile: String?
    /// Response body bytes kept per request; the rest is read and discarded, and the response says
    /// so (`bodyTruncated`).
    public var maxResponseBodyBytes: Int
    /// Response header names (case-insensitive) whose values each response reports.
    public var capturedHeaderNames: [String]
    /// Header values longer than this are not reported (a hostile server cannot grow memory).
    public var maxHeaderValueBytes: Int
    /// Time allowed to open a connection (TCP + TLS), in milliseconds; 0 means curl's default.
    public var connectTimeoutMilliseconds: Int
    /// `host:port:address[,address…]` entries (`CURLOPT_RESOLVE`): connect to exactly these
    /// addresses, checked before (a Web Push origin's), instead of resolving the name again.
    public var pinnedAddresses: [String] = []
    /// Take HTTP/1.1 when the server's ALPN offers nothing better (a webhook receiver, a token
    /// endpoint). Off: such a connection is refused before a request is written (`notHTTP2`),
    /// as APNs, FCM and push services speak HTTP/2.
    public var allowsHTTP1 = false
    /// Which implementation sends: nghttp2 driven directly (the default for HTTP/2 providers), or
    /// libcurl (a per-provider `transport: curl`, a proxy, HTTP/1.1 webhooks, the OAuth exchange).
    public var engine: TransportEngine = .nghttp2
    /// A proxy URL for this transport (a provider's `proxy:` key); nil: the environment's
    /// (`HTTPS_PROXY`, `NO_PROXY`…) applies. A transport that goes through a proxy uses libcurl.
    public var proxy: String?

    public init(
        connections: Int = 1,
        streamsPerConnection: Int = 100,
        capacity: Int? = nil,
        caFile: String? = nil,
        maxResponseBodyBytes: Int = 8192,
        capturedHeaderNames: [String] = ["apns-id", "retry-after"],
        maxHeaderValueBytes: Int = 256,
        connectTimeoutMilliseconds: Int = 10_000
    ) {
        self.connections = connections
        self.streamsPerConnection = streamsPerConnection
        self.capacity = capacity ?? 0
        self.caFile = caFile
        self.maxResponseBodyBytes = maxResponseBodyBytes
        self.capturedHeaderNames = capturedHeaderNames
        self.maxHeaderValueBytes = maxHeaderValueBytes
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        if capacity == nil { self.capacity = defaultCapacity }
    }

    /// The engine that really sends: libcurl when asked (the senders fold an environment proxy
    /// into `engine`, `NO_PROXY` included), for HTTP/1.1, or through an explicit proxy.
    var effectiveEngine: TransportEngine {
        engine == .curl || allowsHTTP1 || proxy != nil ? .curl : .nghttp2
    }

    /// Transfers handed to curl at once.
    var maxInFlight: Int {
        let (product, overflow) = connections.multipliedReportingOverflow(by: streamsPerConnection)
        return overflow ? Int.max : product
    }

    /// Twice the concurrency: one window in flight while the consumer handles the previous one.
    private var defaultCapacity: Int {
        let (doubled, overflow) = maxInFlight.multipliedReportingOverflow(by: 2)
        return overflow ? Int.max : doubled
    }

    /// Ranges that keep every later conversion (to C `long`, to array sizes) in bounds.
    func validated() throws(TransportError) -> TransportConfiguration {
        guard SendingLimits.connections.contains(connections) else {
            throw TransportError.invalidConfiguration("connections must be \(SendingLimits.connections), got \(connections)")
        }
        guard SendingLimits.streamsPerConnection.contains(streamsPerConnection) else {
            throw TransportError.invalidConfiguration("streams per connection must be \(SendingLimits.streamsPerConnection), got \(streamsPerConnection)")
        }
        guard capacity >= maxInFlight, capacity <= 10_000_000 else {
            throw TransportError.invalidConfiguration("capacity must be \(maxInFlight)...10000000 (at least connections × streams), got \(capacity)")
        }
        guard (0...(64 << 20)).contains(maxResponseBodyBytes) else {
            throw TransportError.invalidConfiguration("max response body bytes must be 0...67108864, got \(maxResponseBodyBytes)")
        }
        guard capturedHeaderNames.count <= 16, capturedHeaderNames.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw TransportError.invalidConfiguration("captured header names: at most 16, each 1...64 bytes")
        }
        guard (1...65_536).contains(maxHeaderValueBytes) else {
            throw TransportError.invalidConfiguration("max header value bytes must be 1...65536, got \(maxHeaderValueBytes)")
        }
        guard pinnedAddresses.count <= 16, pinnedAddresses.allSatisfy({ $0.utf8.count <= 1024 && !TransportHeaderLines.holdsControl($0.utf8) }) else {
            throw TransportError.invalidConfiguration("pinned addresses: at most 16 entries of at most 1024 bytes, no control characters")
        }
        // The pipeline reader checks a `proxy:` key's shape; a transport built in code gets the
        // same bound before the string reaches libcurl.
        if let proxy, proxy.isEmpty || proxy.utf8.count > 1024 || proxy.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) {
            throw TransportError.invalidConfiguration("proxy: 1...1024 bytes without spaces or control characters")
        }
        guard (0...600_000).contains(connectTimeoutMilliseconds) else {
            throw TransportError.invalidConfiguration("connect timeout must be 0...600000 ms, got \(connectTimeoutMilliseconds)")
        }
        return self
    }
}
