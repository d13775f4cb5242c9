import Foundation

/// The proxy settings libcurl would read from the environment for an `https://` URL, read once
/// per transport and set on every handle (`CURLOPT_PROXY`, `CURLOPT_NOPROXY`): left unset,
/// libcurl 7.88 looks up `no_proxy`, `NO_PROXY`, `https_proxy`, `HTTPS_PROXY`, `all_proxy` and
/// `ALL_PROXY` again for every request, six scans of the environment per device.
///
/// The same rules as libcurl's: the first of each list that is present wins, even when empty
/// (an empty value means no proxy, and stops the lookup).
struct ProxyEnvironment: Equatable {
    /// The proxy URL; empty for none.
    let proxy: String
    /// Hosts reached without the proxy (`*` for all); empty for none.
    let noProxy: String

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func first(_ names: [String]) -> String {
            for name in names { if let value = environment[name] { return value } }
            return ""
        }
        proxy = first(["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"])
        noProxy = first(["no_proxy", "NO_PROXY"])
    }
}
