/// One `https://host:port` the engine sends to: its connections and the requests waiting for a
/// stream on one of them.
final class HTTP2Origin {
    /// The host as the URL wrote it, lower-cased, without brackets (SNI and verification use it).
    let host: String
    let port: Int
    /// `:authority` as the URL wrote it (`host[:port]`).
    let authority: [UInt8]
    var authorityText: String { String(decoding: authority, as: UTF8.self) }

    var connections: [HTTP2Connection] = []
    /// Requests waiting for room on a connection, in order (entries that ended meanwhile are
    /// skipped when they come up).
    var pending = FIFOQueue<HTTP2Stream>()
    /// A lookup of `host` is running.
    var resolving = false

    /// `authority` where the `:authority` field points.
    let authorityStorage: UnsafeMutablePointer<UInt8>

    init(host: String, port: Int, authority: [UInt8]) {
        self.host = host
        self.port = port
        self.authority = authority
        authorityStorage = .allocate(capacity: Swift.max(authority.count, 1))
        authorityStorage.initialize(from: authority, count: authority.count)
    }

    deinit { authorityStorage.deallocate() }

    /// Parses `https://authority/…`: the origin's parts and where the path starts in `url`;
    /// nil when the authority does not end inside `url` (with `needsPathStart`) or is malformed.
    static func parse(_ url: [UInt8], needsPathStart: Bool) -> (host: String, port: Int, authority: [UInt8], pathStart: Int)? {
        let scheme = Array("https://".utf8)
        guard url.count > scheme.count, zip(url.prefix(scheme.count), scheme).allSatisfy({ Self.fold($0) == $1 }) else { return nil }
        let rest = url[scheme.count...]
        let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
        if needsPathStart, end == nil { return nil }
        let authority = Array(rest[..<(end ?? rest.endIndex)])
        guard !authority.isEmpty, authority.count <= 300, !authority.contains(UInt8(ascii: "@")) else { return nil }
        var hostBytes = authority[...]
        var port = 443
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostBytes = authority[1..<close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":"), let value = Int(String(decoding: after.dropFirst(), as: UTF8.self)) else { return nil }
                port = value
            }
        } else if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            hostBytes = authority[..<colon]
            guard let value = Int(String(decoding: authority[(colon + 1)...], as: UTF8.self)) else { return nil }
            port = value
        }
        guard !hostBytes.isEmpty, (1...65_535).contains(port) else { return nil }
        let host = String(decoding: hostBytes.map(Self.fold), as: UTF8.self)
        return (host, port, authority, scheme.count + authority.count)
    }

    private static func fold(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
