import PushlineCore

/// The notification section of a pipeline file: a top-level alert and title plus platform
/// overrides selected by device type (Airship's model; docs/overrides.md maps every property to
/// the wire). Each platform's schema lives in its own file beside this one.
public enum NotificationSchema {
    public static let notification = ObjectSchema("notification", [
        SchemaProperty("alert", .string()),
        SchemaProperty("title", .string()),
        // Vendor styles (customerio, adobe) read a deep link and an image; see docs/overrides.md.
        SchemaProperty("link", .string()),
        SchemaProperty("image", .string(.url)),
        SchemaProperty("custom", .object(customPayloads)),
        SchemaProperty("ios", .object(ios)),
        SchemaProperty("android", .object(android)),
        SchemaProperty("amazon", .object(amazon)),
        SchemaProperty("web", .object(web)),
        SchemaProperty("sms", .object(sms)),
        SchemaProperty("mms", .object(mms)),
        SchemaProperty("email", .object(email)),
    ], prefixed: [
        SchemaProperty(Platform.openPrefix, .object(openChannel)),
    ], rules: [smsOrMMSRule, openChannelNameRule])

    /// Airship: "a single push can only include either an SMS or MMS payload".
    static let smsOrMMSRule: SchemaRule = { node, path, log, _ in
        if node["sms"] != nil, let mms = node["mms"] {
            log.error(path / "mms", "cannot be combined with an sms override: a push carries either an SMS or an MMS payload", at: mms)
        }
    }

    static let openChannelNameRule: SchemaRule = { node, path, log, _ in
        for (key, value) in node.mappingEntries ?? [] where key.hasPrefix(Platform.openPrefix) {
            if !OpenChannelName.isValid(Array(key.utf8.dropFirst(Platform.openPrefix.utf8.count))) {
                log.error(path / key, "open channel names are 1 to 64 letters, digits, '_' or '-' after 'open::'", at: value)
            }
        }
    }

    // MARK: Shared parts

    /// Airship's Actions object, carried to the app SDK (see docs/overrides.md).
    static let openAction = ObjectSchema("actions.open", [
        SchemaProperty("type", .enumeration(["url", "deep_link", "landing_page", "home"]), required: true),
        SchemaProperty("content", .string()),
        SchemaProperty("fallback_url", .string(.url)),
    ])

    static let actions = ObjectSchema("actions", [
        SchemaProperty("add_tag", .oneOf([.string(), .array(.string())])),
        SchemaProperty("remove_tag", .oneOf([.string(), .array(.string())])),
        SchemaProperty("open", .object(openAction)),
        SchemaProperty("share", .string()),
        SchemaProperty("app_defined", .jsonMap()),
    ])

    /// Airship's interactive notification object: a category type and the actions of its buttons.
    static let interactive = ObjectSchema("interactive", [
        SchemaProperty("type", .string(.constant), required: true),
        SchemaProperty("button_actions", .jsonMap()),
    ])

    static func interactiveRefused(on platform: String) -> String {
        "interactive notifications are not supported on \(platform) (Airship answers such a push with HTTP 400); supported on ios, android, amazon and open channels"
    }

    /// Raw provider payloads for `style: custom` (Customer.io's custom payload editor).
    public static let customPayloads = ObjectSchema("notification.custom", [
        SchemaProperty("ios", .jsonMap()),
        SchemaProperty("android", .jsonMap()),
        SchemaProperty("web", .jsonMap()),
        SchemaProperty("amazon", .jsonMap()),
    ])
}

/// What an iOS `badge` asks for.
public enum BadgeSpec: Sendable, Equatable {
    case absolute(Int)
    /// `auto`: one more than the device's current badge.
    case auto
    /// `+N` / `-N`: relative to the device's current badge.
    case relative(Int)

    public static func parse(_ text: String) -> BadgeSpec? {
        if text == "auto" { return .auto }
        guard let first = text.first, first == "+" || first == "-", let n = Int(text.dropFirst()), n >= 0 else {
            return Int(text).flatMap { $0 >= 0 ? .absolute($0) : nil }
        }
        return .relative(first == "-" ? -n : n)
    }
}
