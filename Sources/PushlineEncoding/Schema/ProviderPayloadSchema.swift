import PushlineCore

/// The providers' own payload shapes, for raw payloads (`style: custom`): an APNs payload and an
/// FCM v1 `{"message": {...}}`, checked before anything is sent.
public enum ProviderPayloadSchema {
    static let aps = ObjectSchema("aps", [
        SchemaProperty("alert", .oneOf([.string(), .object(NotificationSchema.alertObject)])),
        SchemaProperty("badge", .integer(NotificationSchema.badgeRange)),
        SchemaProperty("sound", .oneOf([.string(), .object(NotificationSchema.criticalSound)])),
        SchemaProperty("thread-id", .string()),
        SchemaProperty("category", .string()),
        SchemaProperty("content-available", .integerChoice([0, 1])),
        SchemaProperty("mutable-content", .integerChoice([0, 1])),
        SchemaProperty("target-content-id", .string()),
        SchemaProperty("interruption-level", .enumeration(["passive", "active", "time-sensitive", "critical"])),
        SchemaProperty("relevance-score", .number(0...1)),
        SchemaProperty("filter-criteria", .string()),
        SchemaProperty("timestamp", .integer()),
        SchemaProperty("event", .enumeration(["start", "update", "end"])),
        SchemaProperty("content-state", .jsonMap()),
        SchemaProperty("stale-date", .integer()),
        SchemaProperty("dismissal-date", .integer()),
        SchemaProperty("attributes-type", .string()),
        SchemaProperty("attributes", .jsonMap()),
    ])

    /// An APNs payload: `aps` plus custom keys beside it.
    public static let apnsPayload = ObjectSchema("APNs payload", [
        SchemaProperty("aps", .object(aps), required: true),
    ], prefixed: [SchemaProperty("", .jsonMap())])

    static let fcmNotification = ObjectSchema("message.notification", [
        SchemaProperty("title", .string()),
        SchemaProperty("body", .string()),
        SchemaProperty("image", .string(.url)),
    ])

    static let fcmAPNs = ObjectSchema("message.apns", [
        SchemaProperty("headers", .jsonMap()),
        SchemaProperty("payload", .object(apnsPayload)),
        SchemaProperty("fcm_options", .jsonMap()),
        SchemaProperty("live_activity_token", .string()),
    ], rules: [apnsHeaderValuesRule])

    /// FCM forwards `apns.headers` as HTTP headers: every value must be a string.
    static let apnsHeaderValuesRule: SchemaRule = { node, path, log, _ in
        for (key, value) in node["headers"]?.mappingEntries ?? [] where value.stringValue == nil && value.mappingEntries == nil {
            log.error(path / "headers" / key, "FCM header values are strings: write \"\(SchemaValidator.describeValue(value))\" in quotes", at: value)
        }
    }

    static let fcmAndroid = ObjectSchema("message.android", [
        SchemaProperty("collapse_key", .string()),
        SchemaProperty("priority", .enumeration(["NORMAL", "HIGH"])),
        SchemaProperty("ttl", .string()),
        SchemaProperty("restricted_package_name", .string()),
        SchemaProperty("data", .stringMap(disallowed: NotificationSchema.fcmDataKeys)),
        SchemaProperty("notification", .jsonMap()),
        SchemaProperty("fcm_options", .jsonMap()),
        SchemaProperty("direct_boot_ok", .boolean),
    ], rules: [ttlRule])

    /// FCM durations are seconds with an `s` suffix (`"3.5s"`), at most 28 days.
    static let ttlRule: SchemaRule = { node, path, log, _ in
        guard let ttl = node["ttl"], let text = ttl.stringValue, !isTemplated(text) else { return }
        guard text.hasSuffix("s"), let seconds = Double(text.dropLast()), seconds >= 0, seconds <= 2_419_200 else {
            return log.error(path / "ttl", "expected a duration such as \"3600s\" (0 to 2419200 seconds), found '\(text)'", at: ttl)
        }
    }

    /// The FCM v1 message without its target: Pushline sets `token` from the audience.
    static let fcmMessage = ObjectSchema("message", [
        SchemaProperty("notification", .object(fcmNotification)),
        SchemaProperty("data", .stringMap(disallowed: NotificationSchema.fcmDataKeys)),
        SchemaProperty("android", .object(fcmAndroid)),
        SchemaProperty("apns", .object(fcmAPNs)),
        SchemaProperty("webpush", .jsonMap()),
        SchemaProperty("fcm_options", .object(ObjectSchema("message.fcm_options", [SchemaProperty("analytics_label", .string(.constant))]))),
    ], refused: [
        "token": "is set per device from the audience; remove it from the custom payload",
        "topic": "Pushline sends to devices, not topics; remove it from the custom payload",
        "condition": "Pushline sends to devices, not conditions; remove it from the custom payload",
    ])

    public static let fcmRequest = ObjectSchema("FCM payload", [
        SchemaProperty("message", .object(fcmMessage), required: true),
    ])
}
