#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A broken invariant: printed with a `FINDING:` prefix, then a trap, so libFuzzer records the
/// input as a crash like any other (`scripts/fuzz` then fails).
public func finding(_ message: @autoclosure () -> String) -> Never {
    fatalError("FINDING: \(message())")
}

public func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { finding(message()) }
}

/// Bytes shown in a finding: printable ASCII as is, the rest as \xNN, at most `limit` bytes.
public func escaped<C: Collection<UInt8>>(_ bytes: C, limit: Int = 300) -> String {
    var out = ""
    for b in bytes.prefix(limit) {
        if b == UInt8(ascii: "\\") {
            out += "\\\\"
        } else if b >= 0x20 && b < 0x7F {
            out.unicodeScalars.append(Unicode.Scalar(b))
        } else {
            let hex = String(b, radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" : "") + hex
        }
    }
    return bytes.count > limit ? out + "…(\(bytes.count) bytes)" : out
}

public enum FuzzInput {
    /// The input bytes as an array (the hooks' pointer is only valid during the call).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Splits at the first NUL byte: (text before it, bytes after it). Without a NUL the whole
    /// input is the text and the second part is empty.
    public static func split(_ bytes: [UInt8]) -> (text: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
        guard let nul = bytes.firstIndex(of: 0) else { return (bytes[...], []) }
        return (bytes[..<nul], bytes[(nul + 1)...])
    }
}

/// Checks NDJSON output: every line (ending in `\n`, none empty) is one valid JSON value with
/// paired surrogate escapes. Returns the lines.
@discardableResult
public func checkNDJSON(_ bytes: [UInt8], what: String) -> [ArraySlice<UInt8>] {
    guard !bytes.isEmpty else { return [] }
    check(bytes.last == 0x0A, "\(what): output does not end with a newline: \(escaped(bytes.suffix(80)))")
    let lines = bytes.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false)
    for line in lines {
        check(!line.isEmpty, "\(what): empty output line")
        if let failure = StrictJSON.validate(Array(line)) {
            finding("\(what): output line is not valid JSON (\(failure)): \(escaped(line, limit: 2000))")
        }
    }
    return lines
}

/// Known findings to step around while exploring (`scripts/fuzz --mask-known`, environment
/// `PUSHLINE_FUZZ_MASK`), so that a shallow crash does not hide the next one. Never set in CI.
public enum KnownFindings {
    /// JSONParser traps ("tape bound of n/2 + 1 values exceeded") on invalid text such as `[[x`:
    /// masked by appending as many spaces as the text has bytes, which keeps its meaning but
    /// doubles the bound.
    public static let tapeBound = mask.contains("tape")
    /// A Liquid template whose parsed nodes are all text (`{{}}`, `{%#%}`, `{% raw %}`,
    /// comments) gets its *source* as `literalText`, which the encoder writes instead of the
    /// render: masked by not comparing the two.
    public static let literalText = mask.contains("literal")

    private static let mask: String = {
        guard let raw = getenv("PUSHLINE_FUZZ_MASK") else { return "" }
        return String(cString: raw)
    }()

    /// `bytes` as the targets should feed it to the JSON reader.
    public static func jsonText(_ bytes: [UInt8]) -> [UInt8] {
        tapeBound ? bytes + [UInt8](repeating: 0x20, count: bytes.count) : bytes
    }
}
