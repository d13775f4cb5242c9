/// The OAuth token endpoint of a service account (`token_uri`), checked: `https://` with any
/// host, or `http://` only to a loopback host (`127.0.0.1`, `localhost`, `[::1]`) for a local
/// emulator. Plain HTTP anywhere else would send a signed assertion in the clear.
public struct OAuthTokenEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The whole URI, as written (it is also the assertion's `aud`).
    public let uri: String
    /// The host, without brackets or port (for the transport's host override and CA choice).
    public let host: String
    public let isTLS: Bool

    struct Invalid: Error { let problem: String }

    init(_ uri: String) throws(Invalid) {
        let bytes = Array(uri.utf8)
        guard bytes.count <= 2048 else { throw Invalid(problem: "is longer than 2048 bytes") }
        // Visible ASCII without quotes or backslashes: the URI is written into the JWT's JSON and
        // used as a URL, and neither should need escaping.
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw Invalid(problem: "must be a URL of visible ASCII characters")
        }
        let lower = uri.lowercased()
        let isTLS: Bool
        let rest: Substring
        if lower.hasPrefix("https://") {
            isTLS = true
            rest = uri.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            isTLS = false
            rest = uri.dropFirst(7)
        } else {
            throw Invalid(problem: "must be an https:// URL (found '\(PrintableText.bounded(uri, limit: 80))')")
        }
        guard !rest.contains("#") else { throw Invalid(problem: "must not have a fragment (#)") }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty else { throw Invalid(problem: "has no host") }
        guard !authority.contains("@") else { throw Invalid(problem: "must not hold a user name or password") }

        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw Invalid(problem: "has an unclosed IPv6 address") }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Invalid(problem: "has text after its IPv6 address") }
                port = after.dropFirst()
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw Invalid(problem: "has no host") }
        if let port {
            guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let number = Int(port), (1...65535).contains(number)
            else { throw Invalid(problem: "has an invalid port") }
        }
        let hostName = host.lowercased()
        if !isTLS && !(hostName == "127.0.0.1" || hostName == "localhost" || hostName == "::1") {
            throw Invalid(problem: "must be https:// (plain http:// is accepted only for 127.0.0.1, localhost or [::1], for a local emulator)")
        }
        self.uri = uri
        self.host = hostName
        self.isTLS = isTLS
    }

    public var description: String { uri }
}
