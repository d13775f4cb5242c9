import PushlineCore

extension NotificationSchema {
    public static let fcmDataKeys = KeyRule(
        exact: ["from", "message_type", "data", "notification"],
        prefixes: ["google", "gcm"],
        reason: "FCM reserves it"
    )

    static let style = ObjectSchema("style", [
        SchemaProperty("type", .enumeration(["big_picture", "big_text", "inbox"]), required: true),
        SchemaProperty("big_picture", .string(.url)),
        SchemaProperty("big_text", .string()),
        SchemaProperty("lines", .array(.string())),
        SchemaProperty("summary", .string()),
        SchemaProperty("title", .string()),
    ], rules: [styleRule])

    /// Each style type needs its own field; fields of the other types are a likely mistake.
    static let styleRule: SchemaRule = { node, path, log, _ in
        guard let type = node["type"]?.stringValue else { return }
        let needed = ["big_picture": "big_picture", "big_text": "big_text", "inbox": "lines"]
        if let field = needed[type], node[field] == nil {
            log.error(path / field, "is required when type is \(type)", at: node)
        }
        for (other, field) in needed where other != type {
            if let value = node[field] {
                log.warning(path / field, "is ignored: type is \(type)", at: value)
            }
        }
    }

    static let publicNotification = ObjectSchema("public_notification", [
        SchemaProperty("title", .string()),
        SchemaProperty("alert", .string()),
        SchemaProperty("summary", .string()),
    ])

    static let wearable = ObjectSchema("android.wearable", [
        SchemaProperty("background_image", .string(.url)),
        SchemaProperty("extra_pages", .array(.object(ObjectSchema("android.wearable.extra_pages", [
            SchemaProperty("title", .string()),
            SchemaProperty("alert", .string()),
        ])))),
        SchemaProperty("interactive", .object(interactive)),
    ])

    static let liveUpdate = ObjectSchema("android.live_update", [
        SchemaProperty("event", .enumeration(["start", "update", "end"]), required: true),
        SchemaProperty("name", .string(.constant), required: true),
        SchemaProperty("type", .string(.constant)),
        SchemaProperty("content_state", .jsonMap()),
        SchemaProperty("dismissal_date", .integer(0...Int(Int32.max))),
        SchemaProperty("timestamp", .integer(0...Int(Int32.max))),
    ])

    /// Display options Android (FCM) and Fire OS (ADM) notifications share, with the wire name
    /// each platform's mapping gives them (nil: mapped by hand, like the texts).
    static func displayProperties(wire: (String) -> String?) -> [SchemaProperty] {
        [
            SchemaProperty("alert", .string()),
            SchemaProperty("title", .string()),
            SchemaProperty("summary", .string(), wire: wire("summary")),
            SchemaProperty("icon", .string(), wire: wire("icon")),
            SchemaProperty("icon_color", .string(.color), wire: wire("icon_color")),
            SchemaProperty("notification_channel", .string(), wire: wire("notification_channel")),
            SchemaProperty("notification_tag", .string(), wire: wire("notification_tag")),
        ]
    }

    /// FCM's `android.notification` names (the Airship SDK reads `summary` from data instead).
    static let androidNotificationNames = ["icon": "icon", "icon_color": "color", "notification_channel": "channel_id", "notification_tag": "tag", "sound": "sound"]

    public static let android = ObjectSchema("android", displayProperties(wire: { androidNotificationNames[$0] }) + [
        SchemaProperty("collapse_key", .string()),
        SchemaProperty("category", .enumeration(["alarm", "call", "email", "err", "event", "msg", "promo", "recommendation", "service", "social", "status", "sys", "transport"])),
        SchemaProperty("delivery_priority", .enumeration(["high", "normal"])),
        SchemaProperty("deliver_to", .enumeration(["all", "opted_in"])),
        SchemaProperty("delay_while_idle", .boolean, deprecated: true),
        SchemaProperty("priority", .integerChoice([-2, -1, 0, 1, 2])),
        SchemaProperty("visibility", .integerChoice([-1, 0, 1])),
        SchemaProperty("local_only", .boolean),
        SchemaProperty("time_to_live", .expiry),
        SchemaProperty("sound", .string(), wire: "sound"),
        SchemaProperty("extra", .stringMap(disallowed: fcmDataKeys)),
        SchemaProperty("style", .object(style)),
        SchemaProperty("public_notification", .object(publicNotification)),
        SchemaProperty("wearable", .object(wearable)),
        SchemaProperty("live_update", .object(liveUpdate)),
        SchemaProperty("actions", .object(actions)),
        SchemaProperty("interactive", .object(interactive)),
        SchemaProperty("link", .string()),
        SchemaProperty("image", .string(.url)),
    ], rules: [publicNotificationRule])

    /// Airship: the public version "is only useful with visibility set to private".
    static let publicNotificationRule: SchemaRule = { node, path, log, _ in
        if let value = node["public_notification"], node["visibility"]?.intValue != 0 {
            log.warning(path / "public_notification", "is shown only when visibility is 0 (private)", at: value)
        }
    }

    /// Fire OS (ADM): the Android display options the Airship SDK applies itself, in `data`
    /// under `com.urbanairship.<key>` (the SDK's ADM extras).
    public static let amazon = ObjectSchema("amazon", displayProperties(wire: { $0 == "alert" || $0 == "title" ? nil : "com.urbanairship.\($0)" }) + [
        SchemaProperty("sound", .string(), wire: "com.urbanairship.sound"),
        SchemaProperty("consolidation_key", .string()),
        SchemaProperty("expires_after", .expiry),
        SchemaProperty("extra", .stringMap()),
        SchemaProperty("style", .object(style)),
        SchemaProperty("actions", .object(actions)),
        SchemaProperty("interactive", .object(interactive)),
    ])
}
