import Crypto
import PushlineCore
@testable import PushlineDelivery
import Testing

/// `WebPushLanes` without a network: endpoints refused before any lane or request exists.
@Suite("Web Push lanes: refused endpoints and the bound on origins")
struct WebPushLanesTests {
    static let route = RouteID(0)

    static var routes: RouteTable {
        let framing = DryRunFraming(beforeTarget: [], targetInURL: true, afterTarget: [], headersHaveMembers: false, platformText: 0..<0)
        return RouteTable(routes: [RequestRoute(
            id: route, platform: .web, platformName: "web", provider: .webpush, method: "POST",
            url: RouteURL(shape: .target, origin: "", pathBeforeTarget: ""), constantHeaders: [HTTPHeaderField("ttl", "60")], dryRun: framing
        )])
    }

    /// One request per endpoint, all in one arena (tag = position).
    static func requests(_ endpoints: [String]) -> [OutgoingRequest] {
        var index = RequestIndex()
        for (i, endpoint) in endpoints.enumerated() {
            let start = index.arena.count
            Array(endpoint.utf8).withUnsafeBytes { index.arena.appendRaw($0) }
            let target = ByteRange(start, index.arena.count)!
            index.append(RequestEntry(line: i + 1, device: 0, route: route, flags: [], recipient: .empty, target: target, body: .empty, headers: .empty))
        }
        let bytes = RequestBytes.arena(of: index)
        return (0..<index.count).map { OutgoingRequest(tag: UInt64($0), index: index, at: $0, bytes: bytes) }
    }

    static func lanes(pushServices: Int) throws -> WebPushLanes {
        var settings = SenderSettings(connections: 1, streamsPerConnection: 10, rate: try SendRate(parsing: "100/s", burst: nil), retry: RetryPolicy())
        settings.pushServices = pushServices
        let key = try VAPIDKey(privateKey: P256.Signing.PrivateKey(), subject: "mailto:ops@example.com")
        return WebPushLanes(key: key, settings: settings, routes: routes, clock: SystemDeliveryClock(), seed: 1, logger: nil)
    }

    @Test("an audience naming thousands of private hosts: each device settles once, unsent; only a bounded number of origins is looked at")
    func manyRefusedOrigins() async throws {
        let lanes = try Self.lanes(pushServices: 2)
        let count = 2_000
        // Distinct private literals: refused without a DNS lookup, so the test needs no network.
        let endpoints = (0..<count).map { "https://10.\($0 / 250).\($0 % 250).1/push/\($0)" }
        await lanes.send(Self.requests(endpoints))
        await lanes.finish()
        var reasons: [String: Int] = [:]
        var tags = Set<UInt64>()
        for await batch in lanes.events {
            for event in batch {
                guard case .settled(let settled) = event else { Issue.record("only settled events expected"); continue }
                #expect(tags.insert(settled.request.tag).inserted, "settled twice")
                #expect(settled.outcome.kind == .failed)
                reasons[settled.outcome.reasonCode ?? "?", default: 0] += 1
            }
        }
        #expect(tags.count == count)
        let looked = 2 + WebPushOrigins.refusedOriginsRemembered
        #expect(reasons == [LaneFailureReason.endpointRefused: looked, LaneFailureReason.tooManyPushServices: count - looked])
        let report = await lanes.report()
        #expect(report.attempts == 0 && report.connectionsOpened == 0)
    }

    @Test("malformed endpoints (user info, bad port) are refused unsent, each once")
    func malformed() async throws {
        let lanes = try Self.lanes(pushServices: 4)
        await lanes.send(Self.requests(["https://user@push.example/x", "https://push.example:99999/x", "https://push.example:99999/y"]))
        await lanes.finish()
        var reasons: [String] = []
        for await batch in lanes.events {
            for case .settled(let settled) in batch { reasons.append(settled.outcome.reasonCode ?? "?") }
        }
        #expect(reasons == Array(repeating: LaneFailureReason.endpointRefused, count: 3))
    }
}
