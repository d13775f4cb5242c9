public import PushlineCore

/// The shape a pipeline value must have: one place that both validation and docs read.
public indirect enum SchemaType: Sendable {
    /// Text; personalizable unless `format` says otherwise.
    case string(StringFormat = .text)
    /// An integer, or a template whose rendering must be one (the typed form).
    case integer(ClosedRange<Int>? = nil)
    /// A number, or a template whose rendering must be one.
    case number(ClosedRange<Double>? = nil)
    /// A boolean (templated form allowed: renders `true` or `false`).
    case boolean
    /// One of fixed words (not personalizable: it decides the payload's shape).
    case enumeration([String])
    /// One of fixed integers.
    case integerChoice([Int])
    case object(ObjectSchema)
    case array(SchemaType, maxCount: Int? = nil)
    /// Any of several shapes, tried in order (e.g. alert: string or object).
    case oneOf([SchemaType])
    /// String keys to string values (FCM `data`, Android extras), personalizable values.
    case stringMap(disallowed: KeyRule = .none)
    /// String keys to any JSON (iOS extras, custom payload parts), personalizable string leaves.
    case jsonMap(disallowed: KeyRule = .none)
    /// Seconds from now (integer) or an absolute ISO 8601 UTC timestamp.
    case expiry
}

public enum StringFormat: Sendable, Equatable {
    case text
    /// `#rrggbb`
    case color
    /// An absolute URL; https is expected (a warning, or an error when `require_https_urls`).
    case url
    /// Must not be personalized (identifiers that decide routing or shape).
    case constant
    /// At most this many UTF-8 bytes once rendered (checked at validate time for constants,
    /// per recipient otherwise).
    case maxBytes(Int)
    /// Sent as an HTTP header value: `WireValue.headerProblem` with this byte limit, at validate
    /// time for constants and per recipient for templates (`personalizable: false` refuses them).
    case header(maxBytes: Int, personalizable: Bool = true)
    /// One path segment of a URL or of the output folder (`WireValue.pathSegmentProblem`); never
    /// personalized.
    case pathSegment
}

/// Keys an extras map may not use because they clash with what the encoder generates.
public struct KeyRule: Sendable {
    public var exact: [String]
    public var prefixes: [String]
    public var reason: String

    public init(exact: [String], prefixes: [String] = [], reason: String) {
        self.exact = exact
        self.prefixes = prefixes
        self.reason = reason
    }

    public static let none = KeyRule(exact: [], reason: "")

    func violation(_ key: String) -> Bool {
        exact.contains(key) || prefixes.contains { key.hasPrefix($0) }
    }
}

public struct SchemaProperty: Sendable {
    public var name: String
    public var type: SchemaType
    public var required: Bool
    public var deprecated: Bool
    /// The name the provider payload gives it, when the mapping copies it under another name
    /// (`thread_id` → `thread-id`): mappings read it here rather than restating it.
    public var wire: String?
    /// The value used when the pipeline leaves it out (read by the compiler and docs alike).
    public var defaultValue: ConfigNode.Value?

    public init(_ name: String, _ type: SchemaType, required: Bool = false, deprecated: Bool = false, wire: String? = nil, default defaultValue: ConfigNode.Value? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.deprecated = deprecated
        self.wire = wire
        self.defaultValue = defaultValue
    }

    /// The integer given for this property in `node`, else the schema's default.
    public func int(in node: ConfigNode?) -> Int? {
        if let value = node?[name]?.intValue { return value }
        if case .int(let value)? = defaultValue { return value }
        return nil
    }

    /// The string given for this property in `node`, else the schema's default.
    public func string(in node: ConfigNode?) -> String? {
        if let value = node?[name]?.stringValue { return value }
        if case .string(let value)? = defaultValue { return value }
        return nil
    }
}

/// An object's properties plus rules that involve several of them.
public struct ObjectSchema: Sendable {
    public var name: String
    public var properties: [SchemaProperty]
    /// Properties matched by name prefix (`open::<name>`): the property's `name` is the prefix.
    public var prefixed: [SchemaProperty]
    /// Keys that exist elsewhere but are refused here, with the reason (e.g. `interactive` on web).
    public var refused: [String: String]
    /// Cross-property rules (e.g. `style.type: big_picture` needs `big_picture`).
    public var rules: [SchemaRule]

    public init(
        _ name: String,
        _ properties: [SchemaProperty],
        prefixed: [SchemaProperty] = [],
        refused: [String: String] = [:],
        rules: [SchemaRule] = []
    ) {
        self.name = name
        self.properties = properties
        self.prefixed = prefixed
        self.refused = refused
        self.rules = rules
    }

    public func property(_ name: String) -> SchemaProperty? {
        properties.first { $0.name == name } ?? prefixed.first { name.hasPrefix($0.name) }
    }

    /// A property the mappings know exists (a missing one is a mistake in Pushline's own tables,
    /// caught by every test that compiles a pipeline).
    public subscript(name: String) -> SchemaProperty {
        guard let found = property(name) else { preconditionFailure("schema \(self.name) has no property \(name)") }
        return found
    }
}

extension SchemaType {
    /// The integer range the type allows (through `oneOf`), for mappings that check rendered values.
    public var integerRange: ClosedRange<Int>? {
        switch self {
        case .integer(let range): range
        case .oneOf(let types): types.lazy.compactMap(\.integerRange).first
        default: nil
        }
    }

    /// The number range the type allows (through `oneOf`).
    public var numberRange: ClosedRange<Double>? {
        switch self {
        case .number(let range): range
        case .oneOf(let types): types.lazy.compactMap(\.numberRange).first
        default: nil
        }
    }

    /// The byte limit of a header value.
    public var headerLimit: Int? {
        if case .string(.header(let maxBytes, _)) = self { return maxBytes }
        return nil
    }
}

/// A rule over a whole object: the node, its path, where to report, the validation options.
public typealias SchemaRule = @Sendable (ConfigNode, ConfigPath, inout DiagnosticLog, ValidationOptions) -> Void

public struct ValidationOptions: Sendable {
    /// Non-https image and link URLs are errors instead of warnings.
    public var requireHTTPSURLs: Bool

    public init(requireHTTPSURLs: Bool = false) {
        self.requireHTTPSURLs = requireHTTPSURLs
    }
}

/// Whether pipeline text holds template syntax (both dialects open with `{{` or `{%`).
public func isTemplated(_ text: String) -> Bool {
    text.contains("{{") || text.contains("{%")
}

/// Checks a configuration value against a schema and records every problem with its path.
public enum SchemaValidator {
    public static func validate(
        _ node: ConfigNode, as type: SchemaType, at path: ConfigPath,
        into log: inout DiagnosticLog, options: ValidationOptions = .init()
    ) {
        switch type {
        case .string(let format):
            guard let text = node.stringValue else {
                return log.error(path, "expected a string, found \(node.kindName)", at: node)
            }
            validateString(text, format: format, node: node, path: path, log: &log, options: options)

        case .integer(let range):
            if let text = node.stringValue, isTemplated(text) { return }
            guard let value = node.intValue else {
                return log.error(path, "expected an integer\(describe(range)), found \(describeValue(node))", at: node)
            }
            if let range, !range.contains(value) {
                log.error(path, "\(value) is out of range: expected \(range.lowerBound) to \(range.upperBound)", at: node)
            }

        case .number(let range):
            if let text = node.stringValue, isTemplated(text) { return }
            guard let value = node.numberValue, value.isFinite else {
                return log.error(path, "expected a finite number\(describe(range)), found \(describeValue(node))", at: node)
            }
            if let range, !range.contains(value) {
                log.error(path, "\(formatNumber(value)) is out of range: expected \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound))", at: node)
            }

        case .boolean:
            if let text = node.stringValue, isTemplated(text) { return }
            if node.boolValue == nil {
                log.error(path, "expected true or false, found \(describeValue(node))", at: node)
            }

        case .enumeration(let words):
            guard let text = node.stringValue, words.contains(text) else {
                var message = "expected one of \(words.joined(separator: ", ")), found \(describeValue(node))"
                if let text = node.stringValue, let guess = NameSuggestion.closest(to: text, in: words) {
                    message += " (did you mean '\(guess)'?)"
                }
                return log.error(path, message, at: node)
            }

        case .integerChoice(let choices):
            guard let value = node.intValue, choices.contains(value) else {
                return log.error(path, "expected one of \(choices.map(String.init).joined(separator: ", ")), found \(describeValue(node))", at: node)
            }

        case .object(let schema):
            validateObject(node, schema: schema, path: path, log: &log, options: options)

        case .array(let element, let maxCount):
            guard let elements = node.sequenceElements else {
                return log.error(path, "expected a list, found \(node.kindName)", at: node)
            }
            if let maxCount, elements.count > maxCount {
                log.error(path, "has \(elements.count) items, at most \(maxCount) allowed", at: node)
            }
            for (i, child) in elements.enumerated() {
                validate(child, as: element, at: path.appending(index: i), into: &log, options: options)
            }

        case .oneOf(let types):
            // Pick the alternative whose kind matches; report against it.
            for candidate in types where candidate.accepts(kindOf: node) {
                return validate(node, as: candidate, at: path, into: &log, options: options)
            }
            log.error(path, "expected \(types.map(\.expectation).joined(separator: " or ")), found \(node.kindName)", at: node)

        case .stringMap(let disallowed):
            guard let entries = node.mappingEntries else {
                return log.error(path, "expected an object of string values, found \(node.kindName)", at: node)
            }
            for (key, value) in entries {
                checkKey(key, disallowed, path: path, node: value, log: &log)
                if value.stringValue == nil {
                    log.error(path / key, "expected a string (this map holds strings only; quote numbers and booleans), found \(value.kindName)", at: value)
                }
            }

        case .jsonMap(let disallowed):
            guard let entries = node.mappingEntries else {
                return log.error(path, "expected an object, found \(node.kindName)", at: node)
            }
            for (key, value) in entries {
                checkKey(key, disallowed, path: path, node: value, log: &log)
            }

        case .expiry:
            if let seconds = node.intValue {
                if !ExpiryRule.relativeSeconds.contains(seconds) {
                    log.error(path, "\(seconds) seconds is out of range: expected \(ExpiryRule.relativeSeconds.lowerBound) to \(ExpiryRule.relativeSeconds.upperBound) seconds from now, or an ISO 8601 UTC timestamp", at: node)
                }
            } else if let text = node.stringValue {
                if ISOTimestamp.parse(text) == nil {
                    log.error(path, "expected seconds from now or an ISO 8601 UTC timestamp (2026-12-01T18:00:00Z), found '\(text)'", at: node)
                }
            } else {
                log.error(path, "expected seconds from now or an ISO 8601 UTC timestamp, found \(node.kindName)", at: node)
            }
        }
    }

    static func validateObject(_ node: ConfigNode, schema: ObjectSchema, path: ConfigPath, log: inout DiagnosticLog, options: ValidationOptions) {
        guard let entries = node.mappingEntries else {
            return log.error(path, "expected an object, found \(node.kindName)", at: node)
        }
        var seen = Set<String>()
        for (key, value) in entries {
            if !seen.insert(key).inserted {
                log.error(path / key, "is given twice", at: value)
            }
            if let reason = schema.refused[key] {
                log.error(path / key, reason, at: value)
                continue
            }
            guard let property = schema.property(key) else {
                var message = "unknown key '\(key)' in \(schema.name)"
                if let guess = NameSuggestion.closest(to: key, in: schema.properties.map(\.name)) {
                    message += " (did you mean '\(guess)'?)"
                }
                log.error(path / key, message, at: value)
                continue
            }
            if property.deprecated {
                log.warning(path / key, "is deprecated and ignored by the providers", at: value)
            }
            validate(value, as: property.type, at: path / key, into: &log, options: options)
        }
        for property in schema.properties where property.required && !seen.contains(property.name) {
            log.error(path / property.name, "is required in \(schema.name)", at: node)
        }
        for rule in schema.rules {
            rule(node, path, &log, options)
        }
    }

    static func validateString(_ text: String, format: StringFormat, node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog, options: ValidationOptions) {
        switch format {
        case .text:
            break
        case .constant:
            if isTemplated(text) { log.error(path, "cannot be personalized (it decides the payload's shape)", at: node) }
        case .color:
            if isTemplated(text) { return }
            if !isColor(text) { log.error(path, "expected #rrggbb, found '\(text)'", at: node) }
        case .url:
            if isTemplated(text) { return }
            checkURL(text, node: node, path: path, log: &log, options: options)
        case .maxBytes(let limit):
            if !isTemplated(text), text.utf8.count > limit {
                log.error(path, "is \(text.utf8.count) bytes, at most \(limit) allowed", at: node)
            }
        case .header(let maxBytes, let personalizable):
            if isTemplated(text) {
                if !personalizable {
                    log.error(path, "cannot be personalized (it is the same header on every request)", at: node)
                } else if let b = text.utf8.first(where: { $0 < 0x20 || $0 == 0x7F }) {
                    // The template's own text goes into the header too: no line breaks there.
                    log.error(path, "cannot go in a header: the template holds a control character (\(WireValue.describe(b)))", at: node)
                }
                return
            }
            if let problem = WireValue.headerProblem(text, maxBytes: maxBytes, allowEmpty: false) {
                log.error(path, problem.isLength ? "is \(text.utf8.count) bytes, at most \(maxBytes) allowed" : "cannot go in a header: \(problem)", at: node)
            }
        case .pathSegment:
            if let problem = WireValue.pathSegmentProblem(text, maxBytes: WireValue.maxSegmentBytes) {
                log.error(path, "must be one path segment: \(problem)", at: node)
            }
        }
    }

    public static func checkURL(_ text: String, node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog, options: ValidationOptions) {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") && text.count > 8 { return }
        if lower.hasPrefix("http://") {
            let message = "uses http://; images and links should be https:// or devices may not load them"
            if options.requireHTTPSURLs { log.error(path, message, at: node) } else { log.warning(path, message, at: node) }
            return
        }
        log.error(path, "expected an absolute https:// URL, found '\(text)'", at: node)
    }

    static func checkKey(_ key: String, _ rule: KeyRule, path: ConfigPath, node: ConfigNode, log: inout DiagnosticLog) {
        if rule.violation(key) {
            log.error(path / key, "the key '\(key)' is not allowed here: \(rule.reason)", at: node)
        }
    }

    public static func isColor(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[0] == UInt8(ascii: "#") else { return false }
        return bytes[1...].allSatisfy { DeviceTokenRules.isHex($0) }
    }

    static func describe(_ range: ClosedRange<Int>?) -> String {
        range.map { " from \($0.lowerBound) to \($0.upperBound)" } ?? ""
    }

    static func describe(_ range: ClosedRange<Double>?) -> String {
        range.map { " from \(formatNumber($0.lowerBound)) to \(formatNumber($0.upperBound))" } ?? ""
    }

    static func formatNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    static func describeValue(_ node: ConfigNode) -> String {
        switch node.value {
        case .string(let s): "'\(s)'"
        case .int(let i): String(i)
        case .double(let d): formatNumber(d)
        case .bool(let b): String(b)
        default: node.kindName
        }
    }
}


extension SchemaType {
    /// Whether a node of this kind could be meant as this type (used to pick a `oneOf` branch).
    func accepts(kindOf node: ConfigNode) -> Bool {
        switch (self, node.value) {
        case (.string, .string), (.enumeration, .string), (.expiry, .string), (.expiry, .int): true
        case (.integer, .int), (.integer, .string), (.integerChoice, .int): true
        case (.number, .int), (.number, .double), (.number, .string): true
        case (.boolean, .bool), (.boolean, .string): true
        case (.object, .mapping), (.stringMap, .mapping), (.jsonMap, .mapping): true
        case (.array, .sequence): true
        case (.oneOf(let types), _): types.contains { $0.accepts(kindOf: node) }
        default: false
        }
    }

    /// "a string", "an object", ... for messages.
    var expectation: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "a boolean"
        case .enumeration(let words): "one of \(words.joined(separator: ", "))"
        case .integerChoice(let choices): "one of \(choices.map(String.init).joined(separator: ", "))"
        case .object: "an object"
        case .array: "a list"
        case .oneOf(let types): types.map(\.expectation).joined(separator: " or ")
        case .stringMap, .jsonMap: "an object"
        case .expiry: "seconds or an ISO 8601 timestamp"
        }
    }
}
