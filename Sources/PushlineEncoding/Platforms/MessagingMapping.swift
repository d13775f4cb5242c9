import PushlineCore

/// SMS, MMS, email and open channels: the body of the webhook request each device becomes.
/// Every body starts with `channel` and `to` (the device's address); the rest is per channel
/// (docs/overrides.md documents each).
enum MessagingMapping {
    /// SMS devices: the `mms` override when there is one, else `sms` with the top-level alert.
    static func sms(notification: ConfigNode, path: ConfigPath, url: String, context: inout CompileContext) -> WebhookPlan? {
        if let mms = notification["mms"] {
            return self.mms(mms, path: path / "mms", url: url, context: &context)
        }
        let p = path / "sms"
        let sms = notification["sms"] ?? ConfigNode(.mapping([]))
        var fields: [WebhookField] = []
        let alert: (ConfigNode, ConfigPath)? = sms["alert"].map { ($0, p / "alert") } ?? notification["alert"].map { ($0, path / "alert") }
        guard let (alertNode, alertPath) = alert, let text = context.templated(alertNode, alertPath) else {
            context.log.error(p / "alert", "an SMS needs text: give sms.alert or a top-level alert", at: notification)
            return nil
        }
        if alert?.1.description == (path / "alert").description, let constant = text.constantText,
           constant.unicodeScalars.count > ProviderLimits.smsCharacters {
            context.log.error(path / "alert", "is \(constant.unicodeScalars.count) characters, over the \(ProviderLimits.smsCharacters) an SMS may hold (give a shorter sms.alert)", at: alertNode)
        }
        // The gateway's cost of the text actually sent (after truncation): "encoding" and "segments".
        fields.append(.limitedText(key: "text", value: text, limit: .characters(ProviderLimits.smsCharacters), role: .body, reportsSegments: true))
        // Absolute UNIX seconds; at most (and by default) 48 hours after the run starts.
        guard var expiry = ExpiryRule.timestamp(now: context.now, plus: NotificationSchema.smsMaxExpiry) else {
            context.log.error(p / "expiry", "the run's clock (\(context.now)) plus the 48 hours an SMS may wait is out of range", at: notification)
            return nil
        }
        if let node = sms["expiry"], let at = context.expiryTimestamp(node, p / "expiry") {
            if (ExpiryRule.seconds(from: context.now, until: at) ?? Int.max) > NotificationSchema.smsMaxExpiry {
                context.log.error(p / "expiry", "is more than 48 hours after the run starts; an SMS may wait at most 48 hours", at: node)
            }
            expiry = min(at, expiry)
        }
        fields.append(.member(PayloadMember("expiry", .integer(expiry))))
        if let shorten = context.boolean(sms["shorten_links"], p / "shorten_links") { fields.append(.member(PayloadMember("shorten_links", shorten))) }
        return WebhookPlan(channel: "sms", url: url, fields: fields)
    }

    static func mms(_ mms: ConfigNode, path p: ConfigPath, url: String, context: inout CompileContext) -> WebhookPlan? {
        var fields: [WebhookField] = []
        if let subject = context.text(mms["subject"], p / "subject", role: .title) { fields.append(.member(PayloadMember("subject", subject, omitIfEmpty: false))) }
        if let node = mms["fallback_text"], let text = context.templated(node, p / "fallback_text") {
            fields.append(.limitedText(key: "fallback_text", value: text, limit: .characters(ProviderLimits.smsCharacters), role: .body))
        }
        if let slides = mms["slides"] { fields.append(.member(PayloadMember("slides", context.json(slides, p / "slides"), omitIfEmpty: false))) }
        if let shorten = context.boolean(mms["shorten_links"], p / "shorten_links") { fields.append(.member(PayloadMember("shorten_links", shorten))) }
        return WebhookPlan(channel: "mms", url: url, fields: fields)
    }

    static func email(notification: ConfigNode, path: ConfigPath, url: String, context: inout CompileContext) -> WebhookPlan? {
        let p = path / "email"
        guard let email = notification["email"] else {
            context.log.error(p, "is required when device_types includes email (subject, bodies, sender)", at: notification)
            return nil
        }
        var fields: [WebhookField] = []
        for key in ["subject", "sender_name", "sender_address", "reply_to"] {
            if let value = context.text(email[key], p / key, role: key == "subject" ? .title : .other) {
                fields.append(.member(PayloadMember(key, value, omitIfEmpty: false)))
            }
        }
        for key in ["html_body", "plaintext_body"] {
            if let node = email[key], let value = context.templated(node, p / key) {
                fields.append(.limitedText(key: key, value: value, limit: .bytes(ProviderLimits.emailBody), role: .other))
            }
        }
        if let type = email["message_type"]?.stringValue { fields.append(.member(PayloadMember("message_type", .string(type)))) }
        // Tracking is on unless turned off (Airship's defaults), so the webhook never has to guess.
        for key in ["click_tracking", "open_tracking"] {
            fields.append(.member(PayloadMember(key, .bool(email[key]?.boolValue ?? true))))
        }
        if let bypass = email["bypass_opt_in_level"]?.boolValue { fields.append(.member(PayloadMember("bypass_opt_in_level", .bool(bypass)))) }
        for key in ["bcc", "attachments", "url_parameters"] {
            if let value = email[key] { fields.append(.member(PayloadMember(key, context.json(value, p / key)))) }
        }
        return WebhookPlan(channel: "email", url: url, fields: fields)
    }

    static func open(name: String, notification: ConfigNode, path: ConfigPath, url: String, context: inout CompileContext) -> WebhookPlan? {
        let key = Platform.openPrefix + name
        let p = path / key
        let channel = notification[key] ?? ConfigNode(.mapping([]))
        var fields: [WebhookField] = []
        guard let alert = context.firstText([(channel["alert"], p / "alert"), (notification["alert"], path / "alert")], role: .body) else {
            context.log.error(p / "alert", "an open-channel message needs text: give \(key).alert or a top-level alert", at: notification)
            return nil
        }
        fields.append(.member(PayloadMember("alert", alert)))
        if let title = context.firstText([(channel["title"], p / "title"), (notification["title"], path / "title")], role: .title) {
            fields.append(.member(PayloadMember("title", title)))
        }
        for field in ["summary", "media_attachment"] {
            if let value = context.text(channel[field], p / field) { fields.append(.member(PayloadMember(field, value))) }
        }
        for field in ["extra", "interactive"] {
            if let value = channel[field] { fields.append(.member(PayloadMember(field, context.json(value, p / field)))) }
        }
        return WebhookPlan(channel: key, url: url, fields: fields)
    }
}
