#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every byte the emulator prints goes through here, so a failed write is an error, never lost
/// (the same rules as `pushline`'s Console, whose module this executable does not link).
///
/// `print` and `FileHandle.write` either drop errors (a full disk or a closed pipe exited 0) or
/// trap on them. These write with `write(2)` and check the result; SIGPIPE is ignored at start
/// (see `EmulatorCommand.main`), so a closed pipe is EPIPE here, not a silent kill.
enum Console {
    /// Exit code when standard output cannot be written (as `pushline`).
    static let outputFailureExitCode: Int32 = 5

    /// Standard output failed; carried up to `EmulatorCommand.main`, which prints it once and exits 5.
    struct OutputError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "cannot write to standard output: \(String(cString: strerror(code)))" }
    }

    /// Writes `text` and a newline to standard output.
    static func line(_ text: String) throws(OutputError) {
        try bytes(Array((text + "\n").utf8))
    }

    static func bytes(_ bytes: [UInt8]) throws(OutputError) {
        if let errorCode = writeAll(1, bytes) { throw OutputError(code: errorCode) }
    }

    /// One line to standard error; its own failures cannot be reported anywhere, so they are ignored.
    static func error(_ text: String) {
        _ = writeAll(2, Array((text + "\n").utf8))
    }

    /// `pushline-emulator: error: …`: the one line printed when it cannot do its job.
    static func fail(_ message: String) {
        error("pushline-emulator: error: \(message)")
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
