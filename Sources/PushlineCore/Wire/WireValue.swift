/// What a value may hold where it leaves Pushline outside a JSON body: an HTTP header value or one
/// segment of a URL path (or of a file path under the output folder). The one rule every route
/// and `validate` use, for personalized values (per recipient) and configuration constants alike.
public enum WireValue {
    /// Why a value cannot be used; `description` completes "… cannot go in a header: <reason>".
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        fileprivate enum Kind: Sendable, Equatable {
            case empty
            case tooLong(Int, Int)
            case control(UInt8)
            case invalidUTF8
            case separator(UInt8)
            case dotSegment
            case notAllowed(UInt8)
            case notToken(UInt8)
        }
        fileprivate let kind: Kind

        /// Length problems and content problems get different reject codes.
        public var isLength: Bool {
            if case .tooLong = kind { return true }
            return false
        }

        public var description: String {
            switch kind {
            case .empty: "it is empty"
            case .tooLong(let count, let max): "it is \(count) bytes, at most \(max) allowed"
            case .control(let b): "it holds a control character (\(Self.hex(b)))"
            case .invalidUTF8: "it is not valid UTF-8"
            case .separator(let b): "it holds '\(Character(Unicode.Scalar(b)))', which would start another path segment"
            case .dotSegment: "'.' and '..' name a folder, not a segment"
            case .notToken(let b):
                b >= 0x21 && b < 0x7F
                    ? "it holds '\(Character(Unicode.Scalar(b)))', which a header name cannot hold"
                    : "it holds \(Self.hex(b)), which a header name cannot hold"
            case .notAllowed(let b):
                b >= 0x21 && b < 0x7F
                    ? "it holds '\(Character(Unicode.Scalar(b)))' (only letters, digits, '-', '.', '_' and '~' are allowed)"
                    : "it holds \(Self.hex(b)) (only ASCII letters, digits, '-', '.', '_' and '~' are allowed)"
            }
        }

        private static func hex(_ b: UInt8) -> String { WireValue.describe(b) }
    }

    /// A byte as `0x0D`, for messages.
    public static func describe(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return "0x" + String(decoding: [digits[Int(b >> 4)], digits[Int(b & 0xF)]], as: UTF8.self)
    }

    /// HTTP header names from configuration (custom payloads' `headers` maps): 1 to 256 RFC 9110
    /// token characters.
    public static func headerNameProblem(_ name: String) -> Problem? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return Problem(kind: .empty) }
        if bytes.count > 256 { return Problem(kind: .tooLong(bytes.count, 256)) }
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            default:
                if Array("!#$%&'*+-.^_`|~".utf8).contains(b) { continue }
                return b < 0x20 || b == 0x7F ? Problem(kind: .control(b)) : Problem(kind: .notToken(b))
            }
        }
        return nil
    }

    /// HTTP header values: valid UTF-8, no control character (CR, LF, NUL, TAB and the rest of
    /// C0, DEL: a CR or LF would end the header and start another one), at most `maxBytes` bytes.
    /// Empty is allowed here (an empty personalized value drops the header); constants are
    /// checked with `allowEmpty: false`.
    public static func headerProblem(_ bytes: UnsafeRawBufferPointer, maxBytes: Int, allowEmpty: Bool = true) -> Problem? {
        if bytes.isEmpty && !allowEmpty { return Problem(kind: .empty) }
        if bytes.count > maxBytes { return Problem(kind: .tooLong(bytes.count, maxBytes)) }
        for b in bytes where b < 0x20 || b == 0x7F {
            return Problem(kind: .control(b))
        }
        return UTF8Validation.isValid(bytes) ? nil : Problem(kind: .invalidUTF8)
    }

    /// One path segment (a URL path segment such as FCM's project id, or a file name such as the
    /// campaign's output folder): 1 to `maxBytes` RFC 3986 unreserved characters (ASCII letters,
    /// digits, `-`, `.`, `_`, `~`), and not `.` or `..`. Nothing is percent-encoded, so `%` is
    /// refused rather than left for a server or file system to decode differently.
    public static func pathSegmentProblem(_ bytes: UnsafeRawBufferPointer, maxBytes: Int) -> Problem? {
        if bytes.isEmpty { return Problem(kind: .empty) }
        if bytes.count > maxBytes { return Problem(kind: .tooLong(bytes.count, maxBytes)) }
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                continue
            case UInt8(ascii: "/"), UInt8(ascii: "\\"):
                return Problem(kind: .separator(b))
            case 0..<0x20, 0x7F:
                return Problem(kind: .control(b))
            default:
                return Problem(kind: .notAllowed(b))
            }
        }
        if bytes.count <= 2 && bytes.allSatisfy({ $0 == UInt8(ascii: ".") }) { return Problem(kind: .dotSegment) }
        return nil
    }

    /// The first `.` or `..` segment of an absolute URL's path (also spelled `%2e`, which
    /// servers decode before they resolve), or nil. A configured URL must name its resource
    /// as written: a server or a proxy would resolve such a segment to another path.
    public static func dotSegment(inURL url: String) -> String? {
        let (origin, path) = RouteURL.split(url)
        // No scheme, or a query or fragment before the first '/': the URL has no path.
        guard !origin.isEmpty, !origin.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return nil }
        let beforeQuery = path.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        for segment in beforeQuery.split(separator: UInt8(ascii: "/")) where isDotSegment(Array(segment)) {
            return String(decoding: segment, as: UTF8.self)
        }
        return nil
    }

    /// ".", "..", or either with dots written "%2e" / "%2E".
    private static func isDotSegment(_ segment: [UInt8]) -> Bool {
        var dots = 0
        var index = 0
        while index < segment.count {
            if segment[index] == UInt8(ascii: ".") {
                index += 1
            } else if index + 2 < segment.count, segment[index] == UInt8(ascii: "%"), segment[index + 1] == UInt8(ascii: "2"), segment[index + 2] | 0x20 == UInt8(ascii: "e") {
                index += 3
            } else {
                return false
            }
            dots += 1
        }
        return dots == 1 || dots == 2
    }

    public static func headerProblem(_ text: String, maxBytes: Int, allowEmpty: Bool = true) -> Problem? {
        var text = text
        return text.withUTF8 { headerProblem(UnsafeRawBufferPointer($0), maxBytes: maxBytes, allowEmpty: allowEmpty) }
    }

    public static func pathSegmentProblem(_ text: String, maxBytes: Int) -> Problem? {
        var text = text
        return text.withUTF8 { pathSegmentProblem(UnsafeRawBufferPointer($0), maxBytes: maxBytes) }
    }

    /// Headers Pushline writes have no provider limit below this; it bounds what a header may
    /// carry (8 KiB is the usual per-field limit of HTTP servers).
    public static let maxHeaderBytes = 8192
    /// Path segments: 255 bytes is the file-name limit of common file systems and well above any
    /// provider id.
    public static let maxSegmentBytes = 255
}
