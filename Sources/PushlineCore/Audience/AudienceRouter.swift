/// One device of a record, resolved to the provider that will receive its request.
public struct RoutedDevice: Sendable {
    /// Position in the record's `devices` array (0 for a flat one-device line).
    public var index: Int
    public var platform: Platform
    public var provider: Provider
    /// The device object itself (for device-level fields such as `badge` or `locale`).
    public var object: JSONValue
    /// The token string (APNs, FCM, ADM); for Web Push, the `subscription` object; for SMS,
    /// email and open channels, the `address` string.
    public var address: JSONValue
}

/// The outcome of routing one device entry.
public enum DeviceRoute: Sendable {
    case routed(RoutedDevice)
    case rejected(index: Int, platform: Platform?, RejectReason)
    /// A device whose platform the campaign does not target: skipped, never rejected, so its
    /// token is not read (docs/overrides.md). `provider` is the one it names when that is valid
    /// for the platform, else the platform's default: what the skip is counted under.
    case notTargeted(index: Int, platform: Platform, provider: Provider)

    /// The device's position in the record, its platform when known, and its provider when
    /// the device was routed (rejected devices count under no provider).
    public var device: (index: Int, platform: Platform?, provider: Provider?) {
        switch self {
        case .routed(let device): (device.index, device.platform, device.provider)
        case .rejected(let index, let platform, _): (index, platform, nil)
        case .notTargeted(let index, let platform, let provider): (index, platform, provider)
        }
    }
}

/// An audience line, validated at the record level: it has an id and a list of device entries.
public struct AudienceRecord: Sendable {
    public var root: JSONValue
    /// The recipient id (string or number) as it stands in the line.
    public var id: JSONValue
    public var routes: [DeviceRoute]

    public init(root: JSONValue, id: JSONValue, routes: [DeviceRoute]) {
        self.root = root
        self.id = id
        self.routes = routes
    }
}

/// Turns a parsed audience line into its devices (see docs/audience.md).
///
/// A record either has a `devices` array or is itself one device (flat form: `platform`, `token`
/// or `subscription` at the top level). Problems with one device reject that device only; a record
/// without an id or without any device entry is rejected whole.
public enum AudienceRouter {
    public static func route(_ root: JSONValue, targeting targets: PlatformSet = .all) -> Result<AudienceRecord, RejectReason> {
        var routes: [DeviceRoute] = []
        return route(root, into: &routes, targeting: targets).map { AudienceRecord(root: root, id: $0, routes: routes) }
    }

    /// Routes the record's devices into `routes` (emptied first, its capacity kept: a worker
    /// reuses one array line after line) and returns the recipient id. A device of a platform
    /// outside `targets` is `.notTargeted` before its token or address is read.
    public static func route(_ root: JSONValue, into routes: inout [DeviceRoute], targeting targets: PlatformSet = .all) -> Result<JSONValue, RejectReason> {
        routes.removeAll(keepingCapacity: true)
        guard root.kind == .object else {
            return .failure(.invalidDevice("a line must be a JSON object, found \(describe(root.kind))"))
        }
        guard let id = root.member("id") else { return .failure(.missingID("the record has no \"id\"")) }
        switch id.kind {
        case .string:
            if id.byteRange.count <= 2 { return .failure(.missingID("\"id\" is empty")) }
        case .number:
            break
        default:
            return .failure(.missingID("\"id\" must be a string or a number, found \(describe(id.kind))"))
        }

        if let devices = root.member("devices") {
            guard devices.kind == .array else {
                return .failure(.noDevices("\"devices\" must be an array, found \(describe(devices.kind))"))
            }
            guard devices.count > 0 else { return .failure(.noDevices("\"devices\" is empty")) }
            routes.reserveCapacity(devices.count)
            devices.forEachElement { index, device in
                routes.append(routeDevice(device, index: index, targets: targets))
            }
        } else if root.member("platform") != nil {
            routes.append(routeDevice(root, index: 0, targets: targets))
        } else {
            return .failure(.noDevices("the record has neither a \"devices\" array nor a flat \"platform\""))
        }
        return .success(id)
    }

    static func routeDevice(_ device: JSONValue, index: Int, targets: PlatformSet = .all) -> DeviceRoute {
        guard device.kind == .object else {
            return .rejected(index: index, platform: nil, .invalidDevice("device \(index) must be an object, found \(describe(device.kind))"))
        }
        guard let platformValue = device.member("platform"), platformValue.kind == .string else {
            return .rejected(index: index, platform: nil, .invalidDevice("device \(index) has no \"platform\" string"))
        }
        guard let platform = platformValue.withUnescapedString({ Platform(utf8: $0) }) ?? nil else {
            return .rejected(index: index, platform: nil, .unknownPlatform(platformValue.stringValue ?? ""))
        }
        var provider = platform.defaultProvider
        let providerValue = device.member("provider")
        guard targets.contains(platform) else {
            let named = providerValue.flatMap(Self.provider(named:)).flatMap { platform.allows($0) ? $0 : nil }
            return .notTargeted(index: index, platform: platform, provider: named ?? provider)
        }
        if let providerValue {
            guard let named = Self.provider(named: providerValue) else {
                return .rejected(index: index, platform: platform, .invalidDevice(
                    "device \(index): unknown provider \(providerValue.stringValue.map { "'\($0)'" } ?? "value") (expected one of \(Provider.allCases.map(\.rawValue).joined(separator: ", ")))"))
            }
            guard platform.allows(named) else {
                return .rejected(index: index, platform: platform, .invalidDevice(
                    "device \(index): platform '\(platform.rawValue)' cannot be reached through '\(named.rawValue)'"))
            }
            provider = named
        }

        if provider == .webpush {
            return routeSubscription(device, index: index, platform: platform)
        }
        if platform.usesAddress {
            return routeAddress(device, index: index, platform: platform)
        }
        guard let token = device.member("token"), token.kind == .string else {
            return .rejected(index: index, platform: platform, .invalidToken("device \(index) (\(platform.rawValue)) has no \"token\" string"))
        }
        let problem: String? = token.withUnescapedString { bytes in
            switch provider {
            case .apns: DeviceTokenRules.validateAPNs(bytes)
            case .fcm: DeviceTokenRules.validateFCM(bytes)
            case .adm: DeviceTokenRules.validateADM(bytes)
            case .webpush, .webhook: nil
            }
        } ?? nil
        if let problem {
            return .rejected(index: index, platform: platform, .invalidToken("device \(index): \(problem)"))
        }
        return .routed(RoutedDevice(index: index, platform: platform, provider: provider, object: device, address: token))
    }

    /// The provider a `"provider"` value names: nil unless it is a string naming one.
    private static func provider(named value: JSONValue) -> Provider? {
        guard value.kind == .string else { return nil }
        return value.withUnescapedString { Provider(utf8: $0) } ?? nil
    }

    static func routeSubscription(_ device: JSONValue, index: Int, platform: Platform) -> DeviceRoute {
        func reject(_ message: String) -> DeviceRoute {
            .rejected(index: index, platform: platform, .invalidToken("device \(index): \(message)"))
        }
        guard let subscription = device.member("subscription"), subscription.kind == .object else {
            return reject("a web device needs a \"subscription\" object")
        }
        guard let endpoint = subscription.member("endpoint"), endpoint.kind == .string else {
            return reject("the subscription has no \"endpoint\" string")
        }
        if let problem = endpoint.withUnescapedString({ DeviceTokenRules.validateWebPushEndpoint($0) }) ?? nil {
            return reject(problem)
        }
        guard let keys = subscription.member("keys"), keys.kind == .object else {
            return reject("the subscription has no \"keys\" object")
        }
        for (name, size) in [("p256dh", 65), ("auth", 16)] {
            guard let key = keys[name], key.kind == .string else { return reject("the subscription has no keys.\(name) string") }
            if let problem = key.withUnescapedString({ DeviceTokenRules.validateWebPushKey($0, name: name, decodedBytes: size) }) ?? nil {
                return reject(problem)
            }
        }
        return .routed(RoutedDevice(index: index, platform: platform, provider: .webpush, object: device, address: subscription))
    }

    /// SMS, email and open-channel devices: an `address` the channel's webhook delivers to.
    static func routeAddress(_ device: JSONValue, index: Int, platform: Platform) -> DeviceRoute {
        guard let address = device.member("address"), address.kind == .string else {
            return .rejected(index: index, platform: platform, .invalidToken("device \(index) (\(platform.rawValue)) has no \"address\" string"))
        }
        let problem: String? = address.withUnescapedString { bytes in
            switch platform {
            case .sms: DeviceTokenRules.validatePhoneNumber(bytes)
            case .email: DeviceTokenRules.validateEmail(bytes)
            default: DeviceTokenRules.validateOpenAddress(bytes)
            }
        } ?? "the address is not valid UTF-8"
        if let problem {
            return .rejected(index: index, platform: platform, .invalidToken("device \(index): \(problem)"))
        }
        return .routed(RoutedDevice(index: index, platform: platform, provider: .webhook, object: device, address: address))
    }

    static func describe(_ kind: JSONKind) -> String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .true, .false: "a boolean"
        case .null: "null"
        }
    }
}
