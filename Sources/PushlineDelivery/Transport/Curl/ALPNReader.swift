internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Reads which protocol a libcurl connection negotiated by ALPN, from the pre-request callback,
/// so a connection that did not negotiate HTTP/2 is refused before the request is written.
///
/// libcurl 7.88 has no option that insists on h2 over TLS: with `CURL_HTTP_VERSION_2TLS` and
/// even `CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE` it sends HTTP/1.1 when ALPN gives http/1.1, and
/// `CURLINFO_HTTP_VERSION` is only known once a response arrived. `CURLINFO_TLS_SSL_PTR` gives
/// the connection's OpenSSL `SSL *`, and OpenSSL's `SSL_get0_alpn_selected` the protocol. The
/// function is looked up in the process (libcurl loaded libssl) rather than linked, so a
/// libcurl built on another TLS library simply gets no check here (the transport then refuses
/// an HTTP/1 answer after the fact).
struct ALPNReader: @unchecked Sendable {
    /// `void SSL_get0_alpn_selected(const SSL *, const unsigned char **data, unsigned int *len)`.
    private typealias Selected = @convention(c) (
        UnsafeRawPointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt32>?
    ) -> Void

    private let selected: Selected

    /// Nil unless libcurl's TLS library is OpenSSL and its ALPN accessor is in the process.
    static func load() -> ALPNReader? {
        #if os(Linux)
        guard let info = curl_version_info(CURLVERSION_TENTH), let version = info.pointee.ssl_version,
              String(cString: version).hasPrefix("OpenSSL/"),
              // RTLD_DEFAULT is the null handle with glibc.
              let symbol = dlsym(nil, "SSL_get0_alpn_selected")
        else { return nil }
        return ALPNReader(selected: unsafeBitCast(symbol, to: Selected.self))
        #else
        return nil
        #endif
    }

    struct Negotiated {
        let isHTTP2: Bool
        /// The protocol's name when it is not h2 (empty: none negotiated); empty for h2.
        let bytes: [UInt8]
    }

    /// The protocol of the connection `easy` is about to send on; nil when libcurl does not say
    /// (no TLS object). Allocation-free for h2.
    func negotiated(on easy: UnsafeMutableRawPointer) -> Negotiated? {
        var info: UnsafeMutablePointer<curl_tlssessioninfo>?
        guard ccurl_easy_getinfo_tls_session(easy, CURLINFO_TLS_SSL_PTR, &info) == CURLE_OK,
              let info, info.pointee.backend == CURLSSLBACKEND_OPENSSL, let ssl = info.pointee.internals
        else { return nil }
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        selected(UnsafeRawPointer(ssl), &name, &length)
        if length == 2, let name, name[0] == UInt8(ascii: "h"), name[1] == UInt8(ascii: "2") {
            return Negotiated(isHTTP2: true, bytes: [])
        }
        guard let name, length > 0 else { return Negotiated(isHTTP2: false, bytes: []) }
        // ALPN names are at most 255 bytes; 64 is plenty for a message.
        return Negotiated(isHTTP2: false, bytes: Array(UnsafeBufferPointer(start: name, count: Int(min(length, 64)))))
    }
}
