/// A configuration value read from a pipeline file, with where it came from.
///
/// The YAML loader (PushlineRuntime) turns the document into this tree once; validation and
/// compilation walk it and report problems by JSON/YAML path and by line and column.
public struct ConfigNode: Sendable {
    public indirect enum Value: Sendable {
        case null
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case sequence([ConfigNode])
        case mapping([(key: String, node: ConfigNode)])
    }

    public var value: Value
    /// 1-based line and column in the source file (0 when built in code).
    public var line: Int
    public var column: Int

    public init(_ value: Value, line: Int = 0, column: Int = 0) {
        self.value = value
        self.line = line
        self.column = column
    }

    /// The member named `key` of a mapping (nil for other kinds or when absent).
    public subscript(key: String) -> ConfigNode? {
        guard case .mapping(let entries) = value else { return nil }
        return entries.last(where: { $0.key == key })?.node
    }

    public var mappingEntries: [(key: String, node: ConfigNode)]? {
        if case .mapping(let entries) = value { return entries }
        return nil
    }

    public var sequenceElements: [ConfigNode]? {
        if case .sequence(let elements) = value { return elements }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = value { return s }
        return nil
    }

    public var intValue: Int? {
        if case .int(let i) = value { return i }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = value { return b }
        return nil
    }

    /// Numbers of either kind, as a double.
    public var numberValue: Double? {
        switch value {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    public var isNull: Bool {
        if case .null = value { return true }
        return false
    }

    /// What a person would call this kind of value, for error messages.
    public var kindName: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .sequence: "a list"
        case .mapping: "an object"
        }
    }
}

/// A path into the configuration, printed the way people write it: `notification.ios.alert.title`,
/// `device_types[2]`.
public struct ConfigPath: Sendable, Hashable, CustomStringConvertible {
    public private(set) var description: String

    public init(_ root: String = "") { description = root }

    public func appending(_ key: String) -> ConfigPath {
        ConfigPath(description.isEmpty ? key : description + "." + key)
    }

    public func appending(index: Int) -> ConfigPath {
        ConfigPath(description + "[\(index)]")
    }

    public static func / (lhs: ConfigPath, rhs: String) -> ConfigPath { lhs.appending(rhs) }
}

/// One problem (or warning) found in a pipeline file.
public struct ConfigDiagnostic: Sendable, CustomStringConvertible, Hashable {
    public enum Severity: String, Sendable { case error, warning }

    public var severity: Severity
    public var path: String
    public var message: String
    public var line: Int
    public var column: Int
    /// The file the line and column are in, when not the pipeline file itself (a `--providers` file).
    public var file: String?

    public init(_ severity: Severity, path: ConfigPath, _ message: String, at node: ConfigNode? = nil) {
        self.severity = severity
        self.path = path.description
        self.message = message
        self.line = node?.line ?? 0
        self.column = node?.column ?? 0
    }

    /// `12:5: error: notification.android.icon_color: expected #rrggbb`
    public var description: String {
        let place = line > 0 ? "\(line):\(column): " : ""
        let subject = path.isEmpty ? "" : "\(path): "
        return "\(place)\(severity.rawValue): \(subject)\(message)"
    }
}

/// Collects diagnostics while a pipeline is validated, so one run reports every problem.
public struct DiagnosticLog: Sendable {
    public private(set) var diagnostics: [ConfigDiagnostic] = []

    public init() {}

    public mutating func error(_ path: ConfigPath, _ message: String, at node: ConfigNode? = nil) {
        diagnostics.append(ConfigDiagnostic(.error, path: path, message, at: node))
    }

    public mutating func warning(_ path: ConfigPath, _ message: String, at node: ConfigNode? = nil) {
        diagnostics.append(ConfigDiagnostic(.warning, path: path, message, at: node))
    }

    public mutating func append(contentsOf other: DiagnosticLog) {
        diagnostics.append(contentsOf: other.diagnostics)
    }

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
    public var errors: [ConfigDiagnostic] { diagnostics.filter { $0.severity == .error } }
    public var warnings: [ConfigDiagnostic] { diagnostics.filter { $0.severity == .warning } }
}

/// "Did you mean" for unknown keys: the closest known name within a small edit distance.
public enum NameSuggestion {
    public static func closest(to name: String, in candidates: some Sequence<String>) -> String? {
        let a = Array(name.lowercased().utf8)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(a, Array(candidate.lowercased().utf8))
            if d <= max(2, a.count / 3), best == nil || d < best!.1 { best = (candidate, d) }
        }
        return best?.0
    }

    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
