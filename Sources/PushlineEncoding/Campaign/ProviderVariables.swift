public import PushlineCore

/// `${VAR}` in the values of the `providers:` block, read from the environment (key paths and
/// endpoints differ per machine; credentials stay out of the pipeline file).
///
/// Only `providers:` values are expanded: templates elsewhere may hold `$` and `${`. Rules:
/// `${NAME}` (NAME: ASCII letters, digits and `_`, not starting with a digit) is replaced by the
/// variable's value; `$${` writes a literal `${`; any other `$` stays as it is. There are no
/// defaults (`${A:-b}`) and no nesting: an expanded value is not expanded again. A variable that is
/// unset or empty is an error naming it, at the value's path, line and column.
public enum ProviderVariables {
    public struct Result: Sendable {
        /// The tree with every expandable value of `providers:` replaced.
        public var root: ConfigNode
        public var diagnostics: [ConfigDiagnostic]
        /// Paths (`providers.apns.key_file`) whose expansion failed: their value is left as written,
        /// and later checks of those paths are dropped so one mistake gives one diagnostic.
        public var failedPaths: Set<String>
    }

    /// Longest variable name taken.
    static let maxNameBytes = 255

    public static func expand(_ root: ConfigNode, environment: [String: String]) -> Result {
        var result = Result(root: root, diagnostics: [], failedPaths: [])
        guard case .mapping(var top) = root.value,
              let index = top.lastIndex(where: { $0.key == "providers" }),
              case .mapping(var providers) = top[index].node.value
        else { return result }
        let base = ConfigPath("providers")
        // Two levels only (`providers.<name>.<key>`): every value the schema takes there is a
        // scalar, so nothing deeper needs expanding and no recursion is reachable from input.
        for p in providers.indices {
            let name = providers[p].key
            guard case .mapping(var members) = providers[p].node.value else { continue }
            // Unknown providers and keys are left as written: the schema reports them by name.
            guard let schema = objectSchema(for: name) else { continue }
            for m in members.indices {
                guard let property = schema.property(members[m].key) else { continue }
                expandScalar(&members[m].node, path: base / name / members[m].key, type: property.type, environment: environment, into: &result)
            }
            providers[p].node.value = .mapping(members)
        }
        top[index].node.value = .mapping(providers)
        result.root.value = .mapping(top)
        return result
    }

    static func objectSchema(for provider: String) -> ObjectSchema? {
        if case .object(let schema)? = PipelineSchema.providers.property(provider)?.type { return schema }
        return nil
    }

    static func expandScalar(_ node: inout ConfigNode, path: ConfigPath, type: SchemaType?, environment: [String: String], into result: inout Result) {
        guard let text = node.stringValue, text.utf8.contains(UInt8(ascii: "$")) else { return }
        do {
            let expanded = try substitute(text, environment: environment)
            if expanded != text { node.value = retyped(expanded, as: type) }
        } catch {
            result.diagnostics.append(ConfigDiagnostic(.error, path: path, error.message, at: node))
            result.failedPaths.insert(path.description)
        }
    }

    struct Problem: Error {
        var message: String
    }

    /// `text` with every `${NAME}` replaced and every `$${` turned into `${`.
    static func substitute(_ text: String, environment: [String: String]) throws(Problem) -> String {
        let bytes = Array(text.utf8)
        let dollar = UInt8(ascii: "$"), open = UInt8(ascii: "{"), close = UInt8(ascii: "}")
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            guard byte == dollar, i + 1 < bytes.count else {
                out.append(byte)
                i += 1
                continue
            }
            if bytes[i + 1] == dollar, i + 2 < bytes.count, bytes[i + 2] == open {
                out.append(contentsOf: [dollar, open])
                i += 3
                continue
            }
            guard bytes[i + 1] == open else {
                out.append(byte)
                i += 1
                continue
            }
            let nameStart = i + 2
            guard let end = bytes[nameStart...].firstIndex(of: close) else {
                throw Problem(message: "'${' is not closed by '}' (write $${ for a literal ${)")
            }
            let name = bytes[nameStart..<end]
            guard isVariableName(name) else {
                let shown = PrintableName.bounded(name, limit: 64)
                throw Problem(message: "'${\(shown)}' is not an environment variable name (ASCII letters, digits and _, not starting with a digit; write $${ for a literal ${)")
            }
            let key = String(decoding: name, as: UTF8.self)
            guard let value = environment[key] else {
                throw Problem(message: "environment variable \(key) is not set")
            }
            guard !value.isEmpty else {
                throw Problem(message: "environment variable \(key) is empty")
            }
            out.append(contentsOf: value.utf8)
            i = end + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isVariableName(_ name: ArraySlice<UInt8>) -> Bool {
        guard let first = name.first, name.count <= maxNameBytes else { return false }
        func letter(_ b: UInt8) -> Bool {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || b == UInt8(ascii: "_")
        }
        return letter(first) && name.allSatisfy { letter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// A plain YAML scalar `connections: ${N}` is a string until expanded: an integer or boolean
    /// property gets the typed value back, so `N=4` reads as YAML's `4` would. Anything else stays
    /// a string (the schema then reports it against the property's type).
    static func retyped(_ text: String, as type: SchemaType?) -> ConfigNode.Value {
        switch type {
        case .integer?:
            let digits = text.utf8
            if (1...18).contains(digits.count), digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int(text) {
                return .int(value)
            }
        case .boolean?:
            if text == "true" { return .bool(true) }
            if text == "false" { return .bool(false) }
        default:
            break
        }
        return .string(text)
    }
}

/// A value from the pipeline shown in a message: printable ASCII kept, anything else (a line
/// break, a terminal escape, non-ASCII) as `?`, cut to `limit` bytes, so a diagnostic stays one
/// line whatever the value holds.
public enum PrintableName {
    public static func bounded(_ text: String, limit: Int) -> String {
        bounded(ArraySlice(text.utf8), limit: limit)
    }

    static func bounded(_ bytes: ArraySlice<UInt8>, limit: Int) -> String {
        var out = String()
        for byte in bytes.prefix(limit) {
            out.unicodeScalars.append((0x20..<0x7F).contains(byte) ? Unicode.Scalar(byte) : "?")
        }
        return bytes.count > limit ? out + "…" : out
    }
}
