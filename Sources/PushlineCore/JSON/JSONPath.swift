/// A parsed lookup path: `customer.first_name`, `devices[1].token`, `event["title"]`, `a['b c'][-1]`.
///
/// Grammar: a first bare key or bracket, then any number of `.key` and `[...]`. A bare key is any
/// run of characters other than `.`, `[`, `]`, quotes and whitespace (so `a.0` is the key "0"); a
/// bracket holds an integer index (negative counts from the end) or a quoted key in `"` or `'`
/// with `\` escaping the next character. An empty key is only reachable quoted (`[""]`).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key([UInt8])
        case index(Int)
    }
    public var components: [Component] {
        get { Self.decode(steps) }
        set { steps = Self.encode(newValue) }
    }

    /// The components as one byte string, the path's only storage, which `JSONValue.value(at:)`
    /// walks: a key is 0, its length (native `UInt32`) and its bytes; an index is 1 and a native
    /// `Int`. Walking an array of enums retained each key's array per step, and a template looks
    /// a path up for every output of every request; one array also keeps a copy of the path
    /// (a compiled output's, passed to the lookup) at one retain.
    internal private(set) var steps: [UInt8]

    static let keyStep: UInt8 = 0
    static let indexStep: UInt8 = 1

    public init(components: [Component]) {
        steps = Self.encode(components)
    }

    public init(parsing text: String) throws(JSONPathError) {
        let scalars = Array(text.unicodeScalars)
        var parser = JSONPathParser(scalars: scalars)
        try self.init(components: parser.parse())
    }

    private static func encode(_ components: [Component]) -> [UInt8] {
        var steps: [UInt8] = []
        for component in components {
            switch component {
            case .key(let bytes):
                steps.append(keyStep)
                withUnsafeBytes(of: UInt32(bytes.count)) { steps.append(contentsOf: $0) }
                steps.append(contentsOf: bytes)
            case .index(let position):
                steps.append(indexStep)
                withUnsafeBytes(of: position) { steps.append(contentsOf: $0) }
            }
        }
        return steps
    }

    private static func decode(_ steps: [UInt8]) -> [Component] {
        steps.withUnsafeBytes { steps in
            var components: [Component] = []
            var at = 0
            while at < steps.count {
                if steps[at] == keyStep {
                    let length = Int(steps.loadUnaligned(fromByteOffset: at + 1, as: UInt32.self))
                    components.append(.key(Array(steps[(at + 5)..<(at + 5 + length)])))
                    at += 5 + length
                } else {
                    components.append(.index(steps.loadUnaligned(fromByteOffset: at + 1, as: Int.self)))
                    at += 1 + MemoryLayout<Int>.size
                }
            }
            return components
        }
    }

    /// The path in the syntax `init(parsing:)` reads back: bare keys where possible, `["..."]` otherwise.
    public var description: String {
        var text = ""
        for (position, component) in components.enumerated() {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let bytes):
                let key = String(decoding: bytes, as: UTF8.self)
                if !key.isEmpty && key.unicodeScalars.allSatisfy(JSONPathParser.isBareKeyScalar) {
                    text += position == 0 ? key : "." + key
                } else {
                    text += "[\""
                    for scalar in key.unicodeScalars {
                        if scalar == "\"" || scalar == "\\" { text += "\\" }
                        text.unicodeScalars.append(scalar)
                    }
                    text += "\"]"
                }
            }
        }
        return text
    }
}

public struct JSONPathError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
    public var description: String { "bad path at character \(offset + 1): \(message)" }
}

/// Reads a path one Unicode scalar at a time; offsets in errors count scalars.
private struct JSONPathParser {
    let scalars: [Unicode.Scalar]
    var i = 0

    init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    static func isBareKeyScalar(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case ".", "[", "]", "\"", "'": false
        default: !s.properties.isWhitespace
        }
    }

    mutating func parse() throws(JSONPathError) -> [JSONPath.Component] {
        guard !scalars.isEmpty else { throw JSONPathError(offset: 0, message: "empty path") }
        var components: [JSONPath.Component] = []
        if scalars[0] != "[" {
            components.append(try bareKey(after: nil))
        }
        while i < scalars.count {
            switch scalars[i] {
            case ".":
                i += 1
                components.append(try bareKey(after: "."))
            case "[":
                components.append(try bracket())
            default:
                throw unexpected("expected '.' or '['")
            }
        }
        return components
    }

    private mutating func bareKey(after separator: Character?) throws(JSONPathError) -> JSONPath.Component {
        let start = i
        var key: [UInt8] = []
        while i < scalars.count, Self.isBareKeyScalar(scalars[i]) {
            key.append(contentsOf: UTF8.encode(scalars[i])!)
            i += 1
        }
        guard !key.isEmpty else {
            if i < scalars.count, scalars[i].properties.isWhitespace || scalars[i] == "\"" || scalars[i] == "'" {
                throw unexpected("a key with spaces or quotes must be bracketed, like [\"b c\"]")
            }
            throw JSONPathError(offset: start, message: separator == nil
                ? "empty key at the start of the path"
                : "empty key after '.' (in 'a..b' or a trailing '.')")
        }
        if i < scalars.count, scalars[i].properties.isWhitespace || scalars[i] == "\"" || scalars[i] == "'" || scalars[i] == "]" {
            throw unexpected(scalars[i] == "]"
                ? "']' without a matching '['"
                : "a key with spaces or quotes must be bracketed, like [\"b c\"]")
        }
        return .key(key)
    }

    private mutating func bracket() throws(JSONPathError) -> JSONPath.Component {
        let open = i
        i += 1
        guard i < scalars.count else { throw JSONPathError(offset: open, message: "unclosed '['") }
        let component: JSONPath.Component
        switch scalars[i] {
        case "\"", "'":
            let quote = scalars[i]
            i += 1
            var key: [UInt8] = []
            while true {
                guard i < scalars.count else {
                    throw JSONPathError(offset: open, message: "unterminated quoted key")
                }
                var scalar = scalars[i]
                if scalar == quote { i += 1; break }
                if scalar == "\\" {
                    i += 1
                    guard i < scalars.count else { throw JSONPathError(offset: open, message: "unterminated quoted key") }
                    scalar = scalars[i]
                }
                key.append(contentsOf: UTF8.encode(scalar)!)
                i += 1
            }
            component = .key(key)
        case "]":
            throw JSONPathError(offset: open, message: "empty brackets: expected an index or a quoted key")
        default:
            let start = i
            var negative = false
            if scalars[i] == "-" { negative = true; i += 1 }
            var value = 0
            var digits = 0
            while i < scalars.count, ("0"..."9").contains(scalars[i]) {
                let digit = Int(scalars[i].value &- 0x30)
                let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
                guard !o1 && !o2 else { throw JSONPathError(offset: start, message: "index out of range") }
                value = next
                digits += 1
                i += 1
            }
            guard digits > 0 else {
                throw unexpected("expected an index or a quoted key in brackets")
            }
            component = .index(value)
        }
        guard i < scalars.count, scalars[i] == "]" else {
            throw i < scalars.count ? unexpected("expected ']'") : JSONPathError(offset: open, message: "unclosed '['")
        }
        i += 1
        return component
    }

    private func unexpected(_ message: String) -> JSONPathError {
        JSONPathError(offset: i, message: "unexpected '\(scalars[i])': \(message)")
    }
}
