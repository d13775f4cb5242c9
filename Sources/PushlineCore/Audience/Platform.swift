#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A device type as the audience and the pipeline's `device_types` name it.
///
/// Open channels are written `open::<name>` (`open::slack`): the platform is `.open` and the
/// name picks the channel's override and webhook (see `OpenChannelName`).
public enum Platform: String, Sendable, CaseIterable, Hashable {
    case ios, android, web, amazon, sms, email, open

    /// The prefix of open-channel platform names.
    public static let openPrefix = "open::"

    /// The provider a device of this platform goes through unless the record names one.
    public var defaultProvider: Provider {
        switch self {
        case .ios: .apns
        case .android: .fcm
        case .web: .webpush
        case .amazon: .adm
        case .sms, .email, .open: .webhook
        }
    }

    /// Whether a device of this platform may name `provider` (iOS through FCM is common). A
    /// switch, checked per routed device: a `Set` there was an allocation per device.
    public func allows(_ provider: Provider) -> Bool {
        // By platform, exhaustively: a new platform must say which providers reach it.
        switch self {
        case .ios: provider == .apns || provider == .fcm
        case .android: provider == .fcm
        case .web: provider == .webpush || provider == .fcm
        case .amazon: provider == .adm
        case .sms, .email, .open: provider == .webhook
        }
    }

    /// Providers that can reach this platform (`allows`, as a set).
    public var allowedProviders: Set<Provider> {
        Set(Provider.allCases.filter(allows))
    }

    /// Whether devices of this platform carry an `address` (phone number, email, channel user)
    /// rather than a push token.
    public var usesAddress: Bool {
        switch self {
        case .sms, .email, .open: true
        case .ios, .android, .web, .amazon: false
        }
    }

    /// `ios`, `android`, ... or `open::<name>` with a valid channel name.
    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        // Compared as bytes: this runs for every device of the audience.
        if bytes.equals("ios") { self = .ios }
        else if bytes.equals("android") { self = .android }
        else if bytes.equals("web") { self = .web }
        else if bytes.equals("amazon") { self = .amazon }
        else if bytes.equals("sms") { self = .sms }
        else if bytes.equals("email") { self = .email }
        else if bytes.starts(with: Platform.openPrefix.utf8) {
            guard OpenChannelName.isValid(bytes[Platform.openPrefix.utf8.count...]) else { return nil }
            self = .open
        } else { return nil }
    }

    /// By case, not by raw value (see `Provider`).
    public static func == (lhs: Platform, rhs: Platform) -> Bool { lhs.ordinal == rhs.ordinal }
    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }

    /// Index into per-platform arrays (`allCases` order).
    public var ordinal: Int {
        switch self {
        case .ios: 0
        case .android: 1
        case .web: 2
        case .amazon: 3
        case .sms: 4
        case .email: 5
        case .open: 6
        }
    }

    /// Parses a `device_types` entry: a platform name or `open::<name>`.
    public static func parse(deviceType text: String) -> (platform: Platform, openChannel: String?)? {
        var copy = text
        return copy.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            guard let platform = Platform(utf8: raw) else { return nil }
            return (platform, platform == .open ? String(text.dropFirst(openPrefix.count)) : nil)
        }
    }
}

/// Open-channel names: what follows `open::`. Letters, digits, `_` and `-`, 1 to 64 of them,
/// so the name is safe in file names, messages and JSON without escaping.
public enum OpenChannelName {
    public static func isValid(_ name: some Collection<UInt8>) -> Bool {
        guard (1...64).contains(name.count) else { return false }
        return name.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2D
        }
    }
}

/// A push provider: who receives the request.
public enum Provider: String, Sendable, CaseIterable, Hashable, Comparable, Codable, CodingKeyRepresentable {
    /// `webhook`: SMS, MMS, email and open channels, POSTed to a URL configured per channel.
    case apns, fcm, webpush, adm, webhook

    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        if bytes.equals("apns") { self = .apns }
        else if bytes.equals("fcm") { self = .fcm }
        else if bytes.equals("webpush") { self = .webpush }
        else if bytes.equals("adm") { self = .adm }
        else if bytes.equals("webhook") { self = .webhook }
        else { return nil }
    }

    public static func < (lhs: Provider, rhs: Provider) -> Bool {
        lhs.ordinal < rhs.ordinal
    }

    // By case, not by raw value: the standard library's defaults for raw-value enums compare and
    // hash the raw `String`, and providers are compared and used as keys for every device.
    public static func == (lhs: Provider, rhs: Provider) -> Bool { lhs.ordinal == rhs.ordinal }
    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }

    /// Index into per-provider arrays (`allCases` order).
    public var ordinal: Int {
        switch self {
        case .apns: 0
        case .fcm: 1
        case .webpush: 2
        case .adm: 3
        case .webhook: 4
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Byte equality with a compile-time string, by `memcmp`-style comparison (no String views).
    @inline(__always)
    func equals(_ text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount
            && (count == 0 || memcmp(baseAddress!, text.utf8Start, count) == 0)
    }
}
