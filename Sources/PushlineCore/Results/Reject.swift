/// Why a line or a device was not sent: a stable `code` for machines, a `message` for people.
public struct RejectReason: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func invalidJSON(_ error: JSONParseError) -> Self {
        .init("invalid_json", error.description)
    }
    public static func lineTooLong(_ bytes: Int, limit: Int) -> Self {
        .init("line_too_long", "line is \(bytes) bytes, more than the limit of \(limit)")
    }
    public static func missingID(_ detail: String) -> Self { .init("missing_id", detail) }
    public static func noDevices(_ detail: String) -> Self { .init("no_devices", detail) }
    public static func invalidDevice(_ detail: String) -> Self { .init("invalid_device", detail) }
    public static func unknownPlatform(_ name: String) -> Self {
        .init("unknown_platform", "unknown platform '\(name)' (expected one of \(Platform.allCases.filter { $0 != .open }.map(\.rawValue).joined(separator: ", ")) or open::<name>)")
    }
    public static func invalidToken(_ detail: String) -> Self { .init("invalid_token", detail) }
    public static func payloadTooLarge(provider: Provider, size: Int, limit: Int, what: String = "payload") -> Self {
        .init("payload_too_large", "\(provider.rawValue) \(what) is \(size) bytes, over the limit of \(limit)")
    }
    public static func render(_ field: String, _ detail: String, code: String = "render_error") -> Self {
        .init(code, "\(field): \(detail)")
    }
}

/// Why a device was deliberately not addressed (not an error).
public struct SkipReason: Sendable, Equatable {
    public var code: String
    public var message: String
    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
    /// The code of a device whose type the campaign does not address. Encoding tallies these per
    /// provider and records only the code, so no message is made per device.
    public static let notTargetedCode = "device_type_not_targeted"
    /// The code of a device whose recipient another shard takes (`AudienceShard`).
    public static let otherShardCode = "other_shard"
    /// An experiment's holdout: every device of a control recipient (`ExperimentSplit`).
    public static let holdout = SkipReason("holdout", "the recipient is in the experiment's control group (holdout)")
}
