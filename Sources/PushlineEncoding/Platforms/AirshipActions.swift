import PushlineCore

/// Airship's `actions` and `interactive` objects in the form the Airship SDKs read: action
/// registry names (`^+t` add tags, `^-t` remove tags, `^u` open URL, `^d` deep link,
/// `^p` landing page, `^s` share) with their values. Other SDKs receive them as plain data.
enum AirshipActions {
    static func members(_ actions: ConfigNode, _ path: ConfigPath, context: inout CompileContext) -> [PayloadMember] {
        var members: [PayloadMember] = []
        for (key, name) in [("add_tag", "^+t"), ("remove_tag", "^-t"), ("share", "^s")] {
            if let value = actions[key] { members.append(PayloadMember(name, context.json(value, path / key), omitIfEmpty: false)) }
        }
        if let open = actions["open"], let type = open["type"]?.stringValue {
            let names = ["url": "^u", "deep_link": "^d", "landing_page": "^p"]
            if let name = names[type], let content = open["content"] {
                members.append(PayloadMember(name, context.json(content, path / "open" / "content"), omitIfEmpty: false))
            }
        }
        for (key, value) in actions["app_defined"]?.mappingEntries ?? [] {
            members.append(PayloadMember(key, context.json(value, path / "app_defined" / key), omitIfEmpty: false))
        }
        return members
    }

    /// `actions` as one JSON object (for data maps, carried as a JSON string).
    static func object(_ actions: ConfigNode?, _ path: ConfigPath, context: inout CompileContext) -> PayloadNode? {
        guard let actions else { return nil }
        return .makeObject(members(actions, path, context: &context))
    }
}
