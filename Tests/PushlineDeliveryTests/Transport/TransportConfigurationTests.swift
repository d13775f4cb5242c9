import Foundation
import Testing
@testable import PushlineDelivery
import PushlineCore
import PushlineTestSupport

struct TransportConfigurationTests {
    @Test(arguments: [
        TransportConfiguration(connections: 0),
        TransportConfiguration(connections: 2_000),
        TransportConfiguration(connections: SendingLimits.connections.upperBound + 1),
        TransportConfiguration(streamsPerConnection: 0),
        TransportConfiguration(streamsPerConnection: SendingLimits.streamsPerConnection.upperBound + 1),
        TransportConfiguration(connections: 2, streamsPerConnection: 100, capacity: 199 - 100),
        TransportConfiguration(maxResponseBodyBytes: -1),
        TransportConfiguration(capturedHeaderNames: [""]),
        TransportConfiguration(connectTimeoutMilliseconds: -5),
    ])
    func outOfRangeSettingsAreRefused(configuration: TransportConfiguration) {
        #expect(throws: TransportError.self) { try HTTP2Transport(configuration) }
    }

    @Test("a proxy that is empty, over 1024 bytes, or holds a space, CR, LF or NUL is refused before libcurl sees it", arguments: [
        "", String(repeating: "p", count: 1025), "http://proxy.example:3128\r\nX-Injected: 1", "http://proxy\0.example", "http://a b:1",
    ])
    func malformedProxiesAreRefused(proxy: String) {
        var configuration = TransportConfiguration()
        configuration.proxy = proxy
        #expect(throws: TransportError.self) { try configuration.validated() }
        configuration.proxy = "http://proxy.example:3128"
        #expect(throws: Never.self) { try configuration.validated() }
    }

    @Test("a Web Push URL is matched to the last origin byte for byte (scheme case-folded), else parsed anew")
    func webPushOriginsAreMatchedWithoutParsing() throws {
        let origin = HTTP2Origin(host: "push.example", port: 8443, authority: Array("push.example:8443".utf8))
        func start(_ url: String) -> Int? {
            Array(url.utf8).withUnsafeBytes { NGHTTP2TransferEngine.pathStart(of: $0, ifAt: origin) }
        }
        #expect(start("https://push.example:8443/wpush/v2/abc") == 25)
        #expect(start("HTTPS://push.example:8443?x") == 25)
        // Another port, host, scheme, no path, a longer authority, or a shorter URL: no match.
        #expect(start("https://push.example:8444/a") == nil)
        #expect(start("https://push.example.evil:8443/a") == nil)
        #expect(start("http://push.example:8443/abc") == nil)
        #expect(start("https://push.example:8443") == nil)
        #expect(start("https://push.example:84431/a") == nil)
        #expect(start("https://") == nil)
        #expect(start("") == nil)
    }

    @Test("the largest connections and streams a pipeline may ask for are what the transport accepts")
    func pipelineLimitsAreTheTransports() throws {
        let largest = TransportConfiguration(connections: SendingLimits.connections.upperBound, streamsPerConnection: SendingLimits.streamsPerConnection.upperBound)
        #expect(throws: Never.self) { try largest.validated() }
        let smallest = TransportConfiguration(connections: SendingLimits.connections.lowerBound, streamsPerConnection: SendingLimits.streamsPerConnection.lowerBound)
        #expect(throws: Never.self) { try smallest.validated() }
        #expect(InFlightLimit(connections: 64, streamsPerConnection: 10_000).capacity == largest.maxInFlight)
    }

    @Test func theDefaultCapacityIsTwiceTheConcurrency() {
        #expect(TransportConfiguration(connections: 3, streamsPerConnection: 50).capacity == 300)
    }

    @Test func aMissingOrNonPEMCAFileIsRefusedNamingIt() throws {
        #expect(throws: TransportError.trustAnchors(path: "/nonexistent/ca.pem", problem: "cannot be read")) {
            try HTTP2Transport(TransportConfiguration(caFile: "/nonexistent/ca.pem"))
        }
        let notPEM = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-not-pem-\(UUID().uuidString)")
        try Data("not a certificate".utf8).write(to: notPEM)
        defer { try? FileManager.default.removeItem(at: notPEM) }
        #expect(throws: TransportError.trustAnchors(path: notPEM.path, problem: "holds no PEM certificate")) {
            try HTTP2Transport(TransportConfiguration(caFile: notPEM.path))
        }
    }

    @Test func theCAFileIsAddedToTheSystemBundleNotSubstitutedForIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let system = directory.appendingPathComponent("system.pem")
        let extra = directory.appendingPathComponent("extra.pem")
        try LocalHTTP2Server.makeCertificate(key: directory.appendingPathComponent("k1").path, certificate: system.path, subjectAltName: "DNS:a.example")
        try LocalHTTP2Server.makeCertificate(key: directory.appendingPathComponent("k2").path, certificate: extra.path, subjectAltName: "DNS:b.example")
        let anchors = try TrustAnchors(caFile: extra.path, systemBundlePath: system.path)
        defer { anchors.remove() }
        let combined = try String(contentsOfFile: anchors.bundlePath, encoding: .utf8)
        let systemText = try String(contentsOf: system, encoding: .utf8)
        let extraText = try String(contentsOf: extra, encoding: .utf8)
        #expect(combined == systemText + "\n" + extraText + "\n")
        // stat, not lstat: on Linux the path is the descriptor's link in /proc.
        var status = stat()
        #expect(stat(anchors.bundlePath, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    /// The nghttp2 engine trusts `ca_file` besides the system store, read from a hashed
    /// directory as handshakes need it (OpenSSL's own verification decides here).
    @Test func theNGHTTP2EngineTrustsCAFileBesideAHashedSystemDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-ca-\(UUID().uuidString)")
        let hashed = directory.appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: hashed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let system = directory.appendingPathComponent("system.pem"), extra = directory.appendingPathComponent("extra.pem")
        let stranger = directory.appendingPathComponent("stranger.pem")
        for (name, file) in [("a", system), ("b", extra), ("c", stranger)] {
            try LocalHTTP2Server.makeCertificate(key: directory.appendingPathComponent("\(name).key").path, certificate: file.path, subjectAltName: "DNS:\(name).example", subject: "/CN=pushline-\(name)")
        }
        #expect(!TLSClientContext.hasHashLinks(hashed.path))
        // As c_rehash names it: the subject's hash, ".0".
        let openssl = ChildProcess()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["x509", "-hash", "-noout", "-in", system.path]
        let pipe = Pipe()
        openssl.standardOutput = pipe
        try openssl.run()
        let hash = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(openssl.waitForExit().shellStatus == 0 && hash.count == 8, "openssl x509 -hash: \(hash)")
        try FileManager.default.createSymbolicLink(atPath: hashed.appendingPathComponent("\(hash).0").path, withDestinationPath: system.path)
        #expect(TLSClientContext.hasHashLinks(hashed.path))
        let context = try TLSClientContext(caFile: extra.path, systemDirectory: hashed.path)
        #expect(context.trusts(certificateAt: system.path))
        #expect(context.trusts(certificateAt: extra.path))
        #expect(!context.trusts(certificateAt: stranger.path))
        // Without ca_file only the system store is trusted.
        let plain = try TLSClientContext(caFile: nil, systemDirectory: hashed.path)
        #expect(plain.trusts(certificateAt: system.path) && !plain.trusts(certificateAt: extra.path))
    }

    @Test func theSystemRootsAreReadLazilyOnlyWhereTheHashedDirectoryHoldsThemAll() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-ca-\(UUID().uuidString)")
        let hashed = directory.appendingPathComponent("hashed"), plain = directory.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: hashed, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bundle = directory.appendingPathComponent("bundle.pem"), other = directory.appendingPathComponent("other.pem")
        try Data("bundle".utf8).write(to: bundle)
        try Data("other".utf8).write(to: other)
        try Data().write(to: hashed.appendingPathComponent("5ad8a5d6.0"))
        try Data().write(to: plain.appendingPathComponent("root.pem"))
        let link = directory.appendingPathComponent("link.pem")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: bundle.path)
        func choice(file: URL?, directory: String?, defaultDirectory: URL = hashed) -> String? {
            TLSClientContext.lazySystemDirectory(certFile: file?.path, certDirectory: directory, defaultFile: bundle.path, defaultDirectory: defaultDirectory.path)
        }
        #expect(choice(file: nil, directory: nil) == hashed.path)
        // SSL_CERT_FILE naming the default bundle, even through a link: still lazy.
        #expect(choice(file: link, directory: nil) == hashed.path)
        // Another bundle, a missing one, a list of directories or an unhashed one: loaded whole.
        #expect(choice(file: other, directory: nil) == nil)
        #expect(choice(file: directory.appendingPathComponent("missing.pem"), directory: nil) == nil)
        #expect(choice(file: nil, directory: "\(hashed.path):\(plain.path)") == nil)
        #expect(choice(file: nil, directory: nil, defaultDirectory: plain) == nil)
        #expect(choice(file: nil, directory: plain.path) == nil)
        #expect(choice(file: nil, directory: hashed.path, defaultDirectory: plain) == hashed.path)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt"), "needs Debian's ca-certificates"))
    func debiansSystemDirectoryIsHashedSoRootsAreReadAsNeeded() {
        #expect(TLSClientContext.hasHashLinks("/etc/ssl/certs"))
    }

    /// A run killed with SIGKILL cannot clean up, so on Linux the combined bundle never has a
    /// name: the engines read it through the open descriptor.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs Linux's /proc/self/fd"))
    func theCombinedBundleHasNoNameInTheTemporaryDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let extra = directory.appendingPathComponent("extra.pem")
        try LocalHTTP2Server.makeCertificate(key: directory.appendingPathComponent("k").path, certificate: extra.path, subjectAltName: "DNS:b.example")
        let anchors = try TrustAnchors(caFile: extra.path, systemBundlePath: nil)
        defer { anchors.remove() }
        #expect(anchors.bundlePath.hasPrefix("/proc/self/fd/"))
        #expect(try String(contentsOfFile: anchors.bundlePath, encoding: .utf8) == String(contentsOf: extra, encoding: .utf8) + "\n")
        #expect(leftoverCABundles(of: getpid()).isEmpty)
    }

    @Test func libcurlNamesItsDefaultBundleSoTheSystemRootsStayTrusted() {
        // Debian's libcurl is built with --with-ca-bundle; without it the combined bundle would
        // hold only ca_file (CURLOPT_CAPATH still holds the system roots then).
        #expect(CurlGlobal.defaultCABundlePath != nil)
    }

    @Test(arguments: TransportEngine.allCases)
    func malformedRequestsAreRefusedBeforeAnyIsTaken(engine: TransportEngine) async throws {
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        let good = TransportRequest(slot: 1, url: "https://127.0.0.1:1/x")
        await #expect(throws: TransportError.self) {
            _ = try await transport.submit(contentsOf: [good, TransportRequest(slot: 2, url: "https://127.0.0.1:1/x", headerLines: ["a: b\r\nx-injected: 1"])])
        }
        await #expect(throws: TransportError.self) {
            try await transport.submit(TransportRequest(slot: 3, url: "https://127.0.0.1:1/x", timeoutMilliseconds: -1))
        }
        #expect(transport.counters.submitted == 0)
        await transport.shutdown()
    }

    /// A hosted loop remembers the URL prefix and suffix it last found clean, so a lane's shared
    /// parts are scanned once: a different prefix (or suffix) holding CR, LF or NUL is still
    /// refused, and does not become the remembered one.
    @Test func theRememberedCleanURLPartsLetNoControlByteThrough() {
        var clean = HTTP2Transport.CleanURLParts()
        let good = TransportRequest(slot: 1, url: "https://127.0.0.1:1/3/device/")
        #expect(throws: Never.self) { try HTTP2Transport.check(good, clean: &clean) }
        #expect(clean.prefix == "https://127.0.0.1:1/3/device/")
        for bad in ["https://127.0.0.1:1/3/device/\r", "https://127.0.0.1:1/\n/device/", "https://127.0.0.1:1/3\0/device/"] {
            #expect(throws: TransportError.self) { try HTTP2Transport.check(TransportRequest(slot: 2, url: bad), clean: &clean) }
            #expect(clean.prefix == "https://127.0.0.1:1/3/device/")
        }
        var suffixed = good
        suffixed.urlSuffix = ":send\r"
        #expect(throws: TransportError.self) { try HTTP2Transport.check(suffixed, clean: &clean) }
        #expect(throws: Never.self) { try HTTP2Transport.check(good, clean: &clean) }
    }

    /// The limits every engine holds a request to, checked before a request is taken.
    @Test(arguments: TransportEngine.allCases)
    func requestsBeyondTheURLAndHeaderLimitsAreRefused(engine: TransportEngine) async throws {
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        let prefix = "https://127.0.0.1:1/"
        let longest = prefix + String(repeating: "a", count: TransportRequest.maxURLBytes - prefix.utf8.count)
        #expect(throws: Never.self) { try HTTP2Transport.check(TransportRequest(slot: 1, url: longest)) }
        await #expect(throws: TransportError.self) {
            try await transport.submit(TransportRequest(slot: 2, url: longest + "a"))
        }
        let lines = (0..<TransportRequest.maxHeaderLines).map { "x-\($0): 1" }
        #expect(throws: Never.self) { try HTTP2Transport.check(TransportRequest(slot: 3, url: prefix, headerLines: lines)) }
        await #expect(throws: TransportError.self) {
            try await transport.submit(TransportRequest(slot: 4, url: prefix, headerLines: lines + ["x-one-more: 1"]))
        }
        #expect(transport.counters.submitted == 0)
        await transport.shutdown()
    }

    /// `top -H`, `perf` and /proc show the transfer thread by its name, so a per-thread profile
    /// of a sending run tells the transfer thread from the encode workers.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/task"), "needs Linux's /proc/self/task"), arguments: TransportEngine.allCases)
    func theTransferThreadCarriesItsName(engine: TransportEngine) async throws {
        func named() -> Int {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.count { task in
                let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                return comm?.trimmingCharacters(in: .newlines) == HTTP2Transport.threadName
            }
        }
        let transport = try HTTP2Transport(TransportConfiguration().on(engine))
        // A completion comes from the transfer thread's loop, which it enters after naming
        // itself: once one is here, the name is set, however slow the machine.
        let port = try closedPort()
        async let responses = collect(transport, count: 1)
        try await transport.submit(TransportRequest(slot: 1, url: "https://127.0.0.1:\(port)/x"))
        _ = await responses
        // Tests running beside this one may hold transports too, so count at least one.
        let seen = named()
        await transport.shutdown()
        #expect(seen >= 1, "no thread named \(HTTP2Transport.threadName) while a transport runs")
    }
}
