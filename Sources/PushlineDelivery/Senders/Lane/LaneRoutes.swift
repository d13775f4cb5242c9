import PushlineCore

/// A provider's routes, compiled once per lane: the URL before and after the target (with the
/// configured `endpoint` in place of the route's origin) and the constant header lines. Turns
/// an `OutgoingRequest` into a `TransportRequest` without copying its body.
struct LaneRoutes: Sendable {
    struct Route: Sendable {
        var shape: RouteURL.Shape
        /// `origin + pathBeforeTarget`.
        var prefix: String
        var suffix: String
        /// The route's constant lines, checked and made C strings once for all its requests.
        var headers: TransportHeaderLines
        /// The URL or a constant header holds CR, LF or NUL, or the URL is too long: the
        /// transport would refuse every batch holding one of its requests, so none is built.
        var isMalformed: Bool
    }

    /// Indexed by `RouteID`; nil for routes of other providers.
    private let routes: [Route?]
    /// The last credential's `authorization` line, made once for all the requests it signs.
    private var authorization: TransportHeaderLines?

    /// What the transport accepts: a URL of at most 8192 bytes (a target of at most 4096 is
    /// added), no CR, LF or NUL in it or in a header line.
    private static func malformed(prefix: String, suffix: String, headers: TransportHeaderLines) -> Bool {
        prefix.utf8.count + suffix.utf8.count > 4096 || TransportHeaderLines.holdsControl(prefix.utf8)
            || TransportHeaderLines.holdsControl(suffix.utf8) || headers.problem != nil
    }

    /// `endpoint` replaces every route's origin when set (already checked: `https://host[:port]`).
    init(table: RouteTable, provider: Provider, endpoint: String?) {
        routes = table.routes.map { route -> Route? in
            guard route.provider == provider else { return nil }
            let origin = endpoint ?? route.url.origin
            let prefix = origin + route.url.pathBeforeTarget
            let headers = TransportHeaderLines(route.constantHeaderLines)
            return Route(
                shape: route.url.shape, prefix: prefix, suffix: route.url.pathAfterTarget, headers: headers,
                isMalformed: Self.malformed(prefix: prefix, suffix: route.url.pathAfterTarget, headers: headers)
            )
        }
    }

    enum Built {
        case request(TransportRequest)
        /// Not sendable as it is: settle it failed with this reason, without sending.
        case unsendable(reason: String)
    }

    /// The shared `authorization` line for `line`: the last one made while the credential is
    /// the same (one per credential, not one per request).
    mutating func authorizationLines(_ line: String) -> TransportHeaderLines {
        if let authorization, authorization.lines.first == line { return authorization }
        let made = TransportHeaderLines([line])
        authorization = made
        return made
    }

    /// The transport request for `request`, with `authorization` as the last header line. Its
    /// URL, target and header items point into `request.bytes`; nothing is copied.
    func build(_ request: OutgoingRequest, slot: UInt64, authorization: TransportHeaderLines, timeoutMilliseconds: Int) -> Built {
        let entry = request.entry
        guard entry.route.index < routes.count, let route = routes[entry.route.index] else {
            return .unsendable(reason: LaneFailureReason.noRoute)
        }
        guard !route.isMalformed else { return .unsendable(reason: LaneFailureReason.badHeader) }
        let bytes = request.bytes
        var target = UnsafeRawBufferPointer(start: nil, count: 0)
        switch route.shape {
        case .fixed:
            break
        case .targetInPath:
            target = bytes[entry.target]
            guard !target.isEmpty, target.count <= 4096, Self.isPathSafe(target) else {
                return .unsendable(reason: LaneFailureReason.badTarget)
            }
        case .target:
            // Web Push: the subscription endpoint is the whole URL (the router checked it:
            // https, printable ASCII without quotes or backslashes, at most 2048 bytes).
            guard request.entry.flags.isDisjoint(with: .unsealed) else {
                return .unsendable(reason: LaneFailureReason.invalidSubscriptionKey)
            }
            target = bytes[entry.target]
            guard !target.isEmpty, target.count <= 4096, !TransportHeaderLines.holdsControl(target) else {
                return .unsendable(reason: LaneFailureReason.badTarget)
            }
        }
        let items = entry.headers.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : bytes[entry.headers]
        let built = TransportRequest(
            slot: slot, method: .post, urlPrefix: route.prefix, urlTarget: target, urlSuffix: route.suffix,
            headers: route.headers, headerItems: items, lastHeaders: authorization,
            body: bytes[entry.body], bodyOwner: bytes, timeoutMilliseconds: timeoutMilliseconds
        )
        guard authorization.problem == nil, items.isEmpty || !built.headerItemsMeasure.holdsControl else {
            return .unsendable(reason: LaneFailureReason.badHeader)
        }
        return .request(built)
    }

    /// The unreserved characters below as bit masks: bytes 0–63 and 64–127.
    private static let pathSafeLow: UInt64 = (1 << 45) | (1 << 46) | (0x3FF << 48)
    private static let pathSafeHigh: UInt64 = (0x3FFFFFF << 1) | (1 << 31) | (0x3FFFFFF << 33) | (1 << 62)

    /// Whether every byte of `bytes` is `isPathSafe`: a mask test per byte with no branch, as
    /// every request's target goes through it (a byte-by-byte `switch` was the most of
    /// building a request).
    static func isPathSafe(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var unsafe: UInt64 = 0
        for byte in bytes {
            let value = UInt64(byte)
            let mask = value < 64 ? pathSafeLow : pathSafeHigh
            unsafe |= (value >> 7) | (~(mask >> (value & 63)) & 1)
        }
        return unsafe == 0
    }

    /// RFC 3986 unreserved characters: a target that needs no escaping in a path (APNs tokens
    /// are hex; ADM registration ids are letters, digits, `-`, `.`, `_`).
    static func isPathSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

/// The `endpoint` setting: `https://host[:port]`, nothing after the authority.
enum EndpointCheck {
    static func problem(_ endpoint: String) -> String? {
        let lower = endpoint.lowercased()
        guard lower.hasPrefix("https://") else { return "must start with https://" }
        let authority = endpoint.dropFirst(8)
        guard !authority.isEmpty else { return "has no host" }
        guard authority.utf8.count <= 255 else { return "is longer than 263 bytes" }
        guard authority.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "@") && $0 != UInt8(ascii: "\\") })
        else { return "must be an origin (https://host[:port]) with no path, query, user or spaces" }
        return nil
    }
}
