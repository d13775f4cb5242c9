import PushlineCore

/// `style: custom`: raw provider payloads per platform, as in Customer.io's custom payload
/// editor. String leaves are templates; the shape is checked against the provider's schema here
/// and the size on the final bytes, like every other payload.
enum CustomPayload {
    /// Headers still come from the `ios` override; everything else is the raw payload's.
    static let iosHeaderKeys: Set<String> = ["priority", "expiry", "collapse_id"]

    static func ios(notification: ConfigNode, path: ConfigPath, context: inout CompileContext) -> IOSMapping.Result? {
        let p = path / "custom" / "ios"
        guard let payload = notification["custom"]?["ios"] else {
            context.log.error(p, "is required with style custom when device_types includes ios (the APNs payload: {aps: …})", at: notification)
            return nil
        }
        SchemaValidator.validate(payload, as: .object(ProviderPayloadSchema.apnsPayload), at: p, into: &context.log, options: context.validation)
        let ios = notification["ios"] ?? ConfigNode(.mapping([]))
        for (key, value) in ios.mappingEntries ?? [] where !iosHeaderKeys.contains(key) {
            context.log.warning(path / "ios" / key, "is ignored with style custom (only priority, expiry and collapse_id apply; write the rest in custom.ios)", at: value)
        }
        let aps = payload["aps"]
        let userVisible = aps?["alert"] != nil || aps?["sound"] != nil || aps?["badge"] != nil
        let background = !userVisible && aps?["content-available"]?.intValue == 1
        var priority = background ? 5 : 10
        if let configured = ios["priority"]?.intValue {
            if configured == 10 && !userVisible {
                context.log.error(path / "ios" / "priority", "priority 10 requires a user-visible push (alert, sound or badge); a background push must use 5", at: ios["priority"])
            }
            priority = configured
        }
        return IOSMapping.Result(
            payload: context.json(payload, p), userVisible: userVisible,
            pushType: background ? "background" : "alert", priority: priority,
            expiration: ios["expiry"].flatMap { context.expiryTimestamp($0, path / "ios" / "expiry") },
            collapseID: context.header(ios["collapse_id"], path / "ios" / "collapse_id", NotificationSchema.ios["collapse_id"])
        )
    }

    /// The members of the custom FCM message (all but the target, which comes from the audience).
    static func android(notification: ConfigNode, path: ConfigPath, context: inout CompileContext) -> [PayloadMember] {
        let p = path / "custom" / "android"
        guard let payload = notification["custom"]?["android"] else {
            context.log.error(p, "is required with style custom when device_types includes android (the FCM payload: {message: …})", at: notification)
            return []
        }
        SchemaValidator.validate(payload, as: .object(ProviderPayloadSchema.fcmRequest), at: p, into: &context.log, options: context.validation)
        if let ignored = notification["android"] {
            context.log.warning(path / "android", "is ignored with style custom (write the message in custom.android)", at: ignored)
        }
        let message = payload["message"]
        return (message?.mappingEntries ?? []).map { key, value in
            PayloadMember(key, member(key, value, p / "message" / key, context: &context), omitIfEmpty: false)
        }
    }

    /// `apns.headers` and `webpush.headers` become HTTP headers at FCM: their values take the
    /// header rule (per recipient when personalized), like every other header.
    static func member(_ key: String, _ value: ConfigNode, _ p: ConfigPath, context: inout CompileContext) -> PayloadNode {
        guard key == "apns" || key == "webpush", let entries = value.mappingEntries else { return context.json(value, p) }
        return .makeObject(entries.map { name, node in
            PayloadMember(name, name == "headers" ? context.headerMap(node, p / name) : context.json(node, p / name), omitIfEmpty: false)
        })
    }
}
