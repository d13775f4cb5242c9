#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The push service a subscription endpoint belongs to: `https://host[:port]`, the unit a Web
/// Push lane (connections, rate, VAPID `aud`) is kept per. Parsed from the endpoint's bytes with
/// no URL library: only what RFC 3986 allows in an https authority is taken.
public struct WebPushOrigin: Sendable, Hashable, CustomStringConvertible {
    /// Lowercase host: a name, a dotted IPv4 address, or an IPv6 address without brackets.
    public let host: String
    public let port: Int
    public let isIPv6Literal: Bool

    /// `https://host` (port 443 left out, as browsers and push services write origins).
    public var description: String {
        let shownHost = isIPv6Literal ? "[\(host)]" : host
        return port == 443 ? "https://\(shownHost)" : "https://\(shownHost):\(port)"
    }

    /// Why an endpoint is refused before anything is sent to it.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notHTTPS
        case userInfo
        case badHost
        case badPort
        case privateAddress(String)

        public var description: String {
            switch self {
            case .notHTTPS: "the endpoint is not an https:// URL"
            case .userInfo: "the endpoint holds user information (user@host), which push services never issue"
            case .badHost: "the endpoint's host is not a host name or an IP address"
            case .badPort: "the endpoint's port is not 1 to 65535"
            case .privateAddress(let address): "the endpoint's host is a private, loopback or link-local address (\(address)); set providers.webpush.allow_private_endpoints to send there"
            }
        }
    }

    /// The origin of `endpoint` (already checked by the router: https, printable ASCII).
    public static func parse(_ endpoint: some Collection<UInt8>) -> Result<WebPushOrigin, Problem> {
        let bytes = Array(endpoint.prefix(2048))
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ lower($0) == $1 }) else { return .failure(.notHTTPS) }
        let rest = bytes[scheme.count...]
        let end = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        let authority = Array(rest[rest.startIndex..<end])
        guard !authority.contains(UInt8(ascii: "@")) else { return .failure(.userInfo) }
        var host: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8>?
        var v6 = false
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.badHost) }
            host = authority[1..<close]
            v6 = true
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return .failure(.badHost) }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return .failure(.badHost) }
        } else {
            if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
                host = authority[..<colon]
                portText = authority[(colon + 1)...]
            } else {
                host = authority[...]
            }
            guard (1...253).contains(host.count),
                  host.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else { return .failure(.badHost) }
        }
        var port = 443
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ (0x30...0x39).contains($0) }) else { return .failure(.badPort) }
            port = portText.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard (1...65_535).contains(port) else { return .failure(.badPort) }
        }
        return .success(WebPushOrigin(host: String(decoding: host.map(lower), as: UTF8.self), port: port, isIPv6Literal: v6))
    }

    /// The origin's addresses when its host is a literal or `localhost`, else nil (a name to
    /// resolve). Parsing with `inet_pton` is the same parser libcurl uses.
    public var literalAddress: IPAddress? {
        if isLocalhostName { return .v4([127, 0, 0, 1]) }
        return IPAddress(parsing: host, v6: isIPv6Literal)
    }

    /// `localhost` and its subdomains: loopback by definition (RFC 6761), never resolved.
    private var isLocalhostName: Bool { host == "localhost" || host.hasSuffix(".localhost") }

    /// Resolves the host (once per origin) and refuses it when any address is private, loopback
    /// or link-local and `allowPrivate` is false. The addresses returned are the ones checked:
    /// the transport connects to exactly them (`CURLOPT_RESOLVE`), so a name cannot resolve to a
    /// checked public address here and to a private one when curl connects.
    public func resolve(allowPrivate: Bool) -> Result<[IPAddress], ResolutionFailure> {
        var addresses: [IPAddress]
        if let literal = literalAddress {
            addresses = [literal]
        } else {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let code = getaddrinfo(host, String(port), &hints, &list)
            guard code == 0, let list else {
                return .failure(.unresolvable("\(host) does not resolve (\(String(cString: gai_strerror(code))))"))
            }
            defer { freeaddrinfo(list) }
            addresses = []
            var node: UnsafeMutablePointer<addrinfo>? = list
            while let current = node, addresses.count < 16 {
                if let address = IPAddress(current.pointee), !addresses.contains(address) { addresses.append(address) }
                node = current.pointee.ai_next
            }
            guard !addresses.isEmpty else { return .failure(.unresolvable("\(host) has no IPv4 or IPv6 address")) }
        }
        if !allowPrivate, let blocked = addresses.first(where: \.isPrivate) {
            return .failure(.refused(.privateAddress(blocked.description)))
        }
        return .success(addresses)
    }

    public enum ResolutionFailure: Error, Sendable, Equatable {
        case unresolvable(String)
        case refused(Problem)
    }

    /// `host:port:address[,address…]`, libcurl's `CURLOPT_RESOLVE` entry pinning the checked
    /// addresses; nil for a literal host (curl does not resolve it).
    public func resolveEntry(_ addresses: [IPAddress]) -> String? {
        // An IP literal is connected to as written; a name (localhost too) is pinned.
        guard isLocalhostName || literalAddress == nil else { return nil }
        let list = addresses.map { $0.isV6 ? "[\($0)]" : $0.description }.joined(separator: ",")
        return "\(host):\(port):\(list)"
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(lower(byte))
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower(byte))
    }
}

/// An IPv4 or IPv6 address, and whether a public push service could be at it.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    init?(parsing text: String, v6: Bool) {
        if v6 {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, text, &raw) == 1 else { return nil }
            self = .v6(withUnsafeBytes(of: &raw) { Array($0) })
        } else {
            // Only the dotted quad: inet_pton refuses the shorthands (`127.1`, `0x7f.1`) that
            // inet_aton and some resolvers take, so those are names, resolved and checked.
            var raw = in_addr()
            guard inet_pton(AF_INET, text, &raw) == 1 else { return nil }
            self = .v4(withUnsafeBytes(of: &raw) { Array($0) })
        }
    }

    init?(_ info: addrinfo) {
        guard let address = info.ai_addr else { return nil }
        switch info.ai_family {
        case AF_INET:
            let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            self = .v4(withUnsafeBytes(of: value) { Array($0) })
        case AF_INET6:
            let value = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            self = .v6(withUnsafeBytes(of: value) { Array($0) })
        default:
            return nil
        }
    }

    var isV6: Bool { if case .v6 = self { true } else { false } }

    /// Loopback, private (RFC 1918, unique local), link-local, shared (CGNAT), unspecified,
    /// multicast, reserved and benchmark ranges: nothing a public push service is at.
    public var isPrivate: Bool {
        switch self {
        case .v4(let b):
            return b[0] == 0 || b[0] == 10 || b[0] == 127 || b[0] >= 224
                || (b[0] == 100 && (64...127).contains(b[1]))
                || (b[0] == 169 && b[1] == 254)
                || (b[0] == 172 && (16...31).contains(b[1]))
                || (b[0] == 192 && b[1] == 168)
                || (b[0] == 192 && b[1] == 0 && b[2] == 0)
                || (b[0] == 198 && (18...19).contains(b[1]))
        case .v6(let b):
            if b[0..<15].allSatisfy({ $0 == 0 }) { return true }  // :: and ::1
            if b[0] & 0xFE == 0xFC { return true }  // fc00::/7 unique local
            if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return true }  // fe80::/10 link-local
            if b[0] == 0xFF { return true }  // multicast
            // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64): the IPv4 address decides.
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return IPAddress.v4(Array(b[12..<16])).isPrivate }
            if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy({ $0 == 0 }) { return IPAddress.v4(Array(b[12..<16])).isPrivate }
            return false
        }
    }

    public var description: String {
        switch self {
        case .v4(let b):
            return b.map(String.init).joined(separator: ".")
        case .v6(var b):
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let written = b.withUnsafeMutableBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) }
            guard written != nil else { return "?" }
            return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
