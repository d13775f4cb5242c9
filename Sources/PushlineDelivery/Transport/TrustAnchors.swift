import Foundation

/// The CA bundle a transport verifies servers against when `ca_file` is configured.
///
/// `CURLOPT_CAINFO` replaces libcurl's default bundle, so pointing it at `ca_file` alone would
/// stop trusting the public roots. We write one combined PEM file instead: the system bundle
/// libcurl was built with, then `ca_file`, and give that to `CURLOPT_CAINFO`. A file rather than
/// `CURLOPT_CAINFO_BLOB`: libcurl compares blobs byte by byte each time it considers reusing a
/// connection and never caches a blob's parsed store, while a file's store is cached per multi
/// handle (see `CABundleChoice`). The file is private to the process (0600, exclusive create),
/// and on Linux it has no name: it is unlinked as soon as it is open and libcurl is given
/// `/proc/self/fd/N`, so a run killed with SIGKILL leaves nothing behind in the temporary
/// directory. The descriptor is closed when the transport shuts down.
final class TrustAnchors: Sendable {
    /// What `CURLOPT_CAINFO` names: `/proc/self/fd/N` on Linux, the file's own path elsewhere.
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

    private static func readPEM(_ path: String) throws(TransportError) -> [UInt8] {
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

/// Which CA file and directory each easy handle names, chosen so the bundle is parsed once per
/// transport rather than once per connection.
///
/// libcurl 7.87+ (OpenSSL) caches the parsed CA store in the multi handle for
/// `CURLOPT_CA_CACHE_TIMEOUT` (24 h by default), but only when the store comes from a CA file
/// alone: any CA directory disables the cache. Debian's libcurl is built with
/// `CURLOPT_CAPATH` = /etc/ssl/certs, so as built it re-reads and re-parses the whole bundle on
/// every new connection (measured with strace: one open of the bundle per connection). The
/// bundle file holds the same roots as that directory (update-ca-certificates writes both), so
/// the directory is dropped whenever the file is there.
struct CABundleChoice {
    /// `CURLOPT_CAINFO`; nil keeps libcurl's built-in bundle.
    let caInfo: String?
    /// Set `CURLOPT_CAPATH` to none, which lets libcurl cache the store.
    let clearCAPath: Bool

    init(trustAnchors: TrustAnchors?, defaultBundlePath: String? = CurlGlobal.defaultCABundlePath) {
        if let trustAnchors {
            caInfo = trustAnchors.bundlePath
            clearCAPath = trustAnchors.includesSystemBundle
        } else {
            caInfo = nil
            clearCAPath = defaultBundlePath.map { FileManager.default.isReadableFile(atPath: $0) } ?? false
        }
    }
}
