import PushlineCore

/// `ios.live_activity`: an APNs Live Activity push (`apns-push-type: liveactivity`, topic
/// `<bundle id>.push-type.liveactivity`). Airship: "Fields outside of the live_activity object
/// will be ignored", so only the expiry and collapse id headers are read from the override.
enum IOSLiveActivity {
    static let headerKeys: Set<String> = ["live_activity", "expiry", "collapse_id"]

    static func map(_ live: ConfigNode, ios: ConfigNode, path: ConfigPath, context: inout CompileContext) -> IOSMapping.Result {
        let p = path / "live_activity"
        let ignored = (ios.mappingEntries ?? []).map(\.key).filter { !headerKeys.contains($0) }
        if !ignored.isEmpty {
            context.log.warning(path, "ignored with live_activity (a Live Activity push carries only its own fields): \(ignored.joined(separator: ", "))", at: ios)
        }
        let schema = NotificationSchema.liveActivity
        var aps: [PayloadMember] = []
        // APNs orders updates by timestamp; without one, the run's clock (the same for every
        // device), which must then be within the schema's range like a written timestamp.
        let timestamp = live["timestamp"]?.intValue ?? context.now
        if live["timestamp"] == nil, let range = schema["timestamp"].type.integerRange, !range.contains(timestamp) {
            context.log.error(p / "timestamp", "the run's clock (\(timestamp)) is outside \(range.lowerBound) to \(range.upperBound): give live_activity.timestamp", at: live)
        }
        aps.append(PayloadMember("timestamp", .integer(timestamp)))
        if let event = live["event"]?.stringValue { aps.append(PayloadMember("event", .string(event))) }
        if let state = live["content_state"] { aps.append(PayloadMember("content-state", context.json(state, p / "content_state"), omitIfEmpty: false)) }
        for (key, wire) in [("stale_date", "stale-date"), ("dismissal_date", "dismissal-date")] {
            if let value = live[key]?.intValue { aps.append(PayloadMember(wire, .integer(value))) }
        }
        if let type = context.text(live["attributes_type"], p / "attributes_type") { aps.append(PayloadMember("attributes-type", type)) }
        if let attributes = live["attributes"] { aps.append(PayloadMember("attributes", context.json(attributes, p / "attributes"), omitIfEmpty: false)) }
        if let score = context.value(live["relevance_score"], p / "relevance_score", schema["relevance_score"]) { aps.append(PayloadMember("relevance-score", score)) }
        if let alert = live["alert"] {
            var members: [PayloadMember] = []
            for (key, role) in [("title", TextRole.title), ("body", .body), ("sound", .other)] {
                if let value = context.text(alert[key], p / "alert" / key, role: role) { members.append(PayloadMember(key, value)) }
            }
            aps.append(PayloadMember("alert", .makeObject(members)))
        }
        return IOSMapping.Result(
            payload: .makeObject([PayloadMember("aps", .makeObject(aps), omitIfEmpty: false)]),
            userVisible: live["alert"] != nil, pushType: "liveactivity",
            priority: live["priority"]?.intValue ?? 10,
            expiration: ios["expiry"].flatMap { context.expiryTimestamp($0, path / "expiry") },
            collapseID: context.header(ios["collapse_id"], path / "collapse_id", NotificationSchema.ios["collapse_id"]),
            isLiveActivity: true
        )
    }
}
