internal import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif

/// One OpenSSL client context per engine: TLS 1.2 at least, ALPN offering `h2` only, peers
/// verified against the system store and `ca_file`, partial writes allowed because the
/// connection writes through a memory BIO.
final class TLSClientContext {
    let context: OpaquePointer

    /// `caFile`: PEM certificates trusted besides the system store (a provider's `ca_file`).
    /// `systemDirectory`: a hashed certificate directory standing for the system store (tests);
    /// nil: OpenSSL's own, as `SSL_CERT_DIR` and `SSL_CERT_FILE` say.
    init(caFile: String?, systemDirectory: String? = nil) throws(TransportError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TransportError.curlSetup("SSL_CTX_new failed: \(Self.errorText())")
        }
        self.context = context
        _ = cnghttp2_ssl_ctx_set_min_tls12(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        do throws(TransportError) {
            if let systemDirectory {
                guard SSL_CTX_load_verify_dir(context, systemDirectory) == 1 else {
                    throw TransportError.trustAnchors(path: systemDirectory, problem: "cannot be read")
                }
            } else {
                try Self.trustSystemStore(context)
            }
            if let caFile {
                guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
                    throw TransportError.trustAnchors(path: caFile, problem: "holds no certificate OpenSSL can read (\(Self.errorText()))")
                }
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        // ALPN wire format: a length byte, then the protocol name.
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        _ = alpn.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
        _ = cnghttp2_ssl_ctx_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
    }

    deinit { SSL_CTX_free(context) }

    /// The system's roots. Where OpenSSL's certificate directory is hashed (`c_rehash`, as
    /// Debian's ca-certificates keeps /etc/ssl/certs), a root is read from it when a handshake
    /// needs it: loading the whole bundle instead costs 35–40 ms of CPU at every start, which
    /// a shard pays per provider. With `SSL_CERT_FILE` naming another bundle, or a directory
    /// without hash links, OpenSSL's defaults (the bundle file and the directory) are loaded as
    /// they are.
    private static func trustSystemStore(_ context: OpaquePointer) throws(TransportError) {
        let directory = lazySystemDirectory(
            certFile: getenv(String(cString: X509_get_default_cert_file_env())).map { String(cString: $0) },
            certDirectory: getenv(String(cString: X509_get_default_cert_dir_env())).map { String(cString: $0) },
            defaultFile: String(cString: X509_get_default_cert_file()), defaultDirectory: String(cString: X509_get_default_cert_dir())
        )
        if let directory, SSL_CTX_load_verify_dir(context, directory) == 1 { return }
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw TransportError.curlSetup("loading the trust store failed: \(errorText())")
        }
    }

    /// The hashed directory that holds every system root, given `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` (nil when unset) and OpenSSL's defaults; nil when the roots must be loaded
    /// as OpenSSL's defaults say. `SSL_CERT_FILE` naming the distribution's own bundle (as many
    /// images set it) adds no root the directory lacks: update-ca-certificates makes both from
    /// one set. Another bundle, a directory list (`a:b`) or a directory without hash links
    /// falls back.
    static func lazySystemDirectory(certFile: String?, certDirectory: String?, defaultFile: String, defaultDirectory: String) -> String? {
        if let certFile {
            guard let chosen = realPath(certFile), chosen == realPath(defaultFile) else { return nil }
        }
        let directory = certDirectory ?? defaultDirectory
        guard !directory.contains(":"), hasHashLinks(directory) else { return nil }
        return directory
    }

    /// Whether the context's store verifies the first certificate in the PEM file at `path`, by
    /// itself (tests: a self-signed root is trusted or it is not).
    func trusts(certificateAt path: String) -> Bool {
        guard let file = BIO_new_file(path, "r") else { return false }
        defer { BIO_free(file) }
        guard let certificate = PEM_read_bio_X509(file, nil, nil, nil) else { return false }
        defer { X509_free(certificate) }
        guard let verification = X509_STORE_CTX_new() else { return false }
        defer { X509_STORE_CTX_free(verification) }
        guard X509_STORE_CTX_init(verification, SSL_CTX_get_cert_store(context), certificate, nil) == 1 else { return false }
        return X509_verify_cert(verification) == 1
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `directory` holds a subject-hash link (`5ad8a5d6.0`), which is how OpenSSL's
    /// directory lookup finds a certificate.
    static func hasHashLinks(_ directory: String) -> Bool {
        guard let stream = opendir(directory) else { return false }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let found = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Bool in
                let name = raw.prefix { $0 != 0 }
                return name.count == 10 && name[name.startIndex + 8] == UInt8(ascii: ".") && name.last == UInt8(ascii: "0")
                    && name.prefix(8).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
            }
            if found { return true }
        }
        return false
    }

    /// OpenSSL's last error on this thread, printable, and clears the queue.
    static func errorText() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { cnghttp2_ssl_error_text($0.baseAddress, $0.count) }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
