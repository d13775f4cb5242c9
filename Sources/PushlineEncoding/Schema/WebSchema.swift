import PushlineCore

extension NotificationSchema {
    static func webURLObject(_ name: String) -> ObjectSchema {
        ObjectSchema(name, [SchemaProperty("url", .string(.url), required: true)])
    }

    static let webButton = ObjectSchema("web.buttons", [
        SchemaProperty("id", .string(.constant), required: true),
        SchemaProperty("label", .string(), required: true),
        SchemaProperty("actions", .object(actions)),
    ])

    public static let web = ObjectSchema("web", [
        SchemaProperty("alert", .string()),
        SchemaProperty("title", .string()),
        SchemaProperty("icon", .object(webURLObject("web.icon"))),
        SchemaProperty("image", .object(webURLObject("web.image"))),
        SchemaProperty("require_interaction", .boolean),
        SchemaProperty("time_to_live", .expiry, default: .int(2_419_200)),   // FCM's default: four weeks
        SchemaProperty("extra", .stringMap()),
        SchemaProperty("actions", .object(actions)),
        // In Airship's web example; browsers show at most two action buttons.
        SchemaProperty("buttons", .array(.object(webButton), maxCount: 2)),
        // RFC 8030 headers, not Airship properties (docs/overrides.md).
        SchemaProperty("urgency", .enumeration(["very-low", "low", "normal", "high"]), default: .string("normal")),
        SchemaProperty("topic", .string(.constant)),
        SchemaProperty("link", .string()),
    ], refused: ["interactive": interactiveRefused(on: "web") + "; use buttons"], rules: [webTopicRule])

    /// RFC 8030 §5.4: a Topic is at most 32 characters of the base64url alphabet.
    static let webTopicRule: SchemaRule = { node, path, log, _ in
        guard let topic = node["topic"], let text = topic.stringValue else { return }
        let ok = (1...ProviderLimits.webPushTopic).contains(text.utf8.count) && text.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
        }
        if !ok {
            log.error(path / "topic", "a Web Push Topic is 1 to \(ProviderLimits.webPushTopic) base64url characters (A-Z a-z 0-9 - _), found '\(text)'", at: topic)
        }
    }
}
