internal import CCurl

/// libcurl's process-wide initialisation, done once before the first handle (thread-safe since
/// 7.84, and `static let` runs it exactly once anyway).
enum CurlGlobal {
    static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// The CA bundle libcurl was built to use (Debian: /etc/ssl/certs/ca-certificates.crt).
    static var defaultCABundlePath: String? {
        guard let info = curl_version_info(CURLVERSION_TENTH), let path = info.pointee.cainfo else { return nil }
        return String(cString: path)
    }
}

/// libcurl 7.88 resets every HTTP/2 stream the server already closed (each empty-bodied answer,
/// as APNs sends); CCurl's filter drops those resets (Sources/CCurl/h2_reset_filter.c says why).
public enum HTTP2ResetFilter {
    /// libcurl's calls reach the filter (false with a statically linked libcurl: then every
    /// empty answer costs a reset, and nghttp2 servers close the connection every ~1,100).
    public static var isActive: Bool { ccurl_h2_reset_filter_active() != 0 }

    /// Resets forwarded and dropped since the process started.
    public static var counts: (forwarded: UInt, dropped: UInt) {
        var forwarded: UInt = 0
        var dropped: UInt = 0
        ccurl_h2_reset_filter_counts(&forwarded, &dropped)
        return (forwarded, dropped)
    }
}

enum CurlText {
    static func description(of code: Int32) -> String {
        guard code >= 0, let text = curl_easy_strerror(CURLcode(rawValue: UInt32(code))) else { return "curl error \(code)" }
        return String(cString: text)
    }
}
