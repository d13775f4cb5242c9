import Foundation

/// Which CA file and directory each easy handle names, chosen so the bundle is parsed once per
/// transport rather than once per connection.
///
/// A file rather than `CURLOPT_CAINFO_BLOB`: libcurl compares blobs byte by byte each time it
/// considers reusing a connection and never caches a blob's parsed store, while a file's store is
/// cached per multi handle.
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
