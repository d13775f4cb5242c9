/// One HTTP header a route sends with every request.
public struct HTTPHeaderField: Sendable, Hashable {
    /// Lowercase, as HTTP/2 sends it and the dry run shows it.
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
    /// `name: value`, the form libcurl takes.
    public var line: String { "\(name): \(value)" }
}

/// Where a route's requests go: `origin + pathBeforeTarget [+ target + pathAfterTarget]`.
/// The origin is separate because a provider's `endpoint` setting may replace it (an emulator,
/// a proxy); for Web Push the whole URL is the device's target (its subscription endpoint).
public struct RouteURL: Sendable, Hashable {
    public enum Shape: Sendable, Hashable {
        /// `origin + pathBeforeTarget + target + pathAfterTarget` (APNs, ADM).
        case targetInPath
        /// `origin + pathBeforeTarget`; the target travels in the body (FCM, webhooks).
        case fixed
        /// The target is the whole URL (Web Push).
        case target
    }

    public var shape: Shape
    /// `https://api.push.apple.com` (scheme and authority, no trailing slash); empty for `.target`.
    public var origin: String
    public var pathBeforeTarget: String
    public var pathAfterTarget: String

    public init(shape: Shape, origin: String, pathBeforeTarget: String, pathAfterTarget: String = "") {
        self.shape = shape
        self.origin = origin
        self.pathBeforeTarget = pathBeforeTarget
        self.pathAfterTarget = pathAfterTarget
    }

    /// Splits a full URL at its path: `https://h:1/a/b` → (`https://h:1`, `/a/b`).
    public static func fixed(_ url: String) -> RouteURL {
        let (origin, path) = split(url)
        return RouteURL(shape: .fixed, origin: origin, pathBeforeTarget: path)
    }

    static func split(_ url: String) -> (origin: String, path: String) {
        let bytes = Array(url.utf8)
        var i = 0
        var afterScheme: Int?
        while i + 2 < bytes.count {
            if bytes[i] == UInt8(ascii: ":"), bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/") {
                afterScheme = i + 3
                break
            }
            i += 1
        }
        guard let afterScheme else { return ("", url) }
        guard let slash = bytes[afterScheme...].firstIndex(of: UInt8(ascii: "/")) else { return (url, "") }
        return (String(decoding: bytes[..<slash], as: UTF8.self), String(decoding: bytes[slash...], as: UTF8.self))
    }

    /// The URL with the route's own origin, for display and the dry run (no target for `.target`).
    public var fullPrefix: String { origin + pathBeforeTarget }
}

/// The dry-run line's constant bytes for one route, compiled once. A request line is:
/// `{"recipient":R,"line":N,"device":I` + `beforeTarget` [+ target + `afterTarget`] + the
/// per-request headers + `},"body":` + body [+ `,"truncated":true`] + `}\n`.
public struct DryRunFraming: Sendable, Hashable {
    /// From `,"platform":` through the URL up to the target, or through the open headers object
    /// when the target is not in the URL.
    public var beforeTarget: [UInt8]
    /// Whether the target is written (raw) after `beforeTarget`.
    public var targetInURL: Bool
    /// After the target: the rest of the URL and the open headers object.
    public var afterTarget: [UInt8]
    /// Whether the open headers object already holds a member (the next one needs a comma).
    public var headersHaveMembers: Bool
    /// Where `beforeTarget` holds the platform's JSON string (replaced by the input's own text
    /// when an open channel's platform was written with escapes).
    public var platformText: Range<Int>

    public init(beforeTarget: [UInt8], targetInURL: Bool, afterTarget: [UInt8], headersHaveMembers: Bool, platformText: Range<Int>) {
        self.beforeTarget = beforeTarget
        self.targetInURL = targetInURL
        self.afterTarget = afterTarget
        self.headersHaveMembers = headersHaveMembers
        self.platformText = platformText
    }
}

/// Everything about a route that is the same for every request on it.
public struct RequestRoute: Sendable {
    public var id: RouteID
    public var platform: Platform
    /// `ios`, …, or `open::<name>` for an open channel.
    public var platformName: String
    public var provider: Provider
    public var method: String
    public var url: RouteURL
    /// Headers sent with every request of the route, in the order the dry run shows them
    /// (credentials such as `authorization` are added by the sender).
    public var constantHeaders: [HTTPHeaderField]
    /// `constantHeaders` as `name: value` lines, compiled once for the transport.
    public var constantHeaderLines: [String]
    public var dryRun: DryRunFraming
    /// Experiments: the arm (variant index) whose notification this route encodes, and its
    /// name, which every result line of the route carries. Nil without an experiment.
    public var variant: Int?
    public var variantName: String?

    public init(id: RouteID, platform: Platform, platformName: String, provider: Provider, method: String, url: RouteURL, constantHeaders: [HTTPHeaderField], dryRun: DryRunFraming) {
        self.id = id
        self.platform = platform
        self.platformName = platformName
        self.provider = provider
        self.method = method
        self.url = url
        self.constantHeaders = constantHeaders
        self.constantHeaderLines = constantHeaders.map(\.line)
        self.dryRun = dryRun
    }
}

/// The campaign's routes, compiled once: per `RouteID`, where and how its requests are sent and
/// how the dry run frames them. Entries of a `RequestIndex` name their route by id.
public struct RouteTable: Sendable {
    public private(set) var routes: [RequestRoute]

    public init(routes: [RequestRoute] = []) {
        self.routes = []
        for route in routes { _ = add(route) }
    }

    /// Adds a route and returns its id (its position). At most 65,536 routes.
    @discardableResult
    public mutating func add(_ route: RequestRoute) -> RouteID? {
        guard routes.count <= Int(UInt16.max) else { return nil }
        var route = route
        route.id = RouteID(UInt16(routes.count))
        routes.append(route)
        return route.id
    }

    public var count: Int { routes.count }

    public subscript(id: RouteID) -> RequestRoute { routes[id.index] }

    /// The route, or nil for an id this table does not have.
    public func route(_ id: RouteID) -> RequestRoute? {
        id.index < routes.count ? routes[id.index] : nil
    }

    /// Whether some route goes to `provider`.
    public func reaches(_ provider: Provider) -> Bool {
        routes.contains { $0.provider == provider }
    }

    /// The providers the routes reach, in `Provider.allCases` order.
    public var providers: [Provider] {
        Provider.allCases.filter(reaches)
    }

    /// Whether `other` lists the same routes under the same ids (platform, provider, method, URL
    /// and constant headers): what a worker's recompiled campaign must keep.
    public func hasSameRoutes(as other: RouteTable) -> Bool {
        routes.count == other.routes.count && zip(routes, other.routes).allSatisfy { a, b in
            a.id == b.id && a.platform == b.platform && a.provider == b.provider && a.method == b.method
                && a.constantHeaderLines == b.constantHeaderLines && a.url == b.url && a.variant == b.variant
        }
    }
}
