public import PushlineCore
public import PushlineTemplates

/// Shared state while a pipeline's notification is compiled: the template dialect and options,
/// the run's clock reading (for expiry), and the diagnostics collected so far.
public struct CompileContext: Sendable {
    public var dialect: TemplateDialect
    public var templateOptions: TemplateOptions
    public var validation: ValidationOptions
    /// UNIX seconds the run started at: relative expiries count from here, so every request of a
    /// run carries the same absolute time and a dry run is reproducible with `--now`.
    public var now: Int
    public var log = DiagnosticLog()
    /// Templates compiled so far by source text, with their render slots: the same text in
    /// several fields or platforms compiles once and renders once per recipient.
    private var compiled: [String: (template: any CompiledTemplate, slot: Int)] = [:]
    public private(set) var templateSlots = 0

    public init(dialect: TemplateDialect, templateOptions: TemplateOptions, validation: ValidationOptions = .init(), now: Int) {
        self.dialect = dialect
        self.templateOptions = templateOptions
        self.validation = validation
        self.now = now
    }

    /// Compiles a pipeline string; a template that does not compile is reported with the field's
    /// path and the line and column inside the template, and yields nil.
    public mutating func templated(_ node: ConfigNode, _ path: ConfigPath) -> TemplatedValue? {
        guard let text = node.stringValue else { return nil }
        guard isTemplated(text) else { return TemplatedValue(.constant(text), field: path.description) }
        if let known = compiled[text] {
            return TemplatedValue(.template(known.template), field: path.description, slot: known.slot)
        }
        do {
            let template = try TemplateCompiler.compile(text, dialect: dialect, options: templateOptions)
            if let literal = template.literalText { return TemplatedValue(.constant(literal), field: path.description) }
            let slot = templateSlots
            templateSlots += 1
            compiled[text] = (template, slot)
            return TemplatedValue(.template(template), field: path.description, slot: slot)
        } catch {
            log.error(path, "\(dialect.rawValue) template does not compile: \(error.description)", at: node)
            return nil
        }
    }

    /// A value sent as a header, under the limit of the schema property it belongs to. A value
    /// known when compiling (a template rendering constant text) is checked here.
    public mutating func header(_ node: ConfigNode?, _ path: ConfigPath, _ property: SchemaProperty) -> HeaderValue? {
        header(node, path, maxBytes: property.type.headerLimit ?? WireValue.maxHeaderBytes)
    }

    public mutating func header(_ node: ConfigNode?, _ path: ConfigPath, maxBytes: Int) -> HeaderValue? {
        guard let node, let value = templated(node, path) else { return nil }
        if let text = value.constantText, let problem = WireValue.headerProblem(text, maxBytes: maxBytes) {
            log.error(path, "cannot go in a header: \(problem)", at: node)
            return nil
        }
        return HeaderValue(value, maxBytes: maxBytes)
    }

    /// A map of header names to values that a provider forwards as HTTP headers (custom
    /// payloads' `apns.headers`, `webpush.headers`): names are checked here, values per recipient.
    public mutating func headerMap(_ node: ConfigNode, _ path: ConfigPath) -> PayloadNode {
        guard let entries = node.mappingEntries else { return json(node, path) }
        var members: [PayloadMember] = []
        for (name, value) in entries {
            if let problem = WireValue.headerNameProblem(name) {
                log.error(path / name, "is not a header name: \(problem)", at: value)
                continue
            }
            if value.stringValue != nil {
                if let header = PayloadNode.header(header(value, path / name, maxBytes: WireValue.maxHeaderBytes)) {
                    members.append(PayloadMember(name, header, omitIfEmpty: false))
                }
            } else {
                members.append(PayloadMember(name, json(value, path / name), omitIfEmpty: false))
            }
        }
        return .makeObject(members)
    }

    /// A payload value compiled as its schema property says: its type, its range, a header's
    /// limit. Mappings call this instead of restating the rule, so every route applies the one
    /// the schema holds.
    public mutating func value(_ node: ConfigNode?, _ path: ConfigPath, _ property: SchemaProperty, role: TextRole = .other) -> PayloadNode? {
        guard let node else { return nil }
        return value(node, path, property.type, role: role)
    }

    mutating func value(_ node: ConfigNode, _ path: ConfigPath, _ type: SchemaType, role: TextRole) -> PayloadNode? {
        switch type {
        case .integer(let range): return integer(node, path, range: range)
        case .number(let range): return number(node, path, range: range)
        case .boolean: return boolean(node, path)
        case .integerChoice: return node.intValue.map(PayloadNode.integer) ?? json(node, path)
        case .string(.header(let maxBytes, _)): return PayloadNode.header(header(node, path, maxBytes: maxBytes))
        case .string, .enumeration: return text(node, path, role: role)
        case .oneOf(let types):
            guard let chosen = types.first(where: { $0.accepts(kindOf: node) }) else { return json(node, path) }
            return value(node, path, chosen, role: role)
        default: return json(node, path)
        }
    }

    /// A string payload value (omitted from the payload when absent).
    public mutating func text(_ node: ConfigNode?, _ path: ConfigPath, role: TextRole = .other) -> PayloadNode? {
        guard let node, let value = templated(node, path) else { return nil }
        return .templated(value, role: role)
    }

    /// An integer: a literal becomes a constant, a template the typed form checked per recipient.
    public mutating func integer(_ node: ConfigNode?, _ path: ConfigPath, range: ClosedRange<Int>? = nil) -> PayloadNode? {
        guard let node else { return nil }
        if let value = node.intValue { return .integer(value) }
        guard let value = templated(node, path) else { return nil }
        if let constant = value.constantText, let number = Int(constant) {
            // A template that renders a constant: the range applies as it does to a literal.
            if let range, !range.contains(number) {
                log.error(path, "\(number) is out of range: expected \(range.lowerBound) to \(range.upperBound)", at: node)
                return nil
            }
            return .integer(number)
        }
        return .typed(value, .integer(range))
    }

    public mutating func number(_ node: ConfigNode?, _ path: ConfigPath, range: ClosedRange<Double>? = nil) -> PayloadNode? {
        guard let node else { return nil }
        if let value = node.numberValue { return .number(value) }
        guard let value = templated(node, path) else { return nil }
        return .typed(value, .number(range))
    }

    /// A boolean flag as APNs wants it (`1` when true, omitted when false).
    public mutating func flag(_ node: ConfigNode?, _ path: ConfigPath) -> PayloadNode? {
        guard let node else { return nil }
        if let value = node.boolValue { return value ? .integer(1) : nil }
        if let value = node.intValue { return value == 1 ? .integer(1) : nil }
        guard let value = templated(node, path) else { return nil }
        return .typed(value, .integer(0...1))
    }

    public mutating func boolean(_ node: ConfigNode?, _ path: ConfigPath) -> PayloadNode? {
        guard let node else { return nil }
        if let value = node.boolValue { return .bool(value) }
        guard let value = templated(node, path) else { return nil }
        return .typed(value, .boolean)
    }

    /// Any JSON from the pipeline (extras, custom payloads): string leaves are personalized,
    /// everything else is constant.
    public mutating func json(_ node: ConfigNode, _ path: ConfigPath) -> PayloadNode {
        switch node.value {
        case .null: return .constant(Array("null".utf8))
        case .bool(let b): return .bool(b)
        case .int(let i): return .integer(i)
        case .double(let d): return .number(d)
        case .string: return text(node, path) ?? .string("")
        case .sequence(let elements):
            return .makeArray(elements.enumerated().map { json($1, path.appending(index: $0)) })
        case .mapping(let entries):
            return .makeObject(entries.map { PayloadMember($0.key, json($0.node, path / $0.key), omitIfEmpty: false) })
        }
    }

    /// A map whose values must be strings on the wire (FCM `data`): numbers and booleans are
    /// written as their text.
    public mutating func stringMap(_ node: ConfigNode, _ path: ConfigPath) -> [PayloadMember] {
        (node.mappingEntries ?? []).map { key, value in
            let member: PayloadNode = switch value.value {
            case .string: text(value, path / key) ?? .string("")
            case .int(let i): .string(String(i))
            case .double(let d): .string(String(d))
            case .bool(let b): .string(String(b))
            default: .string("")
            }
            return PayloadMember(key, member, omitIfEmpty: false)
        }
    }

    /// The first value present among an override and its fallbacks, compiled as text.
    public mutating func firstText(_ candidates: [(ConfigNode?, ConfigPath)], role: TextRole = .other) -> PayloadNode? {
        for (node, path) in candidates {
            if let node { return text(node, path, role: role) }
        }
        return nil
    }

    /// A string read from the recipient's record at `recordPath` (e.g. Adobe's tracking ids),
    /// rendered as text so numbers become strings; empty (and so omitted) when the record lacks it,
    /// whatever the campaign's `strict` setting.
    public mutating func recordText(_ recordPath: String, field: String) -> PayloadNode? {
        var options = templateOptions
        options.strict = false
        do {
            let template = try TemplateCompiler.compile("{{ \(recordPath) }}", dialect: dialect, options: options)
            return .text(TemplatedValue(.template(template), field: field), role: .other)
        } catch {
            log.error(ConfigPath(field), "cannot read \(recordPath) from the record: \(error.description)")
            return nil
        }
    }

    /// Seconds from now until an expiry given as seconds or as an ISO timestamp (never negative).
    /// A timestamp too far from the run's clock to subtract is reported at the node.
    public mutating func expirySeconds(_ node: ConfigNode, _ path: ConfigPath) -> Int? {
        if let seconds = node.intValue { return max(0, seconds) }
        guard let text = node.stringValue, let at = ISOTimestamp.parse(text) else { return nil }
        guard let seconds = ExpiryRule.seconds(from: now, until: at) else {
            log.error(path, "'\(text)' is out of range from the run's clock (\(now))", at: node)
            return nil
        }
        return seconds
    }

    /// The absolute UNIX time of an expiry given as seconds or as an ISO timestamp (never
    /// negative). A relative expiry the run's clock cannot be added to is reported at the node.
    public mutating func expiryTimestamp(_ node: ConfigNode, _ path: ConfigPath) -> Int? {
        if let seconds = node.intValue {
            guard let at = ExpiryRule.timestamp(now: now, plus: seconds) else {
                log.error(path, "\(seconds) seconds after the run's clock (\(now)) is out of range", at: node)
                return nil
            }
            return at
        }
        if let text = node.stringValue { return ISOTimestamp.parse(text).map { max(0, $0) } }
        return nil
    }
}
