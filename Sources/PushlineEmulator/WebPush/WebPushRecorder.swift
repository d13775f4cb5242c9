import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--record-webpush FILE`: one line per delivered (201) Web Push message,
/// `{"subscription":"<id>","plaintext":<the decrypted JSON>}`, so a test can compare what a
/// sender encrypted with what arrived.
///
/// Lines come from every event-loop thread: each is written whole with `write(2)` under a lock
/// to a descriptor opened `O_APPEND`, so lines never interleave, and nothing is buffered in the
/// process: the file holds every answered message as soon as its 201 is sent.
final class WebPushRecorder: Sendable {
    let path: String
    /// -1 once closed.
    private let descriptor: NIOLockedValueBox<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = NIOLockedValueBox(descriptor)
    }

    /// Opens `path` for appending (created 0600: messages may hold personal data).
    static func open(_ path: String) throws(EmulatorError) -> WebPushRecorder {
        #if canImport(Glibc)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #else
        let fd = Darwin.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #endif
        if fd < 0 { throw .stateFile(path, "cannot be opened to record Web Push messages: \(String(cString: strerror(errno)))") }
        return WebPushRecorder(path: path, descriptor: fd)
    }

    /// Appends the message's line; false when it could not be written whole.
    func append(subscription: String, plaintext: [UInt8]) -> Bool {
        var line = Array("{\"subscription\":\(JSONText.quoted(subscription)),\"plaintext\":".utf8)
        line.reserveCapacity(line.count + plaintext.count + 2)
        // Valid JSON holds line breaks only as whitespace between tokens (never inside a
        // string), so a space in their place keeps the value and the file one line per message.
        for byte in plaintext { line.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
        line.append(contentsOf: [UInt8(ascii: "}"), 0x0A])
        return descriptor.withLockedValue { fd in
            guard fd >= 0 else { return false }
            var offset = 0
            while offset < line.count {
                let written = line.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress else { return 0 }
                    return write(fd, base + offset, bytes.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }

    func close() {
        descriptor.withLockedValue { fd in
            guard fd >= 0 else { return }
            #if canImport(Glibc)
            _ = Glibc.close(fd)
            #else
            _ = Darwin.close(fd)
            #endif
            fd = -1
        }
    }
}
