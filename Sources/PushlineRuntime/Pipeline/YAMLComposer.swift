import CYaml
import PushlineCore

/// Builds a `ConfigNode` tree straight from libyaml's events, with bounded work.
///
/// Yams' own composer recurses once per nesting level and hashes whole subtrees to find duplicate
/// keys, and expanding its aliases into our tree is exponential in the document's size (the
/// "billion laughs" bomb). libyaml's event parser is a state machine with heap stacks, so this
/// composer drives it with an explicit stack and checks, as each event arrives: nesting depth,
/// alias count, and the expanded size every alias adds (the size of the anchored subtree, known
/// when the anchor completed). Nothing recursive runs before the tree is known to be bounded.
///
/// Every problem is a diagnostic at the event's line and column, with the path to it.
struct YAMLComposer {
    struct Failure: Error {
        var diagnostic: ConfigDiagnostic
    }

    private enum Frame {
        case sequence(items: [ConfigNode], start: Start)
        case mapping(entries: [(key: String, node: ConfigNode)], keys: Set<String>, pendingKey: String?, start: Start)
    }

    /// Where a collection began, its anchor, and the expanded size before it (its own size is the
    /// difference when it ends).
    private struct Start {
        var line: Int
        var column: Int
        var anchor: String?
        var sizeBefore: Int
    }

    private struct Anchored {
        var node: ConfigNode
        var size: Int
    }

    let limits: ConfigLimits
    private var stack: [Frame] = []
    private var anchors: [String: Anchored] = [:]
    private var aliases = 0
    private var expandedSize = 0
    private var root: ConfigNode?
    private var documents = 0

    init(limits: ConfigLimits) {
        self.limits = limits
    }

    /// Parses `bytes` (one YAML document); nil when the stream holds no document.
    static func compose(_ bytes: [UInt8], limits: ConfigLimits) throws(Failure) -> ConfigNode? {
        var composer = YAMLComposer(limits: limits)
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw Failure(diagnostic: ConfigDiagnostic(.error, path: ConfigPath(), "not valid YAML: the parser could not start (out of memory)"))
        }
        defer { yaml_parser_delete(&parser) }
        let result: Result<ConfigNode?, Failure> = bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            var event = yaml_event_t()
            while true {
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    var diagnostic = composer.parserDiagnostic(parser)
                    if diagnostic.message.contains("flow"), lineHoldsVariable(buffer, line: diagnostic.line) {
                        diagnostic.message += " (a ${VAR} inside { } or [ ] must be quoted, as { } are YAML's: key_file: \"${APNS_KEY_FILE}\")"
                    }
                    return .failure(Failure(diagnostic: diagnostic))
                }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return .success(composer.root) }
                do throws(Failure) {
                    try composer.handle(event)
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    // MARK: Events

    private mutating func handle(_ event: yaml_event_t) throws(Failure) {
        let line = Int(truncatingIfNeeded: event.start_mark.line) + 1
        let column = Int(truncatingIfNeeded: event.start_mark.column) + 1
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 { throw fail("the pipeline file must hold one YAML document, found a second one", line, column) }
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let anchor = Self.string(scalar.anchor)
            let text = scalar.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self) } ?? ""
            if expectsKey {
                if anchor != nil { throw fail("anchors on keys are not supported", line, column) }
                if let tag = Self.string(scalar.tag), tag != Self.coreTag + "str" {
                    throw fail("keys must be plain strings; found the tag \(Self.excerpt(tag))", line, column)
                }
                try addKey(text, line, column)
                return
            }
            let value = try scalarValue(text, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE, tag: Self.string(scalar.tag), line, column)
            try grow(by: 1 + text.utf8.count, line, column)
            let node = ConfigNode(value, line: line, column: column)
            if let anchor { anchors[anchor] = Anchored(node: node, size: 1 + text.utf8.count) }
            try add(node, line, column)
        case YAML_ALIAS_EVENT:
            let name = Self.string(event.data.alias.anchor) ?? ""
            if expectsKey { throw fail("aliases cannot be keys; keys must be plain strings", line, column) }
            aliases += 1
            if aliases > limits.maxAliases {
                throw fail("more than \(limits.maxAliases) aliases; the pipeline file is limited to \(limits.maxAliases)", line, column)
            }
            guard let anchored = anchors[name] else { throw fail("the alias *\(Self.excerpt(name)) names no anchor defined before it", line, column) }
            try grow(by: anchored.size, line, column)
            var node = anchored.node
            node.line = line
            node.column = column
            try add(node, line, column)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isSequence = event.type == YAML_SEQUENCE_START_EVENT
            if expectsKey { throw fail("keys must be plain strings; found a \(isSequence ? "list" : "mapping") as a key", line, column) }
            let tag = Self.string(isSequence ? event.data.sequence_start.tag : event.data.mapping_start.tag)
            if let tag, tag != Self.coreTag + (isSequence ? "seq" : "map") {
                throw fail("YAML tags are not supported (found \(Self.excerpt(tag)))", line, column)
            }
            if stack.count >= limits.maxDepth {
                throw fail(path: abbreviatedPath(), "nested more than \(limits.maxDepth) levels deep; the pipeline file is limited to \(limits.maxDepth)", line, column)
            }
            let sizeBefore = expandedSize
            try grow(by: 1, line, column)
            let start = Start(line: line, column: column, anchor: Self.string(isSequence ? event.data.sequence_start.anchor : event.data.mapping_start.anchor), sizeBefore: sizeBefore)
            stack.append(isSequence ? .sequence(items: [], start: start) : .mapping(entries: [], keys: [], pendingKey: nil, start: start))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let frame = stack.popLast() else { return }
            let node: ConfigNode
            let start: Start
            switch frame {
            case .sequence(let items, let s):
                node = ConfigNode(.sequence(items), line: s.line, column: s.column)
                start = s
            case .mapping(let entries, _, _, let s):
                node = ConfigNode(.mapping(entries), line: s.line, column: s.column)
                start = s
            }
            if let anchor = start.anchor { anchors[anchor] = Anchored(node: node, size: expandedSize - start.sizeBefore) }
            try add(node, start.line, start.column)
        default:
            break
        }
    }

    /// True when the next node is a mapping key.
    private var expectsKey: Bool {
        if case .mapping(_, _, nil, _)? = stack.last { return true }
        return false
    }

    private mutating func addKey(_ key: String, _ line: Int, _ column: Int) throws(Failure) {
        guard case .mapping(let entries, var keys, _, let start)? = stack.popLast() else { return }
        if !keys.insert(key).inserted {
            throw fail("the key '\(Self.excerpt(key))' appears twice in the same mapping", line, column, path: currentPath().appending(Self.excerpt(key)))
        }
        try grow(by: 1 + key.utf8.count, line, column)
        stack.append(.mapping(entries: entries, keys: keys, pendingKey: key, start: start))
    }

    private mutating func add(_ node: ConfigNode, _ line: Int, _ column: Int) throws(Failure) {
        guard let frame = stack.popLast() else {
            root = node
            return
        }
        switch frame {
        case .sequence(var items, let start):
            items.append(node)
            stack.append(.sequence(items: items, start: start))
        case .mapping(var entries, let keys, let key, let start):
            entries.append((key: key ?? "", node: node))
            stack.append(.mapping(entries: entries, keys: keys, pendingKey: nil, start: start))
        }
    }

    private mutating func grow(by size: Int, _ line: Int, _ column: Int) throws(Failure) {
        let (sum, overflow) = expandedSize.addingReportingOverflow(size)
        if overflow || sum > limits.maxExpandedSize {
            throw fail("the document is too large once its aliases are expanded (more than \(limits.maxExpandedSize) nodes and bytes)", line, column)
        }
        expandedSize = sum
    }

    // MARK: Scalars

    private static let coreTag = "tag:yaml.org,2002:"

    /// YAML 1.2 core schema for plain scalars; quoted scalars are strings. Explicit core tags
    /// (`!!str`, `!!int`, …) are honoured; any other tag is an error.
    private func scalarValue(_ text: String, plain: Bool, tag: String?, _ line: Int, _ column: Int) throws(Failure) -> ConfigNode.Value {
        if let tag {
            switch tag {
            case Self.coreTag + "str": return .string(text)
            case Self.coreTag + "int", Self.coreTag + "float", Self.coreTag + "bool", Self.coreTag + "null":
                return try resolvePlain(text, line, column)
            default:
                throw fail("YAML tags are not supported (found \(Self.excerpt(tag)))", line, column)
            }
        }
        return plain ? try resolvePlain(text, line, column) : .string(text)
    }

    private func resolvePlain(_ text: String, _ line: Int, _ column: Int) throws(Failure) -> ConfigNode.Value {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let int = Int(text) { return .int(int) }
        let utf8 = text.utf8
        let digits = utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") ? utf8.dropFirst() : utf8[...]
        if !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            throw fail("the integer \(Self.excerpt(text)) is out of range (\(Int.min) to \(Int.max))", line, column)
        }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }),
           text.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true,
           let double = Double(text) {
            // An id such as an APNs key id `40E0629867` reads as a float in YAML: say how to keep it text.
            if !double.isFinite { throw fail("the number \(Self.excerpt(text)) is out of range (quote it if it is text: \"\(Self.excerpt(text))\")", line, column) }
            return .double(double)
        }
        return .string(text)
    }

    // MARK: Diagnostics

    /// The path of the node being built: keys and indexes of the open collections.
    private func currentPath() -> ConfigPath {
        var path = ConfigPath()
        for frame in stack {
            switch frame {
            case .sequence(let items, _): path = path.appending(index: items.count)
            case .mapping(_, _, let key, _): if let key { path = path.appending(Self.excerpt(key)) }
            }
        }
        return path
    }

    /// The first levels of the current path, for a depth error (the whole one is as deep as the bound).
    private func abbreviatedPath() -> ConfigPath {
        var path = ConfigPath()
        for frame in stack.prefix(8) {
            switch frame {
            case .sequence(let items, _): path = path.appending(index: items.count)
            case .mapping(_, _, let key, _): if let key { path = path.appending(Self.excerpt(key)) }
            }
        }
        return stack.count > 8 ? path.appending("…") : path
    }

    private func fail(path: ConfigPath, _ message: String, _ line: Int, _ column: Int) -> Failure {
        fail(message, line, column, path: path)
    }

    private func fail(_ message: String, _ line: Int, _ column: Int, path: ConfigPath? = nil) -> Failure {
        var diagnostic = ConfigDiagnostic(.error, path: path ?? currentPath(), message)
        diagnostic.line = line
        diagnostic.column = column
        return Failure(diagnostic: diagnostic)
    }

    private func parserDiagnostic(_ parser: yaml_parser_t) -> ConfigDiagnostic {
        var message = "not valid YAML"
        if parser.error == YAML_MEMORY_ERROR {
            message += ": out of memory"
        } else if let problem = parser.problem, String(cString: problem).contains("nesting level") {
            // libyaml's own bound (1,000 levels) can trip first while it scans a flow collection ahead.
            message = "nested more than \(limits.maxDepth) levels deep; the pipeline file is limited to \(limits.maxDepth)"
        } else if let problem = parser.problem {
            message += ": \(String(cString: problem))"
            if let context = parser.context { message += " \(String(cString: context))" }
        }
        var diagnostic = ConfigDiagnostic(.error, path: ConfigPath(), message)
        let mark = parser.error == YAML_READER_ERROR ? nil : parser.problem_mark
        if let mark {
            diagnostic.line = Int(truncatingIfNeeded: mark.line) + 1
            diagnostic.column = Int(truncatingIfNeeded: mark.column) + 1
        }
        if parser.error == YAML_READER_ERROR {
            message += " (at byte \(parser.problem_offset))"
            diagnostic.message = message
        }
        return diagnostic
    }

    /// Whether 1-based `line` of the file holds `${` (a provider variable written unquoted in a flow
    /// collection, where YAML reads its braces as structure).
    private static func lineHoldsVariable(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) -> Bool {
        guard line > 0 else { return false }
        var current = 1
        var i = 0
        while i < bytes.count && current < line {
            if bytes[i] == UInt8(ascii: "\n") { current += 1 }
            i += 1
        }
        while i + 1 < bytes.count && bytes[i] != UInt8(ascii: "\n") {
            if bytes[i] == UInt8(ascii: "$") && bytes[i + 1] == UInt8(ascii: "{") { return true }
            i += 1
        }
        return false
    }

    /// Text from the file quoted in a diagnostic, cut to 80 characters so a message stays one
    /// readable line whatever the file holds.
    private static func excerpt(_ text: String) -> String {
        text.count <= 80 ? text : String(text.prefix(80)) + "…"
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: pointer)
    }
}
