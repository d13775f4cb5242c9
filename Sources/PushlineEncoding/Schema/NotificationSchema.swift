import PushlineCore

/// The notification section of a pipeline file: a top-level alert and title plus platform
/// overrides selected by device type (Airship's model; docs/overrides.md maps every property to
/// the wire).
public enum NotificationSchema {
    public static let notification = ObjectSchema("notification", [
        SchemaProperty("alert", .string()),
        SchemaProperty("title", .string()),
        SchemaProperty("ios", .object(ios)),
        SchemaProperty("android", .object(android)),
    ])

    // MARK: iOS

    static let alertObject = ObjectSchema("ios.alert", [
        SchemaProperty("title", .string()),
        SchemaProperty("subtitle", .string()),
        SchemaProperty("body", .string()),
        SchemaProperty("launch-image", .string()),
        SchemaProperty("title-loc-key", .string()),
        SchemaProperty("title-loc-args", .array(.string())),
        SchemaProperty("subtitle-loc-key", .string()),
        SchemaProperty("subtitle-loc-args", .array(.string())),
        SchemaProperty("loc-key", .string()),
        SchemaProperty("loc-args", .array(.string())),
        SchemaProperty("action-loc-key", .string()),
        SchemaProperty("summary-arg", .string()),
        SchemaProperty("summary-arg-count", .integer(0...Int(Int32.max))),
    ])

    static let criticalSound = ObjectSchema("ios.sound", [
        SchemaProperty("name", .string()),
        SchemaProperty("critical", .oneOf([.boolean, .integerChoice([0, 1])])),
        SchemaProperty("volume", .number(0...1)),
    ])

    public static let apnsExtraKeys = KeyRule(exact: ["aps"], reason: "it would replace the generated APNs 'aps' dictionary")

    public static let ios = ObjectSchema("ios", [
        SchemaProperty("alert", .oneOf([.string(), .object(alertObject)])),
        SchemaProperty("title", .string()),
        SchemaProperty("subtitle", .string()),
        SchemaProperty("sound", .oneOf([.string(), .object(criticalSound)])),
        SchemaProperty("badge", .oneOf([.string(), .integer(0...99_999)])),
        SchemaProperty("thread_id", .string()),
        SchemaProperty("category", .string()),
        SchemaProperty("content_available", .boolean),
        SchemaProperty("mutable_content", .oneOf([.boolean, .integerChoice([0, 1])])),
        SchemaProperty("interruption_level", .enumeration(["passive", "active", "time-sensitive", "critical"])),
        SchemaProperty("relevance_score", .number(0...1)),
        SchemaProperty("target_content_id", .string()),
        SchemaProperty("filter_criteria", .string()),
        SchemaProperty("collapse_id", .string(.maxBytes(ProviderLimits.apnsCollapseID))),
        SchemaProperty("priority", .integerChoice([1, 5, 10])),
        SchemaProperty("expiry", .expiry),
        SchemaProperty("extra", .jsonMap(disallowed: apnsExtraKeys)),
    ], rules: [iosBadgeRule])

    /// `badge` is an integer, a template rendering one, `auto`, or a relative `+N` / `-N`.
    static let iosBadgeRule: @Sendable (ConfigNode, ConfigPath, inout DiagnosticLog, ValidationOptions) -> Void = { node, path, log, _ in
        guard let badge = node["badge"], let text = badge.stringValue, !isTemplated(text) else { return }
        if BadgeSpec.parse(text) == nil {
            log.error(path / "badge", "expected an integer, \"auto\", \"+N\" or \"-N\", found '\(text)'", at: badge)
        }
    }

    // MARK: Android

    public static let fcmDataKeys = KeyRule(
        exact: ["from", "message_type", "data", "notification"],
        prefixes: ["google", "gcm"],
        reason: "FCM reserves it"
    )

    public static let android = ObjectSchema("android", [
        SchemaProperty("alert", .string()),
        SchemaProperty("title", .string()),
        SchemaProperty("summary", .string()),
        SchemaProperty("icon", .string()),
        SchemaProperty("icon_color", .string(.color)),
        SchemaProperty("notification_channel", .string()),
        SchemaProperty("notification_tag", .string()),
        SchemaProperty("collapse_key", .string()),
        SchemaProperty("category", .enumeration(["alarm", "call", "email", "err", "event", "msg", "promo", "recommendation", "service", "social", "status", "sys", "transport"])),
        SchemaProperty("delivery_priority", .enumeration(["high", "normal"])),
        SchemaProperty("priority", .integerChoice([-2, -1, 0, 1, 2])),
        SchemaProperty("visibility", .integerChoice([-1, 0, 1])),
        SchemaProperty("local_only", .boolean),
        SchemaProperty("time_to_live", .expiry),
        SchemaProperty("sound", .string()),
        SchemaProperty("extra", .stringMap(disallowed: fcmDataKeys)),
    ])
}

/// What an iOS `badge` asks for.
public enum BadgeSpec: Sendable, Equatable {
    case absolute(Int)
    /// `auto`: one more than the device's current badge.
    case auto
    /// `+N` / `-N`: relative to the device's current badge.
    case relative(Int)

    public static func parse(_ text: String) -> BadgeSpec? {
        if text == "auto" { return .auto }
        guard let first = text.first, first == "+" || first == "-", let n = Int(text.dropFirst()), n >= 0 else {
            return Int(text).flatMap { $0 >= 0 ? .absolute($0) : nil }
        }
        return .relative(first == "-" ? -n : n)
    }
}
