public import PushlineCore

/// The plan behind one route: what its encoder needs (the route's description is in the
/// campaign's `RouteTable`, at the same id).
enum RoutePlan: Sendable {
    case apns(APNsPlan)
    case fcm(FCMPlan)
    case webPush(WebPushPlan)
    case adm(ADMPlan)
    case webhook(WebhookPlan)
}

/// The campaign's routes: the public `RouteTable` (what senders and the dry run read), each
/// route's plan at the same id, and the lookup from a device's (platform, provider) to its route.
/// Compiled once by `Campaign.compile`; the one place that lists the routes.
public struct CampaignRoutes: Sendable {
    public private(set) var table = RouteTable()
    private(set) var plans: [RoutePlan] = []
    /// Route per (variant, platform, provider), by `variant * pairCount + Platform.ordinal *
    /// providerCount + Provider.ordinal` (variant 0 without an experiment).
    private var byPair: [RouteID?] = Array(repeating: nil, count: pairCount)
    /// Open channels' routes, by variant and channel name.
    private var openChannels: [(variant: Int, name: [UInt8], route: RouteID)] = []

    private static let pairCount = Platform.allCases.count * Provider.allCases.count

    init() {}

    /// The route a device takes, or nil when the campaign has none for it. `variant`: the
    /// experiment variant of its recipient (0 without an experiment).
    public func route(for device: RoutedDevice, variant: Int = 0) -> RouteID? {
        if device.platform == .open {
            guard device.provider == .webhook, let platform = device.object.member("platform") else { return nil }
            return platform.withUnescapedString { bytes -> RouteID? in
                let prefix = Platform.openPrefix.utf8.count
                guard bytes.count >= prefix else { return nil }
                let name = UnsafeRawBufferPointer(rebasing: bytes[prefix...])
                return openChannels.first { $0.variant == variant && $0.name.elementsEqual(name) }?.route
            } ?? nil
        }
        return byPair[variant &* Self.pairCount &+ Self.pairIndex(device.platform, device.provider)]
    }

    /// The route for a (platform, provider) pair other than open channels (of `variant`).
    public func route(platform: Platform, provider: Provider, variant: Int = 0) -> RouteID? {
        byPair[variant * Self.pairCount + Self.pairIndex(platform, provider)]
    }

    func plan(_ id: RouteID) -> RoutePlan { plans[id.index] }

    private static func pairIndex(_ platform: Platform, _ provider: Provider) -> Int {
        platform.ordinal * Provider.allCases.count + provider.ordinal
    }

    // MARK: Compiling

    mutating func add(_ route: RequestRoute, plan: RoutePlan, openChannel: String? = nil, variant: Int = 0) {
        guard let id = table.add(route) else { return }
        plans.append(plan)
        if let openChannel {
            openChannels.append((variant, Array(openChannel.utf8), id))
        } else {
            byPair[variant * Self.pairCount + Self.pairIndex(route.platform, route.provider)] = id
        }
    }

    /// Adds every route of `variant`'s own compilation as routes of variant `index` named
    /// `name`: each route's dry-run lines (and every result line) say `"variant":name`, written
    /// once here into the route's framing, not per request.
    mutating func appendVariant(_ variant: CampaignRoutes, index: Int, name: String) {
        if byPair.count < (index + 1) * Self.pairCount {
            byPair += Array(repeating: nil, count: (index + 1) * Self.pairCount - byPair.count)
        }
        var member = JSONWriter(reservingCapacity: 64)
        member.beginObject()
        let start = member.count
        member.writeKey("variant")
        member.writeString(name)
        let prefix = [UInt8(ascii: ",")] + member.bytes[start...]
        for route in variant.table.routes {
            var tagged = route
            tagged.variant = index
            tagged.variantName = name
            // `,"variant":"a"` before `,"platform":…`: the platform's text moves by as much.
            tagged.dryRun.beforeTarget = prefix + route.dryRun.beforeTarget
            tagged.dryRun.platformText = (route.dryRun.platformText.lowerBound + prefix.count)..<(route.dryRun.platformText.upperBound + prefix.count)
            let open = variant.openChannels.first { $0.route == route.id }.map { String(decoding: $0.name, as: UTF8.self) }
            add(tagged, plan: variant.plans[route.id.index], openChannel: open, variant: index)
        }
    }

    mutating func addAPNs(_ plan: APNsPlan) {
        var headers = [
            HTTPHeaderField("apns-push-type", plan.pushType),
            HTTPHeaderField("apns-priority", String(plan.priority)),
            HTTPHeaderField("apns-topic", plan.topic),
        ]
        if let expiration = plan.expiration { headers.append(HTTPHeaderField("apns-expiration", String(expiration))) }
        let url = RouteURL(shape: .targetInPath, origin: "https://" + plan.environment.host, pathBeforeTarget: "/3/device/")
        add(Self.route(platform: .ios, name: "ios", provider: .apns, url: url, headers: headers), plan: .apns(plan))
    }

    mutating func addFCM(_ plan: FCMPlan, platform: Platform) {
        let url = RouteURL.fixed(plan.url)
        add(Self.route(platform: platform, name: platform.rawValue, provider: .fcm, url: url, headers: [HTTPHeaderField("content-type", "application/json")]), plan: .fcm(plan))
    }

    mutating func addWebPush(_ plan: WebPushPlan) {
        var headers = [HTTPHeaderField("ttl", plan.ttl), HTTPHeaderField("urgency", plan.urgency)]
        if let topic = plan.topic { headers.append(HTTPHeaderField("topic", topic)) }
        headers.append(HTTPHeaderField("content-encoding", "aes128gcm"))
        headers.append(HTTPHeaderField("content-type", "application/octet-stream"))
        let url = RouteURL(shape: .target, origin: "", pathBeforeTarget: "")
        add(Self.route(platform: .web, name: "web", provider: .webpush, url: url, headers: headers), plan: .webPush(plan))
    }

    mutating func addADM(_ plan: ADMPlan) {
        let headers = [
            HTTPHeaderField("content-type", "application/json"),
            HTTPHeaderField("accept", "application/json"),
            HTTPHeaderField("x-amzn-type-version", "com.amazon.device.messaging.ADMMessage@1.0"),
            HTTPHeaderField("x-amzn-accept-type", "com.amazon.device.messaging.ADMSendResult@1.0"),
        ]
        let url = RouteURL(shape: .targetInPath, origin: "https://api.amazon.com", pathBeforeTarget: "/messaging/registrations/", pathAfterTarget: "/messages")
        add(Self.route(platform: .amazon, name: "amazon", provider: .adm, url: url, headers: headers), plan: .adm(plan))
    }

    mutating func addWebhook(_ plan: WebhookPlan, platform: Platform, openChannel: String? = nil) {
        let name = openChannel.map { Platform.openPrefix + $0 } ?? platform.rawValue
        let route = Self.route(platform: platform, name: name, provider: .webhook, url: .fixed(plan.url), headers: [HTTPHeaderField("content-type", "application/json")])
        add(route, plan: .webhook(plan), openChannel: openChannel)
    }

    /// `,"headers":{"name":"value",…` (the object left open for the per-request headers).
    static func writeHeaders(_ headers: [HTTPHeaderField], into w: inout JSONWriter) {
        w.writeKey("headers")
        w.beginObject()
        for header in headers {
            w.writeKey(header.name)
            w.writeString(header.value)
        }
    }

    /// A route with its dry-run framing (see `DryRunFraming`), written with the same writer
    /// calls the request lines always used, so the lines stay byte for byte the same.
    static func route(platform: Platform, name: String, provider: Provider, url: RouteURL, headers: [HTTPHeaderField]) -> RequestRoute {
        var w = JSONWriter(reservingCapacity: 512)
        w.beginObject()   // only for the separator state; the brace is dropped below
        let start = w.count
        w.writeKey("platform")
        let platformStart = w.count
        w.writeString(name)
        let platformEnd = w.count
        w.writeKey("provider")
        w.writeString(provider.rawValue)
        w.writeKey("method")
        w.writeString("POST")
        w.writeKey("url")
        let targetInURL: Bool
        switch url.shape {
        case .fixed:
            w.writeString(url.fullPrefix)
            targetInURL = false
        case .targetInPath, .target:
            // The URL string up to the target: written whole, its closing quote dropped.
            w.writeString(url.fullPrefix)
            w.truncate(to: w.count - 1, needsComma: false)
            targetInURL = true
        }
        if !targetInURL { writeHeaders(headers, into: &w) }
        let before = [UInt8(ascii: ",")] + w.bytes[start...]
        var after: [UInt8] = []
        if targetInURL {
            var path = JSONWriter(reservingCapacity: 64)
            path.writeString(url.pathAfterTarget)   // `"…"`: its content and closing quote follow the target
            var rest = JSONWriter(reservingCapacity: 256)
            rest.writeString("")   // a value just ended: the headers key takes its comma
            let mark = rest.count
            writeHeaders(headers, into: &rest)
            after = Array(path.bytes.dropFirst()) + rest.bytes[mark...]
        }
        let framing = DryRunFraming(
            beforeTarget: before, targetInURL: targetInURL, afterTarget: after,
            headersHaveMembers: !headers.isEmpty,
            platformText: (platformStart - start + 1)..<(platformEnd - start + 1)
        )
        return RequestRoute(id: RouteID(0), platform: platform, platformName: name, provider: provider, method: "POST", url: url, constantHeaders: headers, dryRun: framing)
    }
}
