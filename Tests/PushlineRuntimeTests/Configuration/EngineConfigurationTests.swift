import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineRuntime
import Testing

/// `providers.<apns|fcm|webpush|adm>.transport` and `.proxy`: read into the lane settings, each
/// problem at its path, line and column; `validate` and the run's start name each engine.
@Suite("Engine configuration: transport and proxy keys")
struct EngineConfigurationTests {
    typealias Base = DeliveryConfigurationTests

    @Test func nghttp2AndNoProxyUnlessGiven() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let configurations = try DeliveryConfiguration.load(pipeline: try Base.load(Base.pipeline(Base.apns(f) + Base.fcm(f)), in: scratch))
        #expect(configurations.map(\.settings.transport) == [.nghttp2, .nghttp2])
        #expect(configurations.map(\.settings.proxy) == [nil, nil])
    }

    @Test func theKeysAreReadPerProvider() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Base.pipeline(
            Base.apns(f, extra: ", transport: curl")
                + Base.fcm(f, extra: ", proxy: \"HTTP://Proxy.Corp:3128/\"")
                + "  adm: { client_id: amzn1.x, client_secret: s3cret, proxy: \"${ADM_PROXY}\", transport: curl }\n",
            deviceTypes: "[ios, android, amazon]"
        )
        let loaded = try Base.load(yaml, in: scratch, environment: ["ADM_PROXY": "https://[fd00::1]:8443"])
        let configurations = try DeliveryConfiguration.load(pipeline: loaded)
        #expect(configurations.map(\.provider) == [.apns, .fcm, .adm])
        #expect(configurations.map(\.settings.transport) == [.curl, .nghttp2, .curl])
        // Scheme and host lowercased, the root path dropped: as the transport takes it.
        #expect(configurations.map(\.settings.proxy) == [nil, "http://proxy.corp:3128", "https://[fd00::1]:8443"])

        // What validate and the run's start say, with no proxy in the environment.
        let engines = DeliveryConfiguration.engines(configurations, routes: loaded.campaign.routeTable, environment: [:])
        #expect(engines.map(\.provider) == ["apns", "fcm", "adm"])
        #expect(engines.map(\.engine) == [
            "libcurl (transport: curl)",
            "libcurl through the proxy http://proxy.corp:3128 (proxy:)",
            "libcurl through the proxy https://[fd00::1]:8443 (proxy:)",
        ])
    }

    @Test(arguments: [
        // (key, value, message): the key added at line 11, its value at column 5 + key + 2.
        ("transport", "nghttp", "providers.apns.transport: expected one of nghttp2, curl, found 'nghttp' (did you mean 'nghttp2'?)"),
        ("transport", "libcurl", "providers.apns.transport: expected one of nghttp2, curl, found 'libcurl'"),
        ("transport", "2", "providers.apns.transport: expected one of nghttp2, curl, found 2"),
        ("proxy", "\"\"", "providers.apns.proxy: must not be empty (leave proxy out to use the environment's HTTPS_PROXY, if any)"),
        ("proxy", "socks5://proxy.corp:1080", "providers.apns.proxy: expected an http:// or https:// proxy (SOCKS proxies are not supported), found 'socks5://proxy.corp:1080'"),
        ("proxy", "proxy.corp:3128", "providers.apns.proxy: expected an http://host[:port] or https://host[:port] proxy URL, found 'proxy.corp:3128'"),
        ("proxy", "http://proxy.corp:3128/squid", "providers.apns.proxy: must be http://host[:port], without a path, found 'http://proxy.corp:3128/squid'"),
        ("proxy", "\"http://proxy.corp:3128?a=b\"", "providers.apns.proxy: must be http://host[:port], without a query, found 'http://proxy.corp:3128?a=b'"),
        ("proxy", "http://proxy.corp:99999", "providers.apns.proxy: has an invalid port (1 to 65535), found 'http://proxy.corp:99999'"),
        ("proxy", "\"http://proxy.corp:\"", "providers.apns.proxy: has an empty port, found 'http://proxy.corp:'"),
        ("proxy", "http://", "providers.apns.proxy: has no host, found 'http://'"),
        ("proxy", "http://proxy_corp", "providers.apns.proxy: has an invalid host (letters, digits, '-' and '.', at most 253), found 'http://proxy_corp'"),
        ("proxy", "\"http://proxy\\r\\n.corp\"", "providers.apns.proxy: must not hold spaces, control or non-ASCII characters, found 'http://proxy??.corp'"),
        ("proxy", "\"http://prøxy.corp\"", "providers.apns.proxy: must not hold spaces, control or non-ASCII characters, found 'http://pr??xy.corp'"),
        // User info is refused and never quoted: the password stays out of the diagnostic.
        ("proxy", "http://bob:hunter2@proxy.corp:3128", "providers.apns.proxy: must not hold user info (user:password@): an authenticated proxy is given in the environment (HTTPS_PROXY), never in the pipeline file"),
        ("proxy", "\"{{ id }}\"", "providers.apns.proxy: cannot be personalized (it decides the payload's shape)"),
        ("proxy", "${PUSHLINE_TEST_UNSET_PROXY}", "providers.apns.proxy: environment variable PUSHLINE_TEST_UNSET_PROXY is not set"),
        ("proxy", "3128", "providers.apns.proxy: expected a string, found an integer"),
    ])
    func everyProblemIsReportedOnceAtItsValue(key: String, value: String, message: String) throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let column = 5 + key.count + 2
        let problems = try Base.diagnostics(Base.apnsBlock(f, replacing: key, with: value), in: scratch)
        #expect(problems == ["11:\(column): error: \(message)"])
        #expect(!problems.joined().contains("hunter2"))
    }

    @Test func nghttp2WrittenBesideAProxyIsAContradiction() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Base.pipeline(Base.apns(f) + """
          fcm:
            service_account: "\(f.serviceAccount)"
            proxy: http://proxy.corp:3128
            transport: nghttp2

        """)
        #expect(try Base.diagnostics(yaml, in: scratch) == [
            "10:16: error: providers.fcm.transport: is nghttp2, which never sends through a proxy: a provider with proxy: sends with libcurl (write transport: curl, or leave transport out)",
        ])
    }

    @Test func webhooksRefuseTheKeysSayingWhy() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        try (Base.webhookSecret + "\n").write(toFile: scratch.file("hooks.txt"), atomically: true, encoding: .utf8)
        let yaml = Base.pipeline(
            Base.apns(f) + "  sms: { url: \"https://hooks.example/sms\", secret_file: hooks.txt, transport: curl, proxy: \"http://p:1\" }\n",
            deviceTypes: "[ios, sms]"
        )
        let problems = try Base.diagnostics(yaml, in: scratch)
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.contains { $0.hasSuffix("error: providers.sms.transport: webhooks speak HTTP/1.1 and are always sent with libcurl (transport: is for apns, fcm, webpush and adm)") }, "\(problems)")
        #expect(problems.contains { $0.hasSuffix("error: providers.sms.proxy: webhooks are sent with libcurl, which takes its proxy from the environment (HTTPS_PROXY, NO_PROXY)") }, "\(problems)")
    }

    @Test func theStartSummaryNamesEachEngineAndEnvironmentProxies() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let loaded = try Base.load(Base.pipeline(Base.apns(f) + Base.fcm(f)), in: scratch)
        let decision = try RunDecision(pipeline: loaded, dryRun: false, validateOnly: false)
        let routes = loaded.campaign.routeTable
        // FCM is exempted (a leading dot, another case); APNs goes through the proxy: libcurl.
        let environment = ["HTTPS_PROXY": "http://user:pw@proxy.corp:3128", "NO_PROXY": "localhost, .GoogleAPIs.com"]
        let lines = decision.describeProviders(routes: routes, environment: environment)
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix(", with libcurl through the proxy http://proxy.corp:3128 (HTTPS_PROXY)"), "\(lines[0])")
        #expect(lines[1].hasSuffix(", with nghttp2"), "\(lines[1])")
        #expect(!lines.joined().contains("pw@"))
        // No proxy: nghttp2 for both; without routes the lines are as before.
        #expect(decision.describeProviders(routes: routes, environment: [:]).allSatisfy { $0.hasSuffix(", with nghttp2") })
        #expect(decision.describeProviders().allSatisfy { !$0.contains(" with ") })
        // Web Push: per push service when no_proxy exempts some hosts only.
        let webpush = ProviderSendConfiguration(provider: .webpush, credentials: loaded.delivery.configured[0].credentials, settings: loaded.delivery.configured[0].settings)
        #expect(ProviderSenders.engineSummary(webpush, routes: routes, environment: environment) == "nghttp2, or libcurl for each push service HTTPS_PROXY applies to (NO_PROXY exempts the others)")
        #expect(ProviderSenders.engineSummary(webpush, routes: routes, environment: ["https_proxy": "http://p:1"]) == "libcurl through the proxy http://p:1 (https_proxy)")
        #expect(ProviderSenders.engineSummary(webpush, routes: routes, environment: ["https_proxy": "http://p:1", "no_proxy": "*"]) == "nghttp2")
    }
}
