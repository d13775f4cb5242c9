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
            consolidationKey: amazon["consolidation_key"].flatMap { consolidationKey($0, p / "consolidation_key", context: &context) },
            expiresAfter: amazon["expires_after"].flatMap { expiresAfter($0, p / "expires_after", context: &context) },
            dataLimit: ProviderLimits.admData
        )
    }

    /// `consolidation_key`: at most 64 characters (`ProviderLimits.admConsolidationKey`). A
    /// constant is checked here, by `validate`; a personalized one when it is rendered, per
    /// recipient (`ADMEncoder`: an `invalid_value` reject).
    static func consolidationKey(_ node: ConfigNode, _ path: ConfigPath, context: inout CompileContext) -> TemplatedValue? {
        guard let value = context.templated(node, path) else { return nil }
        if let text = value.constantText, let problem = consolidationKeyProblem(utf8: Array(text.utf8)) {
            context.log.error(path, problem, at: node)
            return nil
        }
        return value
    }

    /// Why ADM would refuse `key` as a consolidation key (nil: it takes it).
    static func consolidationKeyProblem<Bytes: Collection>(utf8 key: Bytes) -> String? where Bytes.Element == UInt8 {
        let length = ProviderLimits.admKeyLength(utf8: key)
        guard length > ProviderLimits.admConsolidationKey else { return nil }
        return "is \(length) characters long; ADM takes a consolidation key of at most \(ProviderLimits.admConsolidationKey) (counted in UTF-16 units: an emoji counts 2)"
    }

    /// `expires_after`: seconds, or an ISO 8601 time counted from the run's clock, within ADM's
    /// 1 second to 31 days (`ProviderLimits.admExpiresAfter`; Amazon refuses anything else with
    /// `InvalidExpiration`, for every device). A value the schema already refused (out of
    /// `ExpiryRule.relativeSeconds`, not a timestamp) is not reported twice.
    static func expiresAfter(_ node: ConfigNode, _ path: ConfigPath, context: inout CompileContext) -> Int? {
        let range = ProviderLimits.admExpiresAfter
        let bounds = "ADM keeps a message \(range.lowerBound) to \(range.upperBound) seconds (1 second to 31 days)"
        if let written = node.intValue {
            guard ExpiryRule.relativeSeconds.contains(written) else { return nil }
            guard range.contains(written) else {
                context.log.error(path, "\(written) seconds is out of range: \(bounds)", at: node)
                return nil
            }
            return written
        }
        guard let text = node.stringValue, ISOTimestamp.parse(text) != nil, let seconds = context.expirySeconds(node, path) else { return nil }
        guard range.contains(seconds) else {
            let when = seconds == 0 ? "is not after the run's clock (\(context.now))" : "is \(seconds) seconds after the run's clock (\(context.now))"
            context.log.error(path, "'\(text)' \(when): \(bounds)", at: node)
            return nil
        }
        return seconds
    }
}
