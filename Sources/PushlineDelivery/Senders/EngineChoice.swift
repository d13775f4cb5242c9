#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which engine sends a provider's requests, and why (docs/delivery.md, "Choosing the engine").
///
/// nghttp2 is the default for the HTTP/2 providers; libcurl sends whatever goes through a proxy
/// (the nghttp2 engine speaks to the provider's host directly, never through a proxy): a
/// provider's `proxy:` key, or the environment's `https_proxy` / `all_proxy` when `no_proxy`
/// does not exempt the provider's host. A provider's `transport: curl` asks for libcurl anyway.
/// Pure: the environment is read once by the caller (`ProxyVariables`) and passed in.
public struct EngineChoice: Sendable, Equatable, CustomStringConvertible {
    /// Why libcurl sends instead of nghttp2.
    public enum Reason: Sendable, Equatable {
        /// The provider's `proxy:` key; the proxy shown without user info.
        case proxyKey(proxy: String)
        /// The provider's `transport: curl`.
        case transportKey
        /// A proxy variable of the environment applies to the provider's host: the variable's
        /// name, its proxy shown without user info, and the `no_proxy` variable that did not
        /// exempt the host (nil when none is set).
        case environment(variable: String, proxy: String, noProxyVariable: String?)
        /// The provider may answer over HTTP/1.1, which the nghttp2 engine does not speak: ADM,
        /// whose documented request is HTTP/1.1 (docs/delivery.md, "Amazon Device Messaging").
        case acceptsHTTP1
    }

    public var engine: TransportEngine
    /// Nil for nghttp2.
    public var reason: Reason?

    public init(engine: TransportEngine, reason: Reason?) {
        self.engine = engine
        self.reason = reason
    }

    public static let nghttp2 = EngineChoice(engine: .nghttp2, reason: nil)

    /// The engine for requests to `host:port`, given the provider's `transport:` and `proxy:`
    /// keys (`proxy` as the pipeline gives it, already checked) and the environment's proxy
    /// variables. An explicit `proxy:` ignores the environment's variables, `no_proxy` included:
    /// it is this provider's own setting.
    public static func decide(transport: TransportEngine, proxy: String?, host: String, port: Int, variables: ProxyVariables) -> EngineChoice {
        if let proxy { return EngineChoice(engine: .curl, reason: .proxyKey(proxy: ProxyVariables.shown(proxy))) }
        if transport == .curl { return EngineChoice(engine: .curl, reason: .transportKey) }
        if let applying = variables.proxyApplying(host: host, port: port) {
            return EngineChoice(engine: .curl, reason: .environment(
                variable: applying.name, proxy: ProxyVariables.shown(applying.value), noProxyVariable: variables.noProxy?.name
            ))
        }
        return .nghttp2
    }

    /// `decide` for the request origin `https://host[:port]` (an APNs, FCM or ADM origin, an
    /// emulator's `endpoint`, a push service's origin). An origin that does not parse is decided
    /// as if no `no_proxy` entry could exempt it.
    public static func decide(transport: TransportEngine, proxy: String?, origin: String, variables: ProxyVariables) -> EngineChoice {
        switch WebPushOrigin.parse(Array(origin.utf8)) {
        case .success(let parsed): decide(transport: transport, proxy: proxy, host: parsed.host, port: parsed.port, variables: variables)
        case .failure: decide(transport: transport, proxy: proxy, host: "", port: 443, variables: variables)
        }
    }

    /// `nghttp2`, or `libcurl (why)`: what `validate` and the run's start say for a provider.
    public var description: String {
        switch reason {
        case nil: engine == .curl ? "libcurl" : "nghttp2"
        case .proxyKey(let proxy)?: "libcurl through the proxy \(proxy) (proxy:)"
        case .transportKey?: "libcurl (transport: curl)"
        case .environment(let variable, let proxy, _)?: "libcurl through the proxy \(proxy) (\(variable))"
        case .acceptsHTTP1?: "libcurl (HTTP/2, or HTTP/1.1 when the endpoint offers nothing better)"
        }
    }

    /// The start-up line of a provider that falls back to libcurl (nil for nghttp2): which
    /// engine, and why, naming the key or the variable to change. `what`: `apns`,
    /// `webpush https://push.example.net`…
    public func notice(for what: String, host: String?) -> String? {
        switch reason {
        case nil, .acceptsHTTP1?:
            // Not a fallback: the provider's own engine (its validate and start lines name it).
            return nil
        case .proxyKey(let proxy)?:
            return "\(what): sends with libcurl, not nghttp2: its proxy: key sends through \(proxy)"
        case .transportKey?:
            return "\(what): sends with libcurl, not nghttp2: its transport: key is curl"
        case .environment(let variable, let proxy, let noProxy)?:
            let exemption = noProxy.map { "\($0) does not exempt \(host ?? "its host")" } ?? "no_proxy is not set"
            return "\(what): sends with libcurl, not nghttp2: \(variable) sends it through the proxy \(proxy) and \(exemption) (add the host to no_proxy to send directly with nghttp2)"
        }
    }
}

/// The environment's proxy variables for an `https://` URL, with the names they came from: the
/// same lookup as the libcurl transport's (`ProxyEnvironment`): the first of `https_proxy`,
/// `HTTPS_PROXY`, `all_proxy`, `ALL_PROXY` present wins, and the first of `no_proxy`, `NO_PROXY`,
/// even when empty (an empty value means no proxy, and stops the lookup).
public struct ProxyVariables: Sendable, Equatable {
    public struct Variable: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// The proxy variable found first; its value may be empty (no proxy).
    public var proxy: Variable?
    /// The exemptions variable found first.
    public var noProxy: Variable?

    public static let proxyNames = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    public static let noProxyNames = ["no_proxy", "NO_PROXY"]

    /// None: no proxy applies.
    public init() {}

    public init(environment: [String: String]) {
        func first(_ names: [String]) -> Variable? {
            for name in names { if let value = environment[name] { return Variable(name: name, value: value) } }
            return nil
        }
        proxy = first(Self.proxyNames)
        noProxy = first(Self.noProxyNames)
    }

    /// The proxy variable that applies to `host:port` (set, not empty, and `no_proxy` does not
    /// exempt the host), or nil: the host is reached directly.
    public func proxyApplying(host: String, port: Int) -> Variable? {
        guard let proxy, !proxy.value.isEmpty else { return nil }
        if let noProxy, NoProxyList(noProxy.value).exempts(host: host, port: port) { return nil }
        return proxy
    }

    /// Whether some hosts (not all) may be exempted: a Web Push run decides per push service.
    public var dependsOnHost: Bool {
        guard let proxy, !proxy.value.isEmpty, let noProxy else { return false }
        let list = NoProxyList(noProxy.value)
        return !list.isEmpty && !list.exemptsAll
    }

    /// A proxy URL as logs and summaries show it: scheme, host and port, without user info (a
    /// password) or path, printable ASCII only, at most 200 bytes.
    public static func shown(_ proxy: String) -> String {
        var bytes = Array(proxy.utf8)
        var prefix: [UInt8] = []
        if let separator = Self.index(of: Array("://".utf8), in: bytes) {
            prefix = Array(bytes[..<(separator + 3)])
            bytes = Array(bytes[(separator + 3)...])
        }
        if let end = bytes.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            bytes = Array(bytes[..<end])
        }
        if let at = bytes.lastIndex(of: UInt8(ascii: "@")) { bytes = Array(bytes[(at + 1)...]) }
        var out = ""
        for byte in (prefix + bytes).prefix(200) {
            out.unicodeScalars.append((0x21..<0x7F).contains(byte) ? Unicode.Scalar(byte) : "?")
        }
        return out
    }

    private static func index(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// A `no_proxy` value: the hosts reached without the proxy.
///
/// Entries are separated by commas or blanks and compared without case. Each libcurl
/// exemption is one here too (so a host this list does not exempt goes through the proxy with
/// libcurl as well), plus the common extensions libcurl lacks:
/// - `*` alone exempts every host; so does a `*` entry in a list (libcurl: only the whole value);
/// - `example.com` exempts `example.com` and every name under it (`api.example.com`), not
///   `badexample.com`; a leading `.` or `*.` is ignored (`.example.com` exempts `example.com`
///   too, as in libcurl); trailing dots are ignored on both sides;
/// - `example.com:8443` exempts that host on port 8443 only (the libcurl we link never matches
///   an entry with a port); `[::1]:443` likewise for an IPv6 address;
/// - an IP address matches an address host exactly, and `10.0.0.0/8`, `fd00::/8` by prefix;
///   names are never resolved.
public struct NoProxyList: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        /// Lowercased, without leading `.`/`*.`, trailing `.` or brackets.
        var host: String
        var port: Int?
        /// An address with a prefix length (`10.0.0.0/8`): the bits compared.
        var prefixBits: Int?
    }

    let entries: [Entry]
    public let exemptsAll: Bool

    public var isEmpty: Bool { entries.isEmpty && !exemptsAll }

    /// Values longer than this are read up to it (an environment is not a place for megabytes).
    static let maxBytes = 64 << 10

    public init(_ text: String) {
        var entries: [Entry] = []
        var all = false
        let bytes = Array(text.utf8.prefix(Self.maxBytes))
        for token in bytes.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == 0x20 || $0 == 0x09 }) {
            if token.elementsEqual("*".utf8) {
                all = true
                continue
            }
            if let entry = Self.entry(token) { entries.append(entry) }
        }
        self.entries = entries
        exemptsAll = all
    }

    /// One entry; nil when it can match nothing (an empty host, a bad port).
    static func entry(_ token: ArraySlice<UInt8>) -> Entry? {
        var host = token
        var portText: ArraySlice<UInt8>?
        if host.first == UInt8(ascii: "[") {
            // `[v6]`, `[v6]:port`, `[v6]/bits`.
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let after = host[(close + 1)...]
            host = host[(host.startIndex + 1)..<close]
            if after.first == UInt8(ascii: ":") {
                portText = after.dropFirst()
            } else if after.first == UInt8(ascii: "/") {
                host = token[(token.startIndex + 1)..<close] + after
            } else if !after.isEmpty {
                return nil
            }
        } else if host.filter({ $0 == UInt8(ascii: ":") }).count == 1, let colon = host.firstIndex(of: UInt8(ascii: ":")) {
            // `name:port`, `1.2.3.4:port`; more than one colon is an IPv6 address.
            portText = host[(colon + 1)...]
            host = host[..<colon]
        }
        var port: Int?
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            let number = portText.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard (1...65_535).contains(number) else { return nil }
            port = number
        }
        var prefixBits: Int?
        if let slash = host.firstIndex(of: UInt8(ascii: "/")) {
            let bits = host[(slash + 1)...]
            guard (1...3).contains(bits.count), bits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            prefixBits = bits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            host = host[..<slash]
        }
        if host.starts(with: "*.".utf8) {
            host = host.dropFirst(2)
        } else if host.first == UInt8(ascii: ".") {
            host = host.dropFirst()
        }
        while host.last == UInt8(ascii: ".") { host = host.dropLast() }
        guard !host.isEmpty else { return nil }
        let text = String(decoding: host.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        if let prefixBits {
            // A prefix length only means something after an address, and within its size.
            guard let address = IPAddressBytes(text), prefixBits <= address.bytes.count * 8 else { return nil }
        }
        return Entry(host: text, port: port, prefixBits: prefixBits)
    }

    /// Whether requests to `host:port` skip the proxy. `host`: a name, or an IP address (an
    /// IPv6 one with or without brackets).
    public func exempts(host: String, port: Int) -> Bool {
        if exemptsAll { return true }
        var name = Substring(host.lowercased())
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        while name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty else { return false }
        let address = IPAddressBytes(String(name))
        for entry in entries {
            if let wanted = entry.port, wanted != port { continue }
            if let address {
                guard let entryAddress = IPAddressBytes(entry.host), entryAddress.bytes.count == address.bytes.count else { continue }
                if address.matches(entryAddress, bits: entry.prefixBits ?? address.bytes.count * 8) { return true }
            } else if entry.prefixBits == nil {
                if name == entry.host { return true }
                // `api.example.com` under `example.com`: a whole label, not `badexample.com`.
                if name.utf8.count > entry.host.utf8.count, name.hasSuffix("." + entry.host) { return true }
            }
        }
        return false
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address parsed with `inet_pton`, libcurl's parser.
struct IPAddressBytes: Equatable {
    let bytes: [UInt8]

    init?(_ text: String) {
        if text.contains(":") {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, text, &raw) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        } else {
            var raw = in_addr()
            guard inet_pton(AF_INET, text, &raw) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        }
    }

    /// The first `bits` bits equal.
    func matches(_ other: IPAddressBytes, bits: Int) -> Bool {
        guard other.bytes.count == bytes.count else { return false }
        var left = min(max(bits, 0), bytes.count * 8)
        for i in bytes.indices where left > 0 {
            let take = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if bytes[i] & mask != other.bytes[i] & mask { return false }
            left -= take
        }
        return true
    }
}
