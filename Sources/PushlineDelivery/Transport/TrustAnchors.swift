import Foundation

/// The CA bundle a transport verifies servers against when `ca_file` is configured.
///
/// Naming a CA file in place of the default would stop trusting the public roots, so we write
/// one combined PEM file: the system bundle (the one libcurl was built with), then `ca_file`.
/// The libcurl engine loads that file as `CURLOPT_CAINFO` (Transport/Curl/CABundleChoice.swift
/// says why a file, not a blob); the nghttp2 engine needs none: it loads `ca_file` into its
/// OpenSSL context beside the system store (`TLSClientContext`).
/// The file is private to the process (0600, exclusive create), and on Linux it has no name: it
/// is unlinked as soon as it is open and read through `/proc/self/fd/N`, so a run killed with
/// SIGKILL leaves nothing behind in the temporary directory. The descriptor is closed when the
/// transport shuts down.
final class TrustAnchors: Sendable {
    /// What the engines read: `/proc/self/fd/N` on Linux, the file's own path elsewhere.
    let bundlePath: String
    private let descriptor: Int32
    /// Whether the file still has its name in the temporary directory (never on Linux).
    private let isNamed: Bool
    /// The combined file holds the system bundle too (false when it could not be read).
    let includesSystemBundle: Bool

    private static let maxFileBytes = 8 << 20

    init(caFile: String, systemBundlePath: String?) throws(TransportError) {
        let extra = try Self.readPEM(caFile)
        var combined: [UInt8] = []
        if let systemBundlePath, let system = try? Self.readPEM(systemBundlePath) {
            combined.append(contentsOf: system)
            combined.append(UInt8(ascii: "\n"))
            includesSystemBundle = true
        } else {
            includesSystemBundle = false
        }
        combined.append(contentsOf: extra)
        combined.append(UInt8(ascii: "\n"))
        (bundlePath, descriptor, isNamed) = try Self.writePrivateFile(combined)
    }

    func remove() {
        if isNamed { unlink(bundlePath) }
        close(descriptor)
    }

    /// `path`'s bytes, refused unless they hold a PEM certificate within 8 MiB: both engines
    /// check `ca_file` so, with the same errors.
    static func readPEM(_ path: String) throws(TransportError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TransportError.trustAnchors(path: path, problem: "cannot be read")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: maxFileBytes + 1) ?? Data() } catch {
            throw TransportError.trustAnchors(path: path, problem: "cannot be read")
        }
        guard data.count <= maxFileBytes else {
            throw TransportError.trustAnchors(path: path, problem: "larger than \(maxFileBytes) bytes")
        }
        let bytes = [UInt8](data)
        guard bytes.firstRange(of: Array("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
            throw TransportError.trustAnchors(path: path, problem: "holds no PEM certificate")
        }
        return bytes
    }

    private static func writePrivateFile(_ bytes: [UInt8]) throws(TransportError) -> (path: String, descriptor: Int32, isNamed: Bool) {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        for _ in 0..<8 {
            let path = "\(directory)/pushline-ca-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).pem"
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw TransportError.trustAnchors(path: path, problem: "cannot create the combined bundle (errno \(errno))")
            }
            // The name goes before the first byte is written: from here on a kill leaves no file.
            let procPath = "/proc/self/fd/\(fd)"
            let isNamed = !(access(procPath, F_OK) == 0 && unlink(path) == 0)
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    if isNamed { unlink(path) }
                    close(fd)
                    throw TransportError.trustAnchors(path: path, problem: "cannot write the combined bundle")
                }
                written += n
            }
            return (isNamed ? path : procPath, fd, isNamed)
        }
        throw TransportError.trustAnchors(path: directory, problem: "cannot create a unique combined bundle")
    }
}
