internal import CNGHTTP2

/// One OpenSSL client context per engine: TLS 1.2 at least, ALPN offering `h2` only, peers
/// verified against the system store (or the combined bundle `ca_file` made), partial writes
/// allowed because the connection writes through a memory BIO.
final class TLSClientContext {
    let context: OpaquePointer

    init(trustBundlePath: String?) throws(TransportError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TransportError.curlSetup("SSL_CTX_new failed: \(Self.errorText())")
        }
        self.context = context
        _ = cnghttp2_ssl_ctx_set_min_tls12(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded: Int32
        if let trustBundlePath {
            loaded = SSL_CTX_load_verify_locations(context, trustBundlePath, nil)
        } else {
            loaded = SSL_CTX_set_default_verify_paths(context)
        }
        guard loaded == 1 else {
            let text = Self.errorText()
            SSL_CTX_free(context)
            throw TransportError.curlSetup("loading the trust store failed: \(text)")
        }
        // ALPN wire format: a length byte, then the protocol name.
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        _ = alpn.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
        _ = cnghttp2_ssl_ctx_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's last error on this thread, printable, and clears the queue.
    static func errorText() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { cnghttp2_ssl_error_text($0.baseAddress, $0.count) }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
