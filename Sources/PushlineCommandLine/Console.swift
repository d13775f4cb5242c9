#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every byte the executables print goes through here, so a failed write is an error, never lost.
///
/// `print` and `FileHandle.write` either drop errors (a full disk or a closed pipe exited 0) or
/// trap on them. These write with `write(2)` and check the result; SIGPIPE is ignored at start
/// (see `CommandMain.run`), so a closed pipe is EPIPE here, not a silent kill. Shared by
/// `pushline` and `pushline-emulator`; each names itself in `fail` (an extension of its own).
public enum Console {
    /// Standard output failed; carried up to `CommandMain.run`, which prints it once and exits
    /// with `PushlineExit.outputError`.
    public struct OutputError: Error, CustomStringConvertible {
        public var code: Int32
        public var description: String { "cannot write to standard output: \(String(cString: strerror(code)))" }
    }

    /// Writes `text` and a newline to standard output.
    public static func line(_ text: String) throws(OutputError) {
        try bytes(Array((text + "\n").utf8))
    }

    public static func bytes(_ bytes: [UInt8]) throws(OutputError) {
        if let errorCode = writeAll(1, bytes) { throw OutputError(code: errorCode) }
    }

    /// One line to standard error; its own failures cannot be reported anywhere, so they are ignored.
    public static func error(_ text: String) {
        _ = writeAll(2, Array((text + "\n").utf8))
    }

    /// `<program>: error: …`: the one line a command prints when it cannot do its job. Control
    /// characters in the message (a value the user gave, echoed back) are written escaped, so it
    /// stays one line whatever went in.
    public static func fail(_ message: String, program: String) {
        error("\(program): error: \(oneLine(message))")
    }

    /// `text` with its control characters written as `\n`, `\r`, `\t` or `\u{XX}`.
    static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: line += "\\n"
            case 0x0D: line += "\\r"
            case 0x09: line += "\\t"
            case 0..<0x20, 0x7F: line += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: line.unicodeScalars.append(scalar)
            }
        }
        return line
    }

    /// Writes everything, retrying short writes and EINTR; returns errno on failure.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { buffer -> Int32? in
            guard var next = buffer.baseAddress else { return nil }
            var remaining = buffer.count
            while remaining > 0 {
                let written = write(fd, next, remaining)
                if written > 0 {
                    next += written
                    remaining -= written
                } else if written < 0 && errno != EINTR {
                    return errno
                } else if written == 0 {
                    return EIO
                }
            }
            return nil
        }
    }
}
