/// `providers.<apns|fcm>.endpoint`: an `https://host[:port]` origin that replaces the provider's
/// real host (an emulator, a proxy). The request paths stay the provider's, so a path, query,
/// user info or fragment here is refused rather than silently dropped; one trailing `/` is taken.
public enum ProviderEndpoint {
    /// The origin as senders use it (`https://host[:port]`, scheme lower-cased, no trailing `/`),
    /// or why `text` is not one.
    public static func origin(_ text: String) -> Result<String, Problem> {
        let bytes = Array(text.utf8)
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, bytes.prefix(scheme.count).map(lowercased) == scheme else {
            if text.lowercased().hasPrefix("http://") {
                return .failure(Problem("must be https:// (requests always go over TLS; an emulator serves TLS: trust it with ca_file)"))
            }
            return .failure(Problem("expected an https://host[:port] origin"))
        }
        var authority = bytes[scheme.count...]
        if authority.last == UInt8(ascii: "/") { authority = authority.dropLast() }
        if let bad = authority.first(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return .failure(Problem(bad <= 0x20 || bad >= 0x7F ? "must not hold spaces, control or non-ASCII characters" : "must not hold quotes or backslashes"))
        }
        for (byte, what) in [(UInt8(ascii: "/"), "a path"), (UInt8(ascii: "?"), "a query"), (UInt8(ascii: "#"), "a fragment"), (UInt8(ascii: "@"), "user info")]
        where authority.contains(byte) {
            return .failure(Problem("must be an origin without \(what) (https://host[:port]; the provider's request paths are kept)"))
        }
        var host = authority
        var port: ArraySlice<UInt8> = []
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return .failure(Problem("has an unclosed IPv6 address '['")) }
            let inside = host[(host.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                return .failure(Problem("has an invalid IPv6 address"))
            }
            let rest = host[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { return .failure(Problem("expected ':port' after the IPv6 address")) }
                port = rest.dropFirst()
                if port.isEmpty { return .failure(Problem("has an empty port")) }
            }
            host = host[...close]
        } else {
            if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
                port = host[(colon + 1)...]
                host = host[..<colon]
                if port.isEmpty { return .failure(Problem("has an empty port")) }
            }
            guard !host.isEmpty else { return .failure(Problem("has no host")) }
            guard host.count <= 253, host.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else {
                return .failure(Problem("has an invalid host (letters, digits, '-' and '.', at most 253)"))
            }
        }
        if !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65_535).contains(number)
            else {
                return .failure(Problem("has an invalid port (1 to 65535)"))
            }
        }
        return .success("https://" + String(decoding: authority.map(lowercased), as: UTF8.self))
    }

    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(lowercased(byte))
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lowercased(byte))
    }
}
