import Foundation
import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineRuntime
import Testing

/// ADM documents its send API as HTTP/1.1 and promises no HTTP/2, so its lane takes either:
/// libcurl, with the HTTP/1.1 refusal off (`allowsHTTP1`, whose transport behaviour
/// `TransportProtocolTests` shows against an HTTP/1.1-only server). APNs and FCM speak only
/// HTTP/2 and keep nghttp2 (docs/delivery.md, "Amazon Device Messaging").
@Suite("ADM: HTTP/2 or HTTP/1.1")
struct ADMEngineTests {
    typealias Base = DeliveryConfigurationTests

    @Test func admIsSentWithAnEngineThatTakesHTTP1() throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let yaml = Base.pipeline(
            Base.apns(f) + Base.fcm(f) + "  adm: { client_id: amzn1.x, client_secret: s3cret }\n",
            deviceTypes: "[ios, android, amazon]"
        )
        let loaded = try Base.load(yaml, in: scratch)
        let configurations = try DeliveryConfiguration.load(pipeline: loaded)
        let engines = DeliveryConfiguration.engines(configurations, routes: loaded.campaign.routeTable, environment: [:])
        #expect(engines.map(\.provider) == ["apns", "fcm", "adm"])
        #expect(engines.map(\.engine) == ["nghttp2", "nghttp2", "libcurl (HTTP/2, or HTTP/1.1 when the endpoint offers nothing better)"])
        // Its own engine, not a fallback: no start-up line asking to change a key.
        #expect(EngineChoice(engine: .curl, reason: .acceptsHTTP1).notice(for: "adm", host: nil) == nil)
        // A proxy still names the proxy.
        let proxied = try Base.load(Base.pipeline(
            Base.apns(f) + Base.fcm(f) + "  adm: { client_id: amzn1.x, client_secret: s3cret, proxy: \"http://proxy.corp:3128\" }\n",
            deviceTypes: "[ios, android, amazon]"
        ), in: scratch)
        let viaProxy = DeliveryConfiguration.engines(try DeliveryConfiguration.load(pipeline: proxied), routes: proxied.campaign.routeTable, environment: [:])
        #expect(viaProxy.last?.engine == "libcurl through the proxy http://proxy.corp:3128 (proxy:)")
    }
}
