/// What a `HostileHTTP2Server` does wrong, as a hostile network or a misbehaving provider would.
///
/// Per request, the first of `rules` that matches its path, its arrival and its connection says
/// how it is answered (`HostileRule`). Otherwise, per path, on every connection:
/// - `/empty…`: 200 with no body (as APNs answers), the HEADERS frame ending the stream;
/// - `/silent…`: never answered;
/// - `/refuse/N/…`: RST_STREAM REFUSED_STREAM for the first N arrivals of that exact path, then
///   200 (a request the server provably did not process, N times);
/// - anything else: 200 with `{}`.
///
/// Per connection, on the first `hostileConnections` ones: `fault`. Server-wide: `outage`.
public struct HostilePlan: Sendable {
    public enum ConnectionFault: Sendable, Equatable {
        case none
        /// Once `streams` requests have arrived: answer the `answered` lowest stream ids, then
        /// close the TCP connection with the others open.
        case dropAfter(streams: Int, answered: Int)
        /// Once `streams` requests have arrived: answer the `answered` lowest stream ids, then
        /// keep reading for `quietMilliseconds` without answering anything (the requests a
        /// client writes into the streams those answers freed arrive and are counted, pending),
        /// then close the TCP connection with every other stream open. Unlike `dropAfter`, the
        /// server has read every request the client wrote before the drop, so what a client
        /// reports sending can be held exactly against what arrived.
        case dropAfterReading(streams: Int, answered: Int, quietMilliseconds: Int)
        /// Once `streams` requests have arrived: GOAWAY with the `answered`-th lowest stream id as
        /// last-stream-id, then answer the streams up to it. The streams above it are never
        /// processed (the client may resend them); the connection stays open for the client to
        /// close.
        case goaway(streams: Int, answered: Int)
        /// Once `streams` requests have arrived: answer the `answered` lowest, then answer the
        /// next with a 100 KB response header (beyond nghttp2's 64 KB per field: the client
        /// fails the whole connection with COMPRESSION_ERROR), then answer the rest 200 (answers
        /// the client never reads: `HostileAnswer.afterBrokenConnection`).
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
    /// Per-request answers, by path (prefix or token), arrival and connection: the first match
    /// wins over the path conventions above. A collecting fault still decides when a request is
    /// answered; a rule decides how.
    public var rules: [HostileRule]
    /// A provider-wide outage: while it lasts it overrides `rules`, `fault` and the paths.
    public var outage: HostileOutage?
    /// When the client sends GOAWAY with an error code (it failed the connection: a header
    /// block it could not decode), the server closes the connection, as real servers do. False:
    /// it ignores the GOAWAY and keeps the connection open forever, so a client that waits for
    /// the server to close a session it ended itself hangs.
    public var closesOnClientError = true

    public init(
        fault: ConnectionFault = .none, hostileConnections: Int = 1, maxConcurrentStreams: Int = 100, warmUp: Int = 0,
        rules: [HostileRule] = [], outage: HostileOutage? = nil
    ) {
        self.fault = fault
        self.warmUp = warmUp
        self.hostileConnections = hostileConnections
        self.maxConcurrentStreams = maxConcurrentStreams
        self.rules = rules
        self.outage = outage
    }
}

/// How the requests a rule matches are answered, and which ones it matches.
public struct HostileRule: Sendable, Equatable {
    public enum Match: Sendable, Equatable {
        /// Every request.
        case any
        /// Paths that start with this.
        case prefix(String)
        /// Paths that end with one of these (an APNs path ends with its device token).
        case tokens(Set<String>)
    }

    public enum Action: Sendable, Equatable {
        /// This status; a 2xx with `{}`, any other with an APNs-style `{"reason":…}` body, and a
        /// `retry-after` header holding exactly `retryAfter`'s bytes when given (control bytes
        /// included: RFC 9113 forbids only NUL, CR and LF in a field value, so a client must
        /// read such an answer and may only ignore the header).
        case status(Int, retryAfter: String? = nil)
        /// 200 with one header whose value is `valueBytes` bytes long (100,000: beyond nghttp2's
        /// 64 KB per field), in HEADERS + CONTINUATION frames: HPACK cannot decode it, a
        /// connection error (RFC 9113 §4.3), so the client loses every stream of the connection.
        /// The server answers nothing more on it (the client reads nothing after the block, and
        /// a client closing a socket over unread bytes resets the connection, which could lose
        /// requests it wrote before): the later requests stay pending.
        case oversizedHeader(valueBytes: Int = 100_000)
        /// 200 with a header `x-malformed` whose value holds `byte` in its middle. NUL, CR or LF
        /// (the default is NUL) make the answer malformed (RFC 9113 §8.2.1): a stream error,
        /// the connection goes on. Another byte is recorded as a readable answer.
        case malformedHeader(byte: UInt8 = 0x00)
        /// 200 with a header list whose size (RFC 9113 §6.5.2: name + value + 32 per field)
        /// passes the client's SETTINGS_MAX_HEADER_LIST_SIZE by 1 KB, in fields of 4 KB (each
        /// decodable). A client that advertised no limit gets one over `fallbackLimit` and must
        /// read it (recorded as a readable 200).
        case headerListOverClientLimit(fallbackLimit: Int = 65_536)
        /// RST_STREAM with this error code once the whole request arrived (2: INTERNAL_ERROR;
        /// 7, REFUSED_STREAM, is `refuse`): the request may have been processed.
        case reset(errorCode: UInt32)
        /// RST_STREAM REFUSED_STREAM: provably not processed.
        case refuse
        /// Never answered.
        case silent
    }

    public var match: Match
    /// Which arrivals of a matching path (1-based, counted per path over every connection):
    /// nil for all. `1...1` hits only the first copy of each request.
    public var arrivals: ClosedRange<Int>?
    /// Which connections (1-based, in the order accepted): nil for all.
    public var connections: ClosedRange<Int>?
    public var action: Action

    public init(_ match: Match, arrivals: ClosedRange<Int>? = nil, connections: ClosedRange<Int>? = nil, _ action: Action) {
        self.match = match
        self.arrivals = arrivals
        self.connections = connections
        self.action = action
    }

    func matches(path: String, arrival: Int, connection: Int) -> Bool {
        if let arrivals, !arrivals.contains(arrival) { return false }
        if let connections, !connections.contains(connection) { return false }
        switch match {
        case .any:
            return true
        case .prefix(let prefix):
            return path.hasPrefix(prefix)
        case .tokens(let tokens):
            guard let slash = path.lastIndex(of: "/") else { return tokens.contains(path) }
            return tokens.contains(String(path[path.index(after: slash)...]))
        }
    }
}

/// A provider-wide outage: once the server has answered `afterAnswers` requests with a 2xx, for
/// `duration`:
/// - `status` (e.g. 503, with `retryAfter` when given): the open connections stay and every
///   request on them is answered with it; nil: nothing is answered, and every open connection
///   is dropped a second after the start (the requests written before the client could know are
///   read and counted first);
/// - `refusesConnections`: the listening socket is closed (a client's connect gets
///   ECONNREFUSED); without it, connections are accepted, and with `status` nil dropped at once.
/// Then the server recovers: the listener is bound again on the same port, and answers are the
/// plan's again.
public struct HostileOutage: Sendable, Equatable {
    public var afterAnswers: Int
    public var duration: Duration
    public var status: Int?
    public var retryAfter: String?
    public var refusesConnections: Bool

    public init(afterAnswers: Int, duration: Duration, status: Int? = 503, retryAfter: String? = nil, refusesConnections: Bool = false) {
        self.afterAnswers = afterAnswers
        self.duration = duration
        self.status = status
        self.retryAfter = retryAfter
        self.refusesConnections = refusesConnections
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
    /// What the server sent for each arrival of each path, in order of arrival (the same
    /// indices as `arrivalsByPath`), in more detail: the status, a reset's code, an answer the
    /// client cannot read.
    public var answersByPath: [String: [HostileAnswer]] = [:]
    /// Requests received while an outage lasted.
    public var receivedDuringOutage = 0
    /// Connections the outage dropped (open at its start, or accepted during it).
    public var connectionsDroppedByOutage = 0
    /// The outage started / ended (the listener is bound again, answers are back).
    public var outageStarted = false
    public var outageEnded = false

    public init() {}
}

/// What the server did with one received request.
public enum HostileArrival: Sendable, Equatable {
    /// Not answered (yet): a silent path, a dropped connection, a fault still collecting, or a
    /// stream reset with a code other than REFUSED_STREAM (`HostileAnswer` tells which).
    case pending
    /// Answered with a status (any: a 503 too), whether or not the client could read it.
    case answered
    /// Refused (RST_STREAM REFUSED_STREAM, or above a GOAWAY's last-stream-id): not processed.
    case refused
}

/// What the server sent for one received request.
public enum HostileAnswer: Sendable, Equatable {
    /// Nothing (yet): the client cannot know whether it was processed.
    case none
    /// A well-formed answer with this status on a connection the client could still read.
    case status(Int)
    /// RST_STREAM REFUSED_STREAM, or above a GOAWAY's last-stream-id: provably not processed.
    case refused
    /// RST_STREAM with this code (not REFUSED_STREAM) after the request arrived: it may have
    /// been processed.
    case reset(errorCode: UInt32)
    /// A 200 whose header block the client must not accept: processed, its answer unreadable.
    case unreadable(HostileHeaderFault)
    /// An answer written after a header block that breaks the connection (HPACK) on the same
    /// connection: processed, never read by the client.
    case afterBrokenConnection(status: Int)

    /// The server processed the request, or a client cannot know that it did not: a copy that
    /// counts towards a possible duplicate. Not: refused, or answered with a non-2xx status
    /// the client could read (a definite "not delivered").
    public var mayHaveBeenProcessed: Bool {
        switch self {
        case .none, .reset, .unreadable: true
        case .status(let status), .afterBrokenConnection(let status): (200..<300).contains(status)
        case .refused: false
        }
    }

    /// A 2xx answer the client could read: the device was delivered and the client knows it.
    public var isReadableSuccess: Bool {
        if case .status(let status) = self { return (200..<300).contains(status) }
        return false
    }

    var arrival: HostileArrival {
        switch self {
        case .none, .reset: .pending
        case .status, .unreadable, .afterBrokenConnection: .answered
        case .refused: .refused
        }
    }
}

/// Why a client cannot accept an answer's header block.
public enum HostileHeaderFault: Sendable, Equatable {
    /// One field beyond what HPACK decodes (the connection dies with it).
    case oversizedField
    /// A field value holding NUL, CR or LF (the stream alone is malformed).
    case malformedValue
    /// A header list over the client's SETTINGS_MAX_HEADER_LIST_SIZE.
    case overHeaderListSize
}
