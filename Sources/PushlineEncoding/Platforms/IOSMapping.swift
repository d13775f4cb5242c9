import PushlineCore

/// Maps the top-level notification and the `ios` override onto an APNs payload (`aps` plus
/// custom keys) and its headers. docs/overrides.md has the table this code implements.
enum IOSMapping {
    struct Result {
        var payload: PayloadNode
        /// Alert, sound or badge present: the push is shown to the user.
        var userVisible: Bool
        var pushType: String
        var priority: Int
        var expiration: Int?
        var collapseID: TemplatedValue?
    }

    /// Alert-object keys passed through to `aps.alert` under their APNs names.
    static let alertPassThrough = [
        "launch-image", "title-loc-key", "title-loc-args", "subtitle-loc-key", "subtitle-loc-args",
        "loc-key", "loc-args", "action-loc-key", "summary-arg", "summary-arg-count",
    ]

    static func map(notification: ConfigNode, path: ConfigPath, context: inout CompileContext) -> Result? {
        let iosPath = path / "ios"
        let ios = notification["ios"] ?? ConfigNode(.mapping([]))
        let alertNode = ios["alert"]
        let alertObject = alertNode?.mappingEntries != nil ? alertNode : nil

        // Alert text: the most specific value wins (alert object, then ios override, then top level).
        var alertMembers: [PayloadMember] = []
        let titleNode: (ConfigNode, ConfigPath)? =
            alertObject?["title"].map { ($0, iosPath / "alert" / "title") }
            ?? ios["title"].map { ($0, iosPath / "title") }
            ?? notification["title"].map { ($0, path / "title") }
        let subtitleNode: (ConfigNode, ConfigPath)? =
            alertObject?["subtitle"].map { ($0, iosPath / "alert" / "subtitle") }
            ?? ios["subtitle"].map { ($0, iosPath / "subtitle") }
        let bodyNode: (ConfigNode, ConfigPath)? =
            alertObject?["body"].map { ($0, iosPath / "alert" / "body") }
            ?? (alertObject == nil ? alertNode.map { ($0, iosPath / "alert") } : nil)
            ?? notification["alert"].map { ($0, path / "alert") }

        if let (node, p) = titleNode, let value = context.text(node, p, role: .title) {
            alertMembers.append(PayloadMember("title", value))
        }
        if let (node, p) = subtitleNode, let value = context.text(node, p, role: .title) {
            alertMembers.append(PayloadMember("subtitle", value))
        }
        if let (node, p) = bodyNode, let value = context.text(node, p, role: .body) {
            alertMembers.append(PayloadMember("body", value))
        }
        if let alertObject {
            for key in alertPassThrough {
                guard let node = alertObject[key] else { continue }
                let p = iosPath / "alert" / key
                let value = key == "summary-arg-count" ? context.integer(node, p, range: 0...Int(Int32.max)) : context.json(node, p)
                if let value { alertMembers.append(PayloadMember(key, value)) }
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
                case .auto: aps.append(PayloadMember("badge", .relativeBadge(1), omitIfEmpty: false))
                case .relative(let delta): aps.append(PayloadMember("badge", .relativeBadge(delta), omitIfEmpty: false))
                }
            } else if let value = context.integer(badge, p, range: 0...99_999) {
                aps.append(PayloadMember("badge", value))
            }
        }

        if let sound = ios["sound"] {
            let p = iosPath / "sound"
            if sound.mappingEntries != nil {
                var members: [PayloadMember] = []
                if let critical = sound["critical"], critical.boolValue == true || critical.intValue == 1 {
                    members.append(PayloadMember("critical", .integer(1)))
                }
                if let name = context.text(sound["name"], p / "name") { members.append(PayloadMember("name", name)) }
                if let volume = context.number(sound["volume"], p / "volume", range: 0...1) {
                    members.append(PayloadMember("volume", volume))
                }
                aps.append(PayloadMember("sound", .makeObject(members)))
            } else if let value = context.text(sound, p) {
                aps.append(PayloadMember("sound", value))
            }
        }

        let simple: [(String, String)] = [
            ("thread_id", "thread-id"), ("category", "category"), ("target_content_id", "target-content-id"),
            ("interruption_level", "interruption-level"), ("filter_criteria", "filter-criteria"),
        ]
        for (key, wire) in simple {
            if let value = context.text(ios[key], iosPath / key) { aps.append(PayloadMember(wire, value)) }
        }
        let contentAvailable = context.flag(ios["content_available"], iosPath / "content_available")
        if let contentAvailable { aps.append(PayloadMember("content-available", contentAvailable)) }
        if let mutable = context.flag(ios["mutable_content"], iosPath / "mutable_content") {
            aps.append(PayloadMember("mutable-content", mutable))
        }
        if let score = context.number(ios["relevance_score"], iosPath / "relevance_score", range: 0...1) {
            aps.append(PayloadMember("relevance-score", score))
        }

        var top: [PayloadMember] = [PayloadMember("aps", .makeObject(aps), omitIfEmpty: false)]
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
        if let configured = ios["priority"]?.intValue {
            if configured == 10 && !userVisible {
                context.log.error(iosPath / "priority", "priority 10 requires a user-visible push (alert, sound or badge); a background push must use 5", at: ios["priority"])
            }
            priority = configured
        }
        let expiration = ios["expiry"].flatMap { context.expiryTimestamp($0) }
        let collapseID = ios["collapse_id"].flatMap { context.templated($0, iosPath / "collapse_id") }

        return Result(
            payload: .makeObject(top), userVisible: userVisible,
            pushType: isBackground ? "background" : "alert", priority: priority,
            expiration: expiration, collapseID: collapseID
        )
    }
}
