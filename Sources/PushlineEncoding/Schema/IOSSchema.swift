import PushlineCore

extension NotificationSchema {
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

    static let mediaCrop = ObjectSchema("ios.media_attachment.options.crop", [
        SchemaProperty("height", .number(0...1)),
        SchemaProperty("width", .number(0...1)),
        SchemaProperty("x", .number(0...1)),
        SchemaProperty("y", .number(0...1)),
    ])

    static let mediaAttachment = ObjectSchema("ios.media_attachment", [
        SchemaProperty("url", .string(.url), required: true),
        SchemaProperty("content", .object(ObjectSchema("ios.media_attachment.content", [
            SchemaProperty("title", .string()),
            SchemaProperty("subtitle", .string()),
            SchemaProperty("body", .string()),
        ]))),
        SchemaProperty("options", .object(ObjectSchema("ios.media_attachment.options", [
            SchemaProperty("crop", .object(mediaCrop)),
            SchemaProperty("time", .integer(0...Int(Int32.max))),
            SchemaProperty("hidden", .boolean),
        ]))),
    ])

    static let liveActivity = ObjectSchema("ios.live_activity", [
        SchemaProperty("event", .enumeration(["start", "update", "end"]), required: true),
        SchemaProperty("name", .string()),
        SchemaProperty("alert", .object(ObjectSchema("ios.live_activity.alert", [
            SchemaProperty("title", .string()),
            SchemaProperty("body", .string()),
            SchemaProperty("sound", .string()),
        ]))),
        SchemaProperty("attributes", .jsonMap()),
        SchemaProperty("attributes_type", .string(.constant)),
        SchemaProperty("content_state", .jsonMap()),
        SchemaProperty("dismissal_date", .integer(0...Int(Int32.max))),
        SchemaProperty("stale_date", .integer(0...Int(Int32.max))),
        SchemaProperty("timestamp", .integer(0...Int(Int32.max))),
        SchemaProperty("priority", .integerChoice([5, 10])),
        SchemaProperty("relevance_score", .number()),
    ], rules: [liveActivityStartRule])

    /// APNs push-to-start needs the attributes type and the initial attributes.
    static let liveActivityStartRule: SchemaRule = { node, path, log, _ in
        guard node["event"]?.stringValue == "start" else { return }
        for key in ["attributes_type", "attributes"] where node[key] == nil {
            log.error(path / key, "is required when event is start (APNs starts a Live Activity from attributes-type and attributes)", at: node)
        }
        if node["content_state"] == nil {
            log.error(path / "content_state", "is required when event is start (the activity's first content state)", at: node)
        }
    }

    public static let apnsExtraKeys = KeyRule(exact: ["aps"], reason: "it would replace the generated APNs 'aps' dictionary")

    public static let ios = ObjectSchema("ios", [
        SchemaProperty("alert", .oneOf([.string(), .object(alertObject)])),
        SchemaProperty("title", .string()),
        SchemaProperty("subtitle", .string()),
        SchemaProperty("sound", .oneOf([.string(), .object(criticalSound)])),
        SchemaProperty("badge", .oneOf([.string(), .integer(badgeRange)])),
        SchemaProperty("thread_id", .string(), wire: "thread-id"),
        SchemaProperty("category", .string(), wire: "category"),
        SchemaProperty("content_available", .boolean, wire: "content-available"),
        SchemaProperty("mutable_content", .oneOf([.boolean, .integerChoice([0, 1])]), wire: "mutable-content"),
        SchemaProperty("interruption_level", .enumeration(["passive", "active", "time-sensitive", "critical"]), wire: "interruption-level"),
        SchemaProperty("relevance_score", .number(0...1), wire: "relevance-score"),
        SchemaProperty("target_content_id", .string(), wire: "target-content-id"),
        SchemaProperty("filter_criteria", .string(), wire: "filter-criteria"),
        SchemaProperty("collapse_id", .string(.header(maxBytes: ProviderLimits.apnsCollapseID))),
        SchemaProperty("priority", .integerChoice([1, 5, 10])),
        SchemaProperty("expiry", .expiry),
        SchemaProperty("extra", .jsonMap(disallowed: apnsExtraKeys)),
        SchemaProperty("media_attachment", .object(mediaAttachment)),
        SchemaProperty("live_activity", .object(liveActivity)),
        SchemaProperty("actions", .object(actions)),
        SchemaProperty("interactive", .object(interactive)),
        SchemaProperty("link", .string()),
        SchemaProperty("image", .string(.url)),
    ], rules: [iosBadgeRule])

    /// APNs badge values (Airship's limit): every form of `badge` ends in this range, whether
    /// literal, rendered from a template, or relative to the device's badge.
    public static let badgeRange = 0...99_999

    /// `badge` is an integer, a template rendering one, `auto`, or a relative `+N` / `-N`; the
    /// number (absolute, or the step of a relative badge) is within `badgeRange`.
    static let iosBadgeRule: SchemaRule = { node, path, log, _ in
        guard let badge = node["badge"], let text = badge.stringValue, !isTemplated(text) else { return }
        switch BadgeSpec.parse(text) {
        case nil:
            log.error(path / "badge", "expected an integer, \"auto\", \"+N\" or \"-N\", found '\(text)'", at: badge)
        case .absolute(let n) where !badgeRange.contains(n):
            log.error(path / "badge", "\(n) is out of range: expected \(badgeRange.lowerBound) to \(badgeRange.upperBound)", at: badge)
        case .relative(let n) where n.magnitude > UInt(badgeRange.upperBound):
            log.error(path / "badge", "a relative badge changes it by at most \(badgeRange.upperBound), found '\(text)'", at: badge)
        default:
            break
        }
    }
}
