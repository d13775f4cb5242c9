import PushlineCore

/// Maps the top-level notification and the `android` override onto FCM v1 `message.android`
/// and `message.data`, in the campaign's payload style. docs/overrides.md has the table.
enum AndroidMapping {
    static let notificationPriorities = ["PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"]
    static let visibilities = [-1: "SECRET", 0: "PRIVATE", 1: "PUBLIC"]
    /// FCM's longest time to live: 28 days.
    static let maxTTL = 2_419_200

    /// Display options only a notification message (`android.notification`) can carry: a data
    /// message style (customerio, adobe) ignores them.
    static let displayOnly = [
        "icon", "icon_color", "notification_channel", "notification_tag", "priority", "visibility",
        "local_only", "style", "public_notification", "wearable", "live_update", "actions", "interactive", "summary",
    ]

    static func map(notification: ConfigNode, path: ConfigPath, style: PayloadStyle, context: inout CompileContext) -> [PayloadMember] {
        if style == .custom {
            return CustomPayload.android(notification: notification, path: path, context: &context)
        }
        let androidPath = path / "android"
        let android = notification["android"] ?? ConfigNode(.mapping([]))
        let title = context.firstText([(android["title"], androidPath / "title"), (notification["title"], path / "title")], role: .title)
        let body = context.firstText([(android["alert"], androidPath / "alert"), (notification["alert"], path / "alert")], role: .body)
        let image = context.firstText([(android["image"], androidPath / "image"), (notification["image"], path / "image")])
        let link = context.firstText([(android["link"], androidPath / "link"), (notification["link"], path / "link")])

        var config = deliveryOptions(android, androidPath, context: &context)
        var data: [PayloadMember] = []
        switch style {
        case .airship, .custom:
            if let node = android["link"] { context.log.error(androidPath / "link", StyleMessages.linkNeedsStyle, at: node) }
            var display: [PayloadMember] = []
            if let title { display.append(PayloadMember("title", title)) }
            if let body { display.append(PayloadMember("body", body)) }
            if let image { display.append(PayloadMember("image", image)) }
            // Every display option the schema gives an `android.notification` name.
            for property in NotificationSchema.android.properties {
                guard let wire = property.wire, let value = context.value(android[property.name], androidPath / property.name, property) else { continue }
                display.append(PayloadMember(wire, value))
            }
            // The schema's choices (-2…2) in order: PRIORITY_MIN … PRIORITY_MAX.
            if case .integerChoice(let choices) = NotificationSchema.android["priority"].type,
               let priority = android["priority"]?.intValue, let index = choices.firstIndex(of: priority), index < notificationPriorities.count {
                display.append(PayloadMember("notification_priority", .string(notificationPriorities[index])))
            }
            if let visibility = android["visibility"]?.intValue, let wire = visibilities[visibility] {
                display.append(PayloadMember("visibility", .string(wire)))
            }
            if let localOnly = context.boolean(android["local_only"], androidPath / "local_only") {
                display.append(PayloadMember("local_only", localOnly))
            }
            config.append(PayloadMember("notification", .makeObject(display)))
            data = context.stringMap(android["extra"] ?? ConfigNode(.mapping([])), androidPath / "extra")
            // FCM has no field for these: the Airship SDK reads them from data (PushMessage keys).
            data += AirshipData.members(android, androidPath, context: &context)
        case .customerio:
            warnIgnored(android, androidPath, style: style, context: &context)
            // Customer.io SDK form: everything in message.data (000_…: title, body, image, link).
            for (key, value) in [("title", title), ("body", body), ("image", image), ("link", link)] {
                if let value { data.append(PayloadMember(key, value)) }
            }
            data += context.stringMap(android["extra"] ?? ConfigNode(.mapping([])), androidPath / "extra")
        case .adobe:
            warnIgnored(android, androidPath, style: style, context: &context)
            // Adobe Campaign's data message (002_/004_): the same keys as its iOS custom fields.
            for (key, value) in [("title", title), ("body", body)] {
                if let value { data.append(PayloadMember(key, value)) }
            }
            for (key, wire) in [("sound", "sound"), ("category", "category")] {
                if let value = context.text(android[key], androidPath / key) { data.append(PayloadMember(wire, value)) }
            }
            if let link { data.append(PayloadMember("uri", link)) }
            if let image { data.append(PayloadMember("media-attachment-url", image)) }
            data += AdobeTracking.members(context: &context)
            data += context.stringMap(android["extra"] ?? ConfigNode(.mapping([])), androidPath / "extra")
        }
        var message: [PayloadMember] = []
        if !config.isEmpty { message.append(PayloadMember("android", .makeObject(config))) }
        if !data.isEmpty { message.append(PayloadMember("data", .makeObject(data))) }
        return message
    }

    /// `android` config members every style keeps: collapse key, delivery priority, time to live.
    static func deliveryOptions(_ android: ConfigNode, _ androidPath: ConfigPath, context: inout CompileContext) -> [PayloadMember] {
        var config: [PayloadMember] = []
        if let collapse = context.text(android["collapse_key"], androidPath / "collapse_key") {
            config.append(PayloadMember("collapse_key", collapse))
        }
        if let priority = android["delivery_priority"]?.stringValue {
            config.append(PayloadMember("priority", .string(priority == "high" ? "HIGH" : "NORMAL")))
        }
        if let ttlNode = android["time_to_live"], let seconds = context.expirySeconds(ttlNode, androidPath / "time_to_live") {
            config.append(PayloadMember("ttl", .string("\(min(seconds, maxTTL))s")))
        }
        if let deliverTo = android["deliver_to"] {
            context.log.warning(androidPath / "deliver_to", "has no effect: Pushline addresses every device the audience lists", at: deliverTo)
        }
        return config
    }

    static func warnIgnored(_ android: ConfigNode, _ androidPath: ConfigPath, style: PayloadStyle, context: inout CompileContext) {
        for key in displayOnly where key != "category" {
            if let node = android[key] {
                context.log.warning(androidPath / key, "is ignored by the \(style.rawValue) style: its Android SDK builds the notification from message.data", at: node)
            }
        }
    }
}

/// Android display options without an FCM field, under the Airship Android SDK's `PushMessage`
/// extra names; objects travel as JSON strings (data values are strings).
enum AirshipData {
    static func members(_ android: ConfigNode, _ p: ConfigPath, context: inout CompileContext) -> [PayloadMember] {
        var data: [PayloadMember] = []
        for (key, wire) in [("summary", "com.urbanairship.summary"), ("category", "com.urbanairship.category")] {
            if let value = context.text(android[key], p / key) { data.append(PayloadMember(wire, value)) }
        }
        for (key, wire) in [
            ("style", "com.urbanairship.style"), ("public_notification", "com.urbanairship.public_notification"),
            ("wearable", "com.urbanairship.wearable"), ("live_update", "com.urbanairship.live_update"),
        ] {
            if let value = android[key] { data.append(PayloadMember(wire, .jsonString(context.json(value, p / key)))) }
        }
        if let actions = AirshipActions.object(android["actions"], p / "actions", context: &context) {
            data.append(PayloadMember("com.urbanairship.actions", .jsonString(actions)))
        }
        if let interactive = android["interactive"] {
            if let type = context.text(interactive["type"], p / "interactive" / "type") {
                data.append(PayloadMember("com.urbanairship.interactive_type", type))
            }
            if let buttons = interactive["button_actions"] {
                data.append(PayloadMember("com.urbanairship.interactive_actions", .jsonString(context.json(buttons, p / "interactive" / "button_actions"))))
            }
        }
        return data
    }
}
