import PushlineCore

/// Maps the top-level notification and the `android` override onto FCM v1 `message.android`
/// and `message.data`. docs/overrides.md has the table this code implements.
enum AndroidMapping {
    static let notificationPriorities = ["PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"]
    static let visibilities = [-1: "SECRET", 0: "PRIVATE", 1: "PUBLIC"]
    /// FCM's longest time to live: 28 days.
    static let maxTTL = 2_419_200

    static func map(notification: ConfigNode, path: ConfigPath, context: inout CompileContext) -> [PayloadMember] {
        let androidPath = path / "android"
        let android = notification["android"] ?? ConfigNode(.mapping([]))

        var display: [PayloadMember] = []
        if let title = context.text(android["title"], androidPath / "title", role: .title)
            ?? context.text(notification["title"], path / "title", role: .title) {
            display.append(PayloadMember("title", title))
        }
        if let body = context.text(android["alert"], androidPath / "alert", role: .body)
            ?? context.text(notification["alert"], path / "alert", role: .body) {
            display.append(PayloadMember("body", body))
        }
        let simple: [(String, String)] = [
            ("icon", "icon"), ("icon_color", "color"), ("sound", "sound"),
            ("notification_tag", "tag"), ("notification_channel", "channel_id"),
        ]
        for (key, wire) in simple {
            if let value = context.text(android[key], androidPath / key) { display.append(PayloadMember(wire, value)) }
        }
        if let priority = android["priority"]?.intValue, (-2...2).contains(priority) {
            display.append(PayloadMember("notification_priority", .string(notificationPriorities[priority + 2])))
        }
        if let visibility = android["visibility"]?.intValue, let wire = visibilities[visibility] {
            display.append(PayloadMember("visibility", .string(wire)))
        }
        if let localOnly = context.boolean(android["local_only"], androidPath / "local_only") {
            display.append(PayloadMember("local_only", localOnly))
        }

        var config: [PayloadMember] = []
        if let collapse = context.text(android["collapse_key"], androidPath / "collapse_key") {
            config.append(PayloadMember("collapse_key", collapse))
        }
        if let priority = android["delivery_priority"]?.stringValue {
            config.append(PayloadMember("priority", .string(priority == "high" ? "HIGH" : "NORMAL")))
        }
        if let ttlNode = android["time_to_live"], let seconds = context.expirySeconds(ttlNode) {
            config.append(PayloadMember("ttl", .string("\(min(seconds, maxTTL))s")))
        }
        config.append(PayloadMember("notification", .makeObject(display)))

        var message: [PayloadMember] = [PayloadMember("android", .makeObject(config))]
        var data = context.stringMap(android["extra"] ?? ConfigNode(.mapping([])), androidPath / "extra")
        // FCM has no summary or category field; the app SDK reads them from data.
        for key in ["summary", "category"] {
            if let value = context.text(android[key], androidPath / key) { data.append(PayloadMember(key, value)) }
        }
        if !data.isEmpty { message.append(PayloadMember("data", .makeObject(data))) }
        return message
    }
}
