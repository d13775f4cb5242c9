import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One socket address, as `connect` takes it.
struct SocketAddress: Sendable {
    let family: Int32
    let bytes: [UInt8]
}

/// Name resolution off the loop: `getaddrinfo` blocks, so each lookup runs on a short-lived
/// thread of its own and posts its result to the loop (a connection is opened rarely: at the
/// start and when a server retires one). Pinned addresses (a Web Push origin's, checked before)
/// are used as they are, without a lookup.
final class AddressResolver: Sendable {
    struct Result: Sendable {
        let host: String
        let port: Int
        let addresses: [SocketAddress]
        /// Why nothing was found, when `addresses` is empty.
        let problem: String
    }

    private let results = Mutex<[Result]>([])
    private let signal: WakeSignal
    /// `host:port` → its pinned addresses.
    private let pinned: [String: [SocketAddress]]

    /// `pinnedAddresses` as `CURLOPT_RESOLVE` writes them: `host:port:address[,address…]`,
    /// IPv6 addresses in brackets.
    init(signal: WakeSignal, pinnedAddresses: [String]) {
        self.signal = signal
        var pinned: [String: [SocketAddress]] = [:]
        for entry in pinnedAddresses {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let port = Int(parts[1]) else { continue }
            var addresses: [SocketAddress] = []
            for literal in parts[2].split(separator: ",") {
                var text = String(literal)
                if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
                addresses += Self.lookup(host: text, port: port, numericOnly: true).addresses
            }
            pinned["\(parts[0].lowercased()):\(port)"] = addresses
        }
        self.pinned = pinned
    }

    /// The pinned addresses of `host:port`, if it is pinned.
    func pinnedAddresses(host: String, port: Int) -> [SocketAddress]? {
        pinned["\(host.lowercased()):\(port)"]
    }

    /// Starts a lookup; its result arrives through `takeResults` after a wake-up.
    func resolve(host: String, port: Int) {
        let thread = Thread { [self] in
            let result = Self.lookup(host: host, port: port, numericOnly: false)
            results.withLock { $0.append(result) }
            signal.signal()
        }
        thread.name = "pushline-resolve"
        thread.start()
    }

    func takeResults() -> [Result] {
        results.withLock { results in
            defer { results.removeAll() }
            return results
        }
    }

    /// IPv6 and IPv4 addresses of `host`, in the order the system prefers.
    static func lookup(host: String, port: Int, numericOnly: Bool) -> Result {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let first = list else {
            let text = code == 0 ? "no address" : String(cString: gai_strerror(code))
            return Result(host: host, port: port, addresses: [], problem: text)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            if let address = current.pointee.ai_addr, current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6 {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen)))
                addresses.append(SocketAddress(family: current.pointee.ai_family, bytes: bytes))
            }
            node = current.pointee.ai_next
        }
        return Result(host: host, port: port, addresses: addresses, problem: addresses.isEmpty ? "no IPv4 or IPv6 address" : "")
    }

    /// Whether `host` is an IP literal (no SNI is sent for one, and it is verified as an IP).
    static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
