import PushlineCore

/// Maps the top-level notification and the `amazon` override onto an ADM message: ADM carries
/// only a string map (`data`), a consolidation key and an expiry, so every display option goes
/// into `data` under the keys the app's SDK reads (docs/overrides.md).
enum AmazonMapping {
    static func map(notification: ConfigNode, path: ConfigPath, style: PayloadStyle, context: inout CompileContext) -> ADMPlan {
        let p = path / "amazon"
        let amazon = notification["amazon"] ?? ConfigNode(.mapping([]))
        let title = context.firstText([(amazon["title"], p / "title"), (notification["title"], path / "title")], role: .title)
        let body = context.firstText([(amazon["alert"], p / "alert"), (notification["alert"], path / "alert")], role: .body)
        let image = context.text(notification["image"], path / "image")
        let link = context.text(notification["link"], path / "link")
        var data: [PayloadMember] = []
        switch style {
        case .custom:
            if let custom = notification["custom"]?["amazon"] {
                data = context.stringMap(custom, path / "custom" / "amazon")
            } else {
                context.log.error(path / "custom" / "amazon", "is required with style custom when device_types includes amazon (the ADM data map)", at: notification)
            }
        case .airship:
            if let body { data.append(PayloadMember("com.urbanairship.push.ALERT", body)) }
            if let title { data.append(PayloadMember("com.urbanairship.title", title)) }
            // Every display option the schema gives a data key (summary, icon, icon_color, …).
            for property in NotificationSchema.amazon.properties {
                guard let wire = property.wire, let value = context.value(amazon[property.name], p / property.name, property) else { continue }
                data.append(PayloadMember(wire, value))
            }
            data += AirshipData.members(ConfigNode(.mapping((amazon.mappingEntries ?? []).filter { ["style", "actions", "interactive"].contains($0.key) })), p, context: &context)
            data += context.stringMap(amazon["extra"] ?? ConfigNode(.mapping([])), p / "extra")
        case .customerio, .adobe:
            // Neither vendor has a Fire OS SDK: their Android data keys, which the app reads itself.
            if let title { data.append(PayloadMember("title", title)) }
            if let body { data.append(PayloadMember("body", body)) }
            if let image { data.append(PayloadMember(style == .adobe ? "media-attachment-url" : "image", image)) }
            if let link { data.append(PayloadMember(style == .adobe ? "uri" : "link", link)) }
            if style == .adobe { data += AdobeTracking.members(context: &context) }
            data += context.stringMap(amazon["extra"] ?? ConfigNode(.mapping([])), p / "extra")
        }
        return ADMPlan(
            data: .makeObject(data),
            consolidationKey: amazon["consolidation_key"].flatMap { context.templated($0, p / "consolidation_key") },
            expiresAfter: amazon["expires_after"].flatMap { context.expirySeconds($0, p / "expires_after") },
            dataLimit: ProviderLimits.admData
        )
    }
}
