/// `providers.<apns|fcm|webpush|adm>.proxy`: the HTTP proxy a provider's requests (and its OAuth
/// token exchange) go through, `http://host[:port]` or `https://host[:port]`. A provider sent
/// through a proxy uses libcurl (docs/delivery.md, "Choosing the engine").
///
/// No user info: a password would sit in the pipeline file and in every copy of it; an
/// authenticated proxy is given by the environment (`HTTPS_PROXY`), which libcurl reads. Error
/// messages never quote a value that holds user info.
public enum ProviderProxy {
    /// The proxy as the transport takes it (scheme and host lowercased, no trailing `/`), or why
    /// `text` is not one.
    public static func url(_ text: String) -> Result<String, ProviderEndpoint.Problem> {
        let lower = text.lowercased()
        let scheme: String
        if lower.hasPrefix("http://") {
            scheme = "http://"
        } else if lower.hasPrefix("https://") {
            scheme = "https://"
        } else if lower.hasPrefix("socks") {
            return .failure(ProviderEndpoint.Problem("expected an http:// or https:// proxy (SOCKS proxies are not supported)"))
        } else {
            return .failure(ProviderEndpoint.Problem("expected an http://host[:port] or https://host[:port] proxy URL"))
        }
        if text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return .failure(ProviderEndpoint.Problem("must not hold spaces, control or non-ASCII characters"))
        }
        // ASCII from here: one character per byte.
        var authority = text.dropFirst(scheme.count)
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.isEmpty { return .failure(ProviderEndpoint.Problem("has no host")) }
        if authority.contains("@") {
            return .failure(ProviderEndpoint.Problem("must not hold user info (user:password@): an authenticated proxy is given in the environment (HTTPS_PROXY), never in the pipeline file"))
        }
        for (character, what) in [("/", "a path"), ("?", "a query"), ("#", "a fragment")] where authority.contains(character) {
            return .failure(ProviderEndpoint.Problem("must be \(scheme)host[:port], without \(what)"))
        }
        // The host and port rules are an endpoint's.
        switch ProviderEndpoint.origin("https://" + authority) {
        case .success(let origin): return .success(scheme + origin.dropFirst("https://".count))
        case .failure(let problem): return .failure(problem)
        }
    }

    /// `text` as a diagnostic may show it: nothing when it holds user info (a password).
    public static func quotable(_ text: String) -> String? {
        text.contains("@") ? nil : PrintableName.bounded(text, limit: 200)
    }
}
