/// What a `HostileHTTP2Server` does wrong, as a hostile network or a misbehaving provider would.
///
/// Per path, on every connection:
/// - `/empty…`: 200 with no body (as APNs answers), the HEADERS frame ending the stream;
/// - `/silent…`: never answered;
/// - `/refuse/N/…`: RST_STREAM REFUSED_STREAM for the first N arrivals of that exact path, then
///   200 (a request the server provably did not process, N times);
/// - anything else: 200 with `{}`.
///
/// Per connection, on the first `hostileConnections` ones: `fault`.
public struct HostilePlan: Sendable {
    public enum ConnectionFault: Sendable, Equatable {
        case none
        /// Once `streams` requests have arrived: answer the `answered` lowest stream ids, then
        /// close the TCP connection with the others open.
        case dropAfter(streams: Int, answered: Int)
        /// Once `streams` requests have arrived: GOAWAY with the `answered`-th lowest stream id as
        /// last-stream-id, then answer the streams up to it. The streams above it are never
        /// processed (the client may resend them); the connection stays open for the client to
        /// close.
        case goaway(streams: Int, answered: Int)
        /// Once `streams` requests have arrived: answer the `answered` lowest, then answer the
        /// next with a 100 KB response header (beyond nghttp2's 64 KB per field: the client
        /// fails the whole connection with COMPRESSION_ERROR), then answer the rest 200.
        case oversizedHeader(streams: Int, answered: Int)
        /// RST_STREAM REFUSED_STREAM the 1st, (1 + every)th… request of the connection, answer
        /// the others.
        case refuseEvery(Int)
    }

    public var fault: ConnectionFault
    /// How many connections (the first ones accepted) get `fault`; later ones behave.
    public var hostileConnections: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS: with a collecting fault, set it to the fault's `streams`
    /// so the client cannot write a request the server would not read before it acts.
    public var maxConcurrentStreams: Int
    /// The first `warmUp` requests of each hostile connection are answered at once and do not
    /// count towards a collecting fault: a sender that sends one request until it sees an
    /// answer (as a lane warming up does) reaches the fault instead of waiting for it.
    public var warmUp: Int

    public init(fault: ConnectionFault = .none, hostileConnections: Int = 1, maxConcurrentStreams: Int = 100, warmUp: Int = 0) {
        self.fault = fault
        self.warmUp = warmUp
        self.hostileConnections = hostileConnections
        self.maxConcurrentStreams = maxConcurrentStreams
    }
}

/// What the server received: every request whose HEADERS arrived, whatever became of it.
public struct HostileCounts: Sendable, Equatable {
    /// Requests received in total (HEADERS frames opening a stream).
    public var received = 0
    /// Requests received, by `:path`.
    public var receivedByPath: [String: Int] = [:]
    /// Received and provably not processed (`HostileArrival.refused`).
    public var unprocessed = 0
    /// Received and answered with a status (whether or not the client read it).
    public var answered = 0
    public var connections = 0
    /// What became of each arrival of each path, in order of arrival.
    public var arrivalsByPath: [String: [HostileArrival]] = [:]

    public init() {}
}

/// What the server did with one received request.
public enum HostileArrival: Sendable, Equatable {
    /// Not answered (yet): a silent path, a dropped connection, or a fault still collecting.
    case pending
    /// Answered with a status: processed.
    case answered
    /// Refused (RST_STREAM REFUSED_STREAM, or above a GOAWAY's last-stream-id): not processed.
    case refused
}
