/// Text from a server or a file made safe to put in an error, a log line or a results file:
/// printable ASCII only, bounded, and with long token-like runs redacted.
///
/// Why the redaction: a hostile or echoing server could put our JWT, assertion or access
/// token into an error body we quote. Credentials are long runs of base64url (and `.`, `/`,
/// `+`); no reason string or message word is that long, so such runs are never printed.
enum PrintableText {
    /// Runs of token characters at least this long are replaced (a JWT segment, an access
    /// token, a key line are all longer; APNs reasons are at most 28 characters).
    static let redactedRunLength = 40

    /// `redactingTokens: false` for text the user wrote that is not secret and must print whole
    /// (file paths, emails): still printable and bounded.
    static func bounded<Bytes: Collection>(_ bytes: Bytes, limit: Int = 200, redactingTokens: Bool = true) -> String where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(Swift.min(bytes.count, limit) + 16)
        var run: [UInt8] = []
        var truncated = false
        func flushRun() {
            if redactingTokens && run.count >= redactedRunLength {
                output.append(contentsOf: "[redacted]".utf8)
            } else {
                output.append(contentsOf: run)
            }
            run.removeAll(keepingCapacity: true)
        }
        var seen = 0
        for byte in bytes {
            seen &+= 1
            // Reading stops a run length past the limit: a run crossing the limit still gets judged.
            if seen > limit &+ redactedRunLength {
                // A run cut here was not judged whole: it is dropped, never printed in part.
                truncated = true
                if redactingTokens { run.removeAll() }
                break
            }
            if isTokenCharacter(byte) {
                run.append(byte)
                continue
            }
            flushRun()
            output.append((0x20...0x7E).contains(byte) ? byte : UInt8(ascii: "?"))
        }
        flushRun()
        if output.count > limit {
            output.removeSubrange(limit...)
            truncated = true
        }
        if truncated { output.append(contentsOf: "…".utf8) }
        return String(decoding: output, as: UTF8.self)
    }

    static func bounded(_ string: String, limit: Int = 200, redactingTokens: Bool = true) -> String {
        bounded(string.utf8, limit: limit, redactingTokens: redactingTokens)
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
             UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "="):
            true
        default:
            false
        }
    }
}
