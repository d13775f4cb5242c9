import PushlineCore
@testable import PushlineDelivery
import Testing

/// The lane's building blocks without a network: request building and its two queues.
@Suite("Lane internals")
struct LaneInternalsTests {
    static let auth = "authorization: bearer x.y.z"

    func build(_ request: OutgoingRequest, endpoint: String? = "https://127.0.0.1:8443", provider: Provider = .apns) -> LaneRoutes.Built {
        LaneRoutes(table: TestCampaign.routes, provider: provider, endpoint: endpoint)
            .build(request, slot: 9, authorization: TransportHeaderLines([Self.auth]), timeoutMilliseconds: 1234)
    }

    @Test("APNs: endpoint + /3/device/ + token; the route's headers, the collapse id, then authorization; the body uncopied")
    func apnsRequest() throws {
        let token = TestCampaign.apnsToken(1)
        let request = TestCampaign.requests(provider: .apns, tokens: [token], collapseID: "news-1")[0]
        guard case .request(let built) = build(request) else { Issue.record("not built"); return }
        #expect(built.url == "https://127.0.0.1:8443/3/device/" + token)
        #expect(built.headerLines == [
            "apns-push-type: alert", "apns-priority: 10", "apns-topic: \(TestCampaign.topic)", "apns-collapse-id: news-1", Self.auth,
        ])
        #expect(built.slot == 9)
        #expect(built.timeoutMilliseconds == 1234)
        #expect(built.method == .post)
        #expect(String(decoding: built.body, as: UTF8.self) == #"{"aps":{"alert":"Hello 0"}}"#)
        // The body points into the request's own bytes, which the transport keeps alive.
        let arena = request.bytes.bytes
        #expect(built.body.baseAddress == arena.baseAddress! + Int(request.entry.body.offset))
        #expect(built.bodyOwner === request.bytes)
    }

    @Test("without an endpoint the route's own origin is used; FCM's URL is fixed and its token stays in the body")
    func origins() throws {
        let apns = TestCampaign.requests(provider: .apns, tokens: ["abcdef"])[0]
        guard case .request(let a) = build(apns, endpoint: nil) else { Issue.record("not built"); return }
        #expect(a.url == "https://api.push.apple.com/3/device/abcdef")
        let fcm = TestCampaign.requests(provider: .fcm, tokens: ["tok"])[0]
        guard case .request(let f) = build(fcm, endpoint: "https://10.0.0.1", provider: .fcm) else { Issue.record("not built"); return }
        #expect(f.url == "https://10.0.0.1/v1/projects/\(TestCampaign.project)/messages:send")
        #expect(f.headerLines == ["content-type: application/json", Self.auth])
        #expect(String(decoding: f.body, as: UTF8.self).contains(#""token":"tok""#))
    }

    @Test("targets that would change the path, and header values with CR / LF / NUL, are not sendable")
    func unsendable() {
        for target in ["", "ab/cd", "ab%2F", "ab cd", "ab?x=1", "ab#f", "ab\u{0}", "äb", String(repeating: "a", count: 4097)] {
            let request = TestCampaign.requests(provider: .apns, tokens: [target])[0]
            guard case .unsendable(let reason) = build(request) else { Issue.record("\(target) built"); continue }
            #expect(reason == "bad_target", "\(target)")
        }
        for value in ["a\rb", "a\nb", "a\u{0}b"] {
            let request = TestCampaign.requests(provider: .apns, tokens: ["abcd"], collapseID: value)[0]
            guard case .unsendable(let reason) = build(request) else { Issue.record("\(value) built"); continue }
            #expect(reason == "bad_header")
        }
        // A route whose constant headers would break the request: none of its requests is built.
        var table = RouteTable()
        var route = TestCampaign.routes[TestCampaign.apnsRoute]
        route = RequestRoute(id: route.id, platform: route.platform, platformName: route.platformName, provider: .apns, method: "POST",
                             url: route.url, constantHeaders: [HTTPHeaderField("apns-topic", "a\r\nx-injected: 1")], dryRun: route.dryRun)
        table.add(route)
        let broken = LaneRoutes(table: table, provider: .apns, endpoint: nil)
            .build(TestCampaign.requests(provider: .apns, tokens: ["abcd"])[0], slot: 1, authorization: TransportHeaderLines([Self.auth]), timeoutMilliseconds: 1)
        guard case .unsendable(let brokenReason) = broken else { Issue.record("built"); return }
        #expect(brokenReason == "bad_header")
        // A route this lane does not serve, and one the table does not have.
        var other = TestCampaign.requests(provider: .fcm, tokens: ["tok"])[0]
        guard case .unsendable(let reason) = build(other) else { Issue.record("built"); return }
        #expect(reason == "no_route")
        other.entry.route = RouteID(77)
        guard case .unsendable(let missing) = build(other) else { Issue.record("built"); return }
        #expect(missing == "no_route")
    }

    @Test("the per-request byte checks agree with RFC 3986's unreserved set and with NUL / LF / CR, for every byte")
    func byteChecksAgreeWithTheirDefinitions() {
        let unreserved = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
        for value in 0...255 {
            let byte = UInt8(value)
            let pair: [UInt8] = [UInt8(ascii: "a"), byte]
            pair.withUnsafeBytes { bytes in
                #expect(LaneRoutes.isPathSafe(bytes) == unreserved.contains(byte), "byte \(value)")
                #expect(TransportHeaderLines.holdsControl(bytes) == [0, 0x0A, 0x0D].contains(byte), "byte \(value)")
            }
            #expect(LaneRoutes.isPathSafe(byte) == unreserved.contains(byte), "byte \(value)")
        }
        let token = Array(repeating: UInt8(ascii: "f"), count: 64) + [UInt8(ascii: "/")]
        token.withUnsafeBytes { #expect(!LaneRoutes.isPathSafe($0) && LaneRoutes.isPathSafe(UnsafeRawBufferPointer(rebasing: $0.dropLast()))) }
        #expect(LaneRoutes.isPathSafe(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    @Test("a credential's authorization line is made once and shared by every request it signs")
    func sharedAuthorization() throws {
        var routes = LaneRoutes(table: TestCampaign.routes, provider: .apns, endpoint: nil)
        let first = routes.authorizationLines("authorization: bearer a.b.c")
        #expect(routes.authorizationLines("authorization: bearer a.b.c") === first)
        let renewed = routes.authorizationLines("authorization: bearer d.e.f")
        #expect(renewed !== first)
        #expect(renewed.lines == ["authorization: bearer d.e.f"])
        let requests = TestCampaign.requests(provider: .apns, tokens: ["abcd", "ef01"])
        let built = requests.compactMap { request -> TransportRequest? in
            guard case .request(let made) = routes.build(request, slot: 1, authorization: renewed, timeoutMilliseconds: 1) else { return nil }
            return made
        }
        #expect(built.count == 2)
        #expect(built[0].headers === built[1].headers, "the route's constant lines are one object")
        #expect(built[0].lastHeaders === renewed && built[1].lastHeaders === renewed)
        #expect(built.map(\.url) == ["https://api.push.apple.com/3/device/abcd", "https://api.push.apple.com/3/device/ef01"])
    }

    @Test("the transport refuses what the slot could not hand curl: control bytes anywhere, too many lines")
    func transportCheck() {
        let fine = TransportRequest(slot: 1, url: "https://h/p", headerLines: ["a: 1"])
        #expect(throws: Never.self) { try HTTP2Transport.check(fine) }
        let refused = [
            TransportRequest(slot: 1, url: "https://h/p", headerLines: ["a: 1\r\nb: 2"]),
            TransportRequest(slot: 1, url: "https://h/p\u{0}x"),
            TransportRequest(slot: 1, url: "https://h/p\nx"),
            TransportRequest(slot: 1, url: "https://h/" + String(repeating: "p", count: 8192)),
            TransportRequest(slot: 1, url: "https://h/p", headerLines: (0...64).map { "h\($0): v" }),
        ]
        for request in refused {
            #expect(throws: TransportError.self) { try HTTP2Transport.check(request) }
        }
        // A header item (the collapse id) holding CR is refused although the lane checks it too.
        let request = TestCampaign.requests(provider: .apns, tokens: ["abcd"], collapseID: "ok")[0]
        var routes = LaneRoutes(table: TestCampaign.routes, provider: .apns, endpoint: nil)
        guard case .request(var built) = routes.build(request, slot: 1, authorization: routes.authorizationLines(Self.auth), timeoutMilliseconds: 1)
        else { Issue.record("not built"); return }
        #expect(throws: Never.self) { try HTTP2Transport.check(built) }
        let bad: [UInt8] = [RequestHeaderID.apnsCollapseID.rawValue, 3, 0, 0x61, 0x0D, 0x62]
        bad.withUnsafeBytes { bytes in
            built.headerItems = bytes
            #expect(throws: TransportError.self) { try HTTP2Transport.check(built) }
            // A truncated item (only from a corrupted arena) ends the walk: it is not sent.
            built.headerItems = UnsafeRawBufferPointer(rebasing: bytes[0..<3])
            #expect(throws: Never.self) { try HTTP2Transport.check(built) }
            #expect(!built.headerLines.contains { $0.hasPrefix("apns-collapse-id") })
        }
    }

    @Test("proxy settings are read from the environment as libcurl reads them, once")
    func proxyEnvironment() {
        #expect(ProxyEnvironment(environment: [:]) == ProxyEnvironment(environment: ["http_proxy": "http://p:1"]))
        let none = ProxyEnvironment(environment: [:])
        #expect(none.proxy == "" && none.noProxy == "")
        let https = ProxyEnvironment(environment: ["HTTPS_PROXY": "http://upper:1", "all_proxy": "http://all:1", "NO_PROXY": "*"])
        #expect(https.proxy == "http://upper:1" && https.noProxy == "*")
        let lower = ProxyEnvironment(environment: ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1", "no_proxy": "a", "NO_PROXY": "b"])
        #expect(lower.proxy == "http://lower:1" && lower.noProxy == "a")
        #expect(ProxyEnvironment(environment: ["ALL_PROXY": "socks5://s:1"]).proxy == "socks5://s:1")
        // Present but empty: no proxy, and the lookup stops there (as in libcurl).
        #expect(ProxyEnvironment(environment: ["https_proxy": "", "all_proxy": "http://all:1"]).proxy == "")
    }

    @Test("the endpoint check: an https origin and nothing more")
    func endpointCheck() {
        for good in ["https://127.0.0.1:8443", "https://api.push.apple.com", "HTTPS://h", "https://[::1]:443"] {
            #expect(EndpointCheck.problem(good) == nil, "\(good)")
        }
        let bad: [(String, String)] = [
            ("http://h", "must start with https://"), ("https://", "has no host"), ("h:443", "must start with https://"),
            ("https://h/p", "must be an origin (https://host[:port]) with no path, query, user or spaces"),
            ("https://u@h", "must be an origin (https://host[:port]) with no path, query, user or spaces"),
            ("https://h ost", "must be an origin (https://host[:port]) with no path, query, user or spaces"),
            ("https://h?q", "must be an origin (https://host[:port]) with no path, query, user or spaces"),
        ]
        for (endpoint, problem) in bad { #expect(EndpointCheck.problem(endpoint) == problem, "\(endpoint)") }
    }

    @Test("the retry heap gives the earliest first, equal instants in arrival order, nothing before it is due")
    func retryHeap() {
        var heap = RetryHeap<Int>()
        let dues = [5, 3, 9, 3, 1, 7, 3, 0, 9, 2]
        for (order, due) in dues.enumerated() { heap.insert(order, due: DeliveryInstant(nanoseconds: Int64(due))) }
        #expect(heap.count == 10)
        #expect(heap.earliest == DeliveryInstant(nanoseconds: 0))
        #expect(heap.popDue(now: DeliveryInstant(nanoseconds: -1)) == nil)
        var popped: [Int] = []
        while let next = heap.popDue(now: DeliveryInstant(nanoseconds: 6)) { popped.append(next) }
        // Due ≤ 6, by instant then arrival: 0@0, 4@1, 9@2, 1@3, 3@3, 6@3, 0…: 5@5.
        #expect(popped == [7, 4, 9, 1, 3, 6, 0])
        #expect(heap.count == 3)
        #expect(heap.removeAll().sorted() == [2, 5, 8])
        #expect(heap.isEmpty)
    }

    @Test("the FIFO queue keeps order across its compaction")
    func fifo() {
        var queue = FIFOQueue<Int>()
        var expected = 0
        for round in 0..<5 {
            queue.append(contentsOf: (round * 1000)..<((round + 1) * 1000))
            for _ in 0..<700 {
                #expect(queue.popFirst() == expected)
                expected += 1
            }
        }
        #expect(queue.count == 1500)
        #expect(queue.first == expected)
        #expect(queue.removeAll() == Array(expected..<5000))
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }
}
