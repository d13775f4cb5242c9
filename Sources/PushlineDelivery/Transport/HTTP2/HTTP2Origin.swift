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

    /// Parses `https://authority/…`: the origin's parts and where the path starts in `url`.
    static func parse(_ url: Substring.UTF8View) -> (host: String, port: Int, authority: [UInt8], pathStart: Int)? {
        let scheme = "https://".utf8
        guard url.count > scheme.count, url.prefix(scheme.count).elementsEqual(scheme, by: { Self.fold($0) == $1 }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = Array(rest[..<authorityEnd])
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
