import Testing
@testable import PushlineDelivery

/// Which engine sends a provider: nghttp2 unless a proxy (a `proxy:` key, or the environment's
/// `https_proxy`/`all_proxy` not exempted by `no_proxy`) or `transport: curl` asks for libcurl.
@Suite("Engine choice: proxies, no_proxy and transport")
struct EngineChoiceTests {
    static func choice(_ environment: [String: String], host: String = "api.push.apple.com", port: Int = 443,
                       transport: TransportEngine = .nghttp2, proxy: String? = nil) -> EngineChoice {
        EngineChoice.decide(transport: transport, proxy: proxy, host: host, port: port, variables: ProxyVariables(environment: environment))
    }

    @Test("nghttp2 without a proxy; libcurl for transport: curl, a proxy: key, or an environment proxy")
    func theRule() {
        #expect(Self.choice([:]) == .nghttp2)
        #expect(Self.choice([:], transport: .curl) == EngineChoice(engine: .curl, reason: .transportKey))
        #expect(Self.choice([:], proxy: "http://proxy.corp:3128") == EngineChoice(engine: .curl, reason: .proxyKey(proxy: "http://proxy.corp:3128")))
        #expect(Self.choice(["HTTPS_PROXY": "http://p:3128"]) == EngineChoice(engine: .curl, reason: .environment(variable: "HTTPS_PROXY", proxy: "http://p:3128", noProxyVariable: nil)))
        // An explicit proxy: key is the provider's own: the environment's no_proxy does not undo it.
        #expect(Self.choice(["NO_PROXY": "*", "HTTPS_PROXY": "http://p:1"], proxy: "http://mine:8080").reason == .proxyKey(proxy: "http://mine:8080"))
        // http_proxy is for http:// URLs: every provider is https.
        #expect(Self.choice(["http_proxy": "http://p:3128", "HTTP_PROXY": "http://p:3128"]) == .nghttp2)
    }

    @Test("the variables' precedence is the libcurl transport's: first present wins, empty means none")
    func precedence() {
        let environments: [[String: String]] = [
            [:],
            ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"],
            ["HTTPS_PROXY": "http://upper:1", "all_proxy": "http://all:1"],
            ["all_proxy": "http://all:1", "ALL_PROXY": "http://ALL:1"],
            ["ALL_PROXY": "http://ALL:1"],
            ["https_proxy": "", "HTTPS_PROXY": "http://upper:1"],
            ["no_proxy": "", "NO_PROXY": "*", "HTTPS_PROXY": "http://upper:1"],
            ["NO_PROXY": "example.com", "https_proxy": "http://lower:1"],
        ]
        for environment in environments {
            let ours = ProxyVariables(environment: environment)
            let transport = ProxyEnvironment(environment: environment)
            #expect((ours.proxy?.value ?? "") == transport.proxy, "\(environment)")
            #expect((ours.noProxy?.value ?? "") == transport.noProxy, "\(environment)")
        }
        #expect(ProxyVariables(environment: ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"]).proxy?.name == "https_proxy")
        // An empty https_proxy stops the lookup: no proxy, nghttp2.
        #expect(Self.choice(["https_proxy": "", "ALL_PROXY": "http://all:1"]) == .nghttp2)
        // An empty no_proxy stops the lookup too: NO_PROXY=* is not read.
        #expect(Self.choice(["no_proxy": "", "NO_PROXY": "*", "HTTPS_PROXY": "http://p:1"]).engine == .curl)
        #expect(Self.choice(["all_proxy": "socks5://s:1080"]).reason == .environment(variable: "all_proxy", proxy: "socks5://s:1080", noProxyVariable: nil))
    }

    @Test("no_proxy entries: exact names, names under a domain, leading dots, case, trailing dots", arguments: [
        ("api.push.apple.com", "api.push.apple.com", true),
        ("apple.com", "api.push.apple.com", true),
        (".apple.com", "api.push.apple.com", true),
        // A leading dot is ignored, as libcurl does: the domain itself is exempt too.
        (".apple.com", "apple.com", true),
        ("*.apple.com", "api.push.apple.com", true),
        ("*.apple.com", "apple.com", true),
        ("APPLE.COM", "Api.Push.Apple.Com", true),
        ("apple.com.", "api.push.apple.com", true),
        ("apple.com", "api.push.apple.com.", true),
        // A whole label only.
        ("pple.com", "api.push.apple.com", false),
        ("le.com", "apple.com", false),
        ("push.apple.com.evil", "api.push.apple.com", false),
        ("api.push.apple.com", "apple.com", false),
        ("example.com", "api.push.apple.com", false),
        ("", "api.push.apple.com", false),
        (".", "api.push.apple.com", false),
    ])
    func names(entry: String, host: String, exempt: Bool) {
        #expect(NoProxyList(entry).exempts(host: host, port: 443) == exempt, "'\(entry)' for \(host)")
    }

    @Test("no_proxy lists: commas and blanks, * alone or as an entry")
    func lists() {
        #expect(NoProxyList("localhost, 127.0.0.1 ,fcm.googleapis.com").exempts(host: "fcm.googleapis.com", port: 443))
        #expect(NoProxyList("localhost 127.0.0.1\tgoogleapis.com").exempts(host: "fcm.googleapis.com", port: 443))
        #expect(NoProxyList(",,googleapis.com,,").exempts(host: "fcm.googleapis.com", port: 443))
        #expect(NoProxyList("*").exempts(host: "anything.example", port: 1))
        #expect(NoProxyList("*").exemptsAll)
        #expect(NoProxyList("localhost,*").exemptsAll)
        // `*` inside a name is no wildcard.
        #expect(!NoProxyList("api.*.apple.com").exempts(host: "api.push.apple.com", port: 443))
        #expect(NoProxyList("").isEmpty && !NoProxyList("").exempts(host: "a.b", port: 443))
        #expect(NoProxyList(" , ").isEmpty)
    }

    @Test("no_proxy ports: an entry with a port exempts that port only", arguments: [
        ("api.push.apple.com:443", "api.push.apple.com", 443, true),
        ("api.push.apple.com:443", "api.push.apple.com", 2197, false),
        ("apple.com:2197", "api.push.apple.com", 2197, true),
        ("apple.com", "api.push.apple.com", 2197, true),
        ("127.0.0.1:8443", "127.0.0.1", 8443, true),
        ("127.0.0.1:8443", "127.0.0.1", 443, false),
        ("[::1]:8443", "::1", 8443, true),
        ("[::1]:8443", "[::1]", 443, false),
        ("[::1]", "::1", 1, true),
        // A port that is no port matches nothing.
        ("apple.com:0", "api.push.apple.com", 443, false),
        ("apple.com:99999", "api.push.apple.com", 443, false),
        ("apple.com:https", "api.push.apple.com", 443, false),
        ("apple.com:", "api.push.apple.com", 443, false),
    ])
    func ports(entry: String, host: String, port: Int, exempt: Bool) {
        #expect(NoProxyList(entry).exempts(host: host, port: port) == exempt, "'\(entry)' for \(host):\(port)")
    }

    @Test("no_proxy addresses: exact, by prefix, never a name against an address", arguments: [
        ("127.0.0.1", "127.0.0.1", true),
        ("127.0.0.0/8", "127.1.2.3", true),
        ("10.0.0.0/8", "11.0.0.1", false),
        ("192.168.1.0/24", "192.168.1.77", true),
        ("192.168.1.0/24", "192.168.2.1", false),
        ("::1", "::1", true),
        ("::1", "0:0:0:0:0:0:0:1", true),
        ("fd00::/8", "fd12:3456::1", true),
        ("fd00::/8", "fe80::1", false),
        ("[fd00::]/8", "fd12::1", true),
        // An address entry never matches a name, nor a name entry an address.
        ("127.0.0.1", "localhost", false),
        ("localhost", "127.0.0.1", false),
        ("0.0.1", "127.0.0.1", false),
        // A prefix longer than the address matches nothing.
        ("10.0.0.0/33", "10.0.0.0", false),
        ("example.com/8", "example.com", false),
    ])
    func addresses(entry: String, host: String, exempt: Bool) {
        #expect(NoProxyList(entry).exempts(host: host, port: 443) == exempt, "'\(entry)' for \(host)")
    }

    @Test("an environment proxy exempted by no_proxy leaves nghttp2; otherwise the notice says which variables")
    func exemptions() {
        let environment = ["https_proxy": "http://user:secret@proxy.corp:3128/", "no_proxy": "localhost,.googleapis.com"]
        #expect(Self.choice(environment, host: "fcm.googleapis.com") == .nghttp2)
        let apns = Self.choice(environment)
        #expect(apns == EngineChoice(engine: .curl, reason: .environment(variable: "https_proxy", proxy: "http://proxy.corp:3128", noProxyVariable: "no_proxy")))
        let notice = apns.notice(for: "apns", host: "api.push.apple.com") ?? ""
        #expect(notice == "apns: sends with libcurl, not nghttp2: https_proxy sends it through the proxy http://proxy.corp:3128 and no_proxy does not exempt api.push.apple.com (add the host to no_proxy to send directly with nghttp2)")
        // The proxy's password never shows.
        #expect(!notice.contains("secret") && !apns.description.contains("secret"))
        #expect(apns.description == "libcurl through the proxy http://proxy.corp:3128 (https_proxy)")
        #expect(Self.choice(["ALL_PROXY": "http://p:1"]).notice(for: "fcm", host: "fcm.googleapis.com")?.contains("no_proxy is not set") == true)
        #expect(Self.choice([:]).notice(for: "apns", host: nil) == nil)
        #expect(Self.choice([:], transport: .curl).notice(for: "adm", host: nil) == "adm: sends with libcurl, not nghttp2: its transport: key is curl")
    }

    @Test("a proxy as logs show it: no user info, no path, printable")
    func shownProxies() {
        #expect(ProxyVariables.shown("http://proxy:3128") == "http://proxy:3128")
        #expect(ProxyVariables.shown("http://u:p@proxy:3128/x?y") == "http://proxy:3128")
        #expect(ProxyVariables.shown("u:p@proxy:3128") == "proxy:3128")
        #expect(ProxyVariables.shown("http://a@b@proxy") == "http://proxy")
        #expect(ProxyVariables.shown("http://pro\u{1b}[2Jxy") == "http://pro?[2Jxy")
        #expect(ProxyVariables.shown(String(repeating: "h", count: 500)).utf8.count == 200)
    }

    @Test("Web Push decides per push service only when no_proxy exempts some hosts")
    func perHost() {
        #expect(ProxyVariables(environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "mozilla.com"]).dependsOnHost)
        #expect(!ProxyVariables(environment: ["HTTPS_PROXY": "http://p:1"]).dependsOnHost)
        #expect(!ProxyVariables(environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"]).dependsOnHost)
        #expect(!ProxyVariables(environment: ["HTTPS_PROXY": "", "NO_PROXY": "mozilla.com"]).dependsOnHost)
        #expect(!ProxyVariables(environment: ["NO_PROXY": "mozilla.com"]).dependsOnHost)
        // Origins decide by their host and port.
        let variables = ProxyVariables(environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "mozilla.com,127.0.0.1:8443"])
        #expect(EngineChoice.decide(transport: .nghttp2, proxy: nil, origin: "https://updates.push.services.mozilla.com", variables: variables) == .nghttp2)
        #expect(EngineChoice.decide(transport: .nghttp2, proxy: nil, origin: "https://fcm.googleapis.com", variables: variables).engine == .curl)
        #expect(EngineChoice.decide(transport: .nghttp2, proxy: nil, origin: "https://127.0.0.1:8443", variables: variables) == .nghttp2)
        #expect(EngineChoice.decide(transport: .nghttp2, proxy: nil, origin: "https://127.0.0.1:9443", variables: variables).engine == .curl)
    }
}
