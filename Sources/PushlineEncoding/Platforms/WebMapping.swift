import PushlineCore

/// Maps the top-level notification and the `web` override onto the Web Push plaintext: a JSON
/// object in the Notification API's shape (`title`, `body`, `icon`, `image`,
/// `requireInteraction`, `actions`, `data`) that a service worker passes to `showNotification`.
enum WebMapping {
    static let schema = NotificationSchema.web

    struct Result {
        var notification: PayloadNode
        /// The members, for FCM's `webpush.notification` (which holds the same fields).
        var members: [PayloadMember]
        var data: [PayloadMember]
        var link: PayloadNode?
        var ttl: Int
        var urgency: String
        var topic: String?
    }

    static func map(notification: ConfigNode, path: ConfigPath, style: PayloadStyle, context: inout CompileContext) -> Result {
        let p = path / "web"
        let web = notification["web"] ?? ConfigNode(.mapping([]))
        let ttl = web["time_to_live"].flatMap { context.expirySeconds($0, p / "time_to_live") } ?? schema["time_to_live"].int(in: nil) ?? 0
        let urgency = schema["urgency"].string(in: web) ?? "normal"
        let topic = web["topic"]?.stringValue
        if style == .custom {
            guard let custom = notification["custom"]?["web"] else {
                context.log.error(path / "custom" / "web", "is required with style custom when device_types includes web (the notification JSON)", at: notification)
                return Result(notification: .makeObject([]), members: [], data: [], link: nil, ttl: ttl, urgency: urgency, topic: topic)
            }
            let node = context.json(custom, path / "custom" / "web")
            return Result(notification: node, members: [], data: [], link: nil, ttl: ttl, urgency: urgency, topic: topic)
        }
        var members: [PayloadMember] = []
        if let title = context.firstText([(web["title"], p / "title"), (notification["title"], path / "title")], role: .title) {
            members.append(PayloadMember("title", title))
        }
        if let body = context.firstText([(web["alert"], p / "alert"), (notification["alert"], path / "alert")], role: .body) {
            members.append(PayloadMember("body", body))
        }
        if let icon = context.text(web["icon"]?["url"], p / "icon" / "url") { members.append(PayloadMember("icon", icon)) }
        if let image = context.firstText([(web["image"]?["url"], p / "image" / "url"), (notification["image"], path / "image")]) {
            members.append(PayloadMember("image", image))
        }
        if let require = context.boolean(web["require_interaction"], p / "require_interaction") {
            members.append(PayloadMember("requireInteraction", require))
        }
        var data = context.stringMap(web["extra"] ?? ConfigNode(.mapping([])), p / "extra")
        var buttonActions: [PayloadMember] = []
        if let buttons = web["buttons"]?.sequenceElements {
            var actions: [PayloadNode] = []
            for (i, button) in buttons.enumerated() {
                let bp = (p / "buttons").appending(index: i)
                guard let id = button["id"]?.stringValue, let label = context.text(button["label"], bp / "label") else { continue }
                actions.append(.makeObject([PayloadMember("action", .string(id)), PayloadMember("title", label)]))
                if let buttonAction = button["actions"] {
                    buttonActions.append(PayloadMember(id, .makeObject(AirshipActions.members(buttonAction, bp / "actions", context: &context))))
                }
            }
            members.append(PayloadMember("actions", .makeArray(actions)))
        }
        // The service worker runs these when the notification or a button is clicked.
        if let actions = web["actions"] {
            data.append(PayloadMember("actions", .makeObject(AirshipActions.members(actions, p / "actions", context: &context))))
        }
        if !buttonActions.isEmpty { data.append(PayloadMember("button_actions", .makeObject(buttonActions))) }
        let link = context.firstText([(web["link"], p / "link"), (notification["link"], path / "link")])
        if let link { data.append(PayloadMember("link", link)) }
        var all = members
        if !data.isEmpty { all.append(PayloadMember("data", .makeObject(data))) }
        return Result(notification: .makeObject(all), members: members, data: data, link: link, ttl: ttl, urgency: urgency, topic: topic)
    }
}
