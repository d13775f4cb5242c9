import PushlineCore

/// Maps the top-level notification and the `ios` override onto an APNs payload (`aps` plus
/// custom keys) and its headers, in the campaign's payload style. docs/overrides.md has the
/// table this code implements.
enum IOSMapping {
    struct Result {
        var payload: PayloadNode
        /// Alert, sound or badge present: the push is shown to the user.
        var userVisible: Bool
        var pushType: String
        var priority: Int
        var expiration: Int?
        var collapseID: HeaderValue?
        /// A Live Activity push: APNs only (topic suffix `.push-type.liveactivity`).
        var isLiveActivity = false
    }

    /// Alert-object keys passed through to `aps.alert` under their APNs names: every property of
    /// the schema's alert object but the texts, which fall back to the override and top level.
    static let alertPassThrough = NotificationSchema.alertObject.properties.filter { !["title", "subtitle", "body"].contains($0.name) }

    static let schema = NotificationSchema.ios

    static func map(notification: ConfigNode, path: ConfigPath, style: PayloadStyle, context: inout CompileContext) -> Result? {
        let iosPath = path / "ios"
        let ios = notification["ios"] ?? ConfigNode(.mapping([]))
        if let live = ios["live_activity"] {
            return IOSLiveActivity.map(live, ios: ios, path: iosPath, context: &context)
        }
        if style == .custom {
            return CustomPayload.ios(notification: notification, path: path, context: &context)
        }
        let alertNode = ios["alert"]
        let alertObject = alertNode?.mappingEntries != nil ? alertNode : nil

        // Alert text: the most specific value wins (alert object, then ios override, then top level).
        var alertMembers: [PayloadMember] = []
        if let value = context.firstText([
            (alertObject?["title"], iosPath / "alert" / "title"), (ios["title"], iosPath / "title"), (notification["title"], path / "title"),
        ], role: .title) {
            alertMembers.append(PayloadMember("title", value))
        }
        if let value = context.firstText([
            (alertObject?["subtitle"], iosPath / "alert" / "subtitle"), (ios["subtitle"], iosPath / "subtitle"),
        ], role: .title) {
            alertMembers.append(PayloadMember("subtitle", value))
        }
        if let value = context.firstText([
            (alertObject?["body"], iosPath / "alert" / "body"),
            (alertObject == nil ? alertNode : nil, iosPath / "alert"),
            (notification["alert"], path / "alert"),
        ], role: .body) {
            alertMembers.append(PayloadMember("body", value))
        }
        if let alertObject {
            for property in alertPassThrough {
                if let value = context.value(alertObject[property.name], iosPath / "alert" / property.name, property) {
                    alertMembers.append(PayloadMember(property.name, value))
                }
            }
        }

        var aps: [PayloadMember] = []
        if alertMembers.count == 1, alertMembers[0].key == "body", alertObject == nil {
            aps.append(PayloadMember("alert", alertMembers[0].value))   // plain string alert
        } else if !alertMembers.isEmpty {
            aps.append(PayloadMember("alert", .makeObject(alertMembers)))
        }

        if let badge = ios["badge"] {
            let p = iosPath / "badge"
            if let value = badge.intValue {
                aps.append(PayloadMember("badge", .integer(value), omitIfEmpty: false))
            } else if let text = badge.stringValue, !isTemplated(text), let spec = BadgeSpec.parse(text) {
                switch spec {
                case .absolute(let n): aps.append(PayloadMember("badge", .integer(n), omitIfEmpty: false))
                case .auto: aps.append(PayloadMember("badge", .relativeBadge(1, field: p.description), omitIfEmpty: false))
                case .relative(let delta): aps.append(PayloadMember("badge", .relativeBadge(delta, field: p.description), omitIfEmpty: false))
                }
            } else if let value = context.integer(badge, p, range: schema["badge"].type.integerRange) {
                aps.append(PayloadMember("badge", value))
            }
        }

        if let sound = ios["sound"] {
            aps.append(PayloadMember("sound", soundNode(sound, iosPath / "sound", context: &context) ?? .string("")))
        }

        // An interactive notification's type is its category (Airship: it takes precedence).
        let category = ios["interactive"]?["type"].map { ($0, iosPath / "interactive" / "type") } ?? ios["category"].map { ($0, iosPath / "category") }
        func wire(_ key: String) -> String { schema[key].wire ?? key }
        let simple: [(ConfigNode?, ConfigPath, String)] = [
            (ios["thread_id"], iosPath / "thread_id", "thread_id"), (category?.0, category?.1 ?? iosPath, "category"),
            (ios["target_content_id"], iosPath / "target_content_id", "target_content_id"),
            (ios["interruption_level"], iosPath / "interruption_level", "interruption_level"),
            (ios["filter_criteria"], iosPath / "filter_criteria", "filter_criteria"),
        ]
        for (node, p, key) in simple {
            if let value = context.value(node, p, schema[key]) { aps.append(PayloadMember(wire(key), value)) }
        }
        let contentAvailable = context.flag(ios["content_available"], iosPath / "content_available")
        if let contentAvailable { aps.append(PayloadMember(wire("content_available"), contentAvailable)) }

        // Images need the notification service extension: media attachments, and every push of
        // the Customer.io style (its SDK also reports "delivered" from there).
        let link = context.firstText([(ios["link"], iosPath / "link"), (notification["link"], path / "link")])
        let image = context.firstText([
            (ios["image"], iosPath / "image"), (notification["image"], path / "image"),
            (ios["media_attachment"]?["url"], iosPath / "media_attachment" / "url"),
        ])
        var mutable = context.flag(ios["mutable_content"], iosPath / "mutable_content")
        if ios["media_attachment"] != nil || style == .customerio || (style != .customerio && image != nil) {
            mutable = .integer(1)
        }
        if let mutable { aps.append(PayloadMember(wire("mutable_content"), mutable)) }
        if let score = context.value(ios["relevance_score"], iosPath / "relevance_score", schema["relevance_score"]) {
            aps.append(PayloadMember(wire("relevance_score"), score))
        }

        var top: [PayloadMember] = [PayloadMember("aps", .makeObject(aps), omitIfEmpty: false)]
        switch style {
        case .airship, .custom:
            if let media = ios["media_attachment"] {
                top.append(PayloadMember("com.urbanairship.media_attachment", mediaAttachment(media, iosPath / "media_attachment", context: &context)))
            } else if let image {
                top.append(PayloadMember("com.urbanairship.media_attachment", .makeObject([PayloadMember("url", .makeArray([image]))])))
            }
            if let actions = ios["actions"] {
                top += AirshipActions.members(actions, iosPath / "actions", context: &context)
            }
            if let buttons = ios["interactive"]?["button_actions"] {
                top.append(PayloadMember("com.urbanairship.interactive_actions", context.json(buttons, iosPath / "interactive" / "button_actions")))
            }
            if let node = ios["link"] {
                context.log.error(iosPath / "link", StyleMessages.linkNeedsStyle, at: node)
            }
        case .customerio:
            var push: [PayloadMember] = []
            if let link { push.append(PayloadMember("link", link)) }
            if let image { push.append(PayloadMember("image", image)) }
            if !push.isEmpty { top.append(PayloadMember("CIO", .makeObject([PayloadMember("push", .makeObject(push))]))) }
        case .adobe:
            if let link { top.append(PayloadMember("uri", link)) }
            if let image { top.append(PayloadMember("media-attachment-url", image)) }
            top += AdobeTracking.members(context: &context)
        }
        for (key, value) in ios["extra"]?.mappingEntries ?? [] {
            top.append(PayloadMember(key, context.json(value, iosPath / "extra" / key), omitIfEmpty: false))
        }

        // Push type and priority (APNs: priority 10 must be user-visible; background pushes use 5).
        let userVisible = !alertMembers.isEmpty || ios["sound"] != nil || ios["badge"] != nil
        let isBackground = !userVisible && contentAvailable != nil
        if !userVisible && !isBackground {
            context.log.error(iosPath, "the iOS push shows nothing: give an alert (here or at the top level), a sound or a badge, or set content_available for a background push", at: ios)
            return nil
        }
        var priority = isBackground ? 5 : 10
        if let configured = schema["priority"].int(in: ios) {
            if configured == 10 && !userVisible {
                context.log.error(iosPath / "priority", "priority 10 requires a user-visible push (alert, sound or badge); a background push must use 5", at: ios["priority"])
            }
            priority = configured
        }
        return Result(
            payload: .makeObject(top), userVisible: userVisible,
            pushType: isBackground ? "background" : "alert", priority: priority,
            expiration: ios["expiry"].flatMap { context.expiryTimestamp($0, iosPath / "expiry") },
            collapseID: context.header(ios["collapse_id"], iosPath / "collapse_id", NotificationSchema.ios["collapse_id"])
        )
    }

    /// A sound name, or the critical-alert dictionary `{critical: 1, name, volume}`.
    static func soundNode(_ sound: ConfigNode, _ p: ConfigPath, context: inout CompileContext) -> PayloadNode? {
        guard sound.mappingEntries != nil else { return context.text(sound, p) }
        var members: [PayloadMember] = []
        if let critical = sound["critical"], critical.boolValue == true || critical.intValue == 1 {
            members.append(PayloadMember("critical", .integer(1)))
        }
        if let name = context.text(sound["name"], p / "name") { members.append(PayloadMember("name", name)) }
        if let volume = context.value(sound["volume"], p / "volume", NotificationSchema.criticalSound["volume"]) {
            members.append(PayloadMember("volume", volume))
        }
        return .makeObject(members)
    }

    /// Airship's media attachment extension reads `url` as a list of URLs.
    static func mediaAttachment(_ media: ConfigNode, _ p: ConfigPath, context: inout CompileContext) -> PayloadNode {
        var members: [PayloadMember] = []
        if let url = context.text(media["url"], p / "url") { members.append(PayloadMember("url", .makeArray([url]))) }
        for key in ["content", "options"] {
            if let value = media[key] { members.append(PayloadMember(key, context.json(value, p / key))) }
        }
        return .makeObject(members)
    }
}

enum StyleMessages {
    static let linkNeedsStyle = "is read by the customerio and adobe styles; with airship use actions: { open: { type: deep_link, content: … } }"
}

/// Adobe Campaign's tracking ids: `_mId` (broadlog id) and `_dId` (delivery id), read from the
/// record's `tracking` object and omitted when the record has none.
enum AdobeTracking {
    static let recordPaths = [("_mId", "tracking.broadlog_id"), ("_dId", "tracking.delivery_id")]

    static func members(context: inout CompileContext) -> [PayloadMember] {
        recordPaths.compactMap { key, recordPath in
            context.recordText(recordPath, field: "style.adobe.\(key)").map { PayloadMember(key, $0) }
        }
    }
}
