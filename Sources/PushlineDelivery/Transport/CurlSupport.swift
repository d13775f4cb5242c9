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

enum CurlText {
    static func description(of code: Int32) -> String {
        guard code >= 0, let text = curl_easy_strerror(CURLcode(rawValue: UInt32(code))) else { return "curl error \(code)" }
        return String(cString: text)
    }
}
