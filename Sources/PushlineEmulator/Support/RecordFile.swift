import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--record-webpush`, `--record-adm`, `--record-webhooks`: one JSON line per delivered message,
/// so a test can compare what a sender sent with what arrived.
///
/// Lines come from every event-loop thread: each is written whole with `write(2)` under a lock
/// to a descriptor opened `O_APPEND`, so lines never interleave, and nothing is buffered in the
/// process: the file holds every answered message as soon as its success is sent.
final class RecordFile: Sendable {
    let path: String
    /// -1 once closed.
    private let descriptor: NIOLockedValueBox<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = NIOLockedValueBox(descriptor)
    }

    /// Opens `path` for appending (created 0600: messages may hold personal data); `what` names
    /// the messages in the error ("Web Push messages").
    static func open(_ path: String, recording what: String) throws(EmulatorError) -> RecordFile {
        #if canImport(Glibc)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #else
        let fd = Darwin.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #endif
        if fd < 0 { throw .stateFile(path, "cannot be opened to record \(what): \(String(cString: strerror(errno)))") }
        return RecordFile(path: path, descriptor: fd)
    }

    /// Appends `head` (the line's opening members, e.g. `{"subscription":"s001","plaintext":`),
    /// then `json`, `}` and a newline; false when the line could not be written whole.
    ///
    /// `json` must be valid JSON: it holds line breaks only as whitespace between tokens (never
    /// inside a string), so a space in their place keeps the value and the file one line per message.
    func append(head: String, json: [UInt8]) -> Bool {
        var line = Array(head.utf8)
        line.reserveCapacity(line.count + json.count + 2)
        for byte in json { line.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
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

/// The record files a running emulator writes, each only when configured.
struct RecordFiles: Sendable {
    var webPush: RecordFile?
    var adm: RecordFile?
    var webhooks: RecordFile?

    init() {}

    /// Opens every configured file; closes the ones already open when one cannot be.
    init(_ configuration: EmulatorConfiguration) throws(EmulatorError) {
        do throws(EmulatorError) {
            if let path = configuration.recordWebPush { webPush = try RecordFile.open(path, recording: "Web Push messages") }
            if let path = configuration.recordADM { adm = try RecordFile.open(path, recording: "ADM messages") }
            if let path = configuration.recordWebhooks { webhooks = try RecordFile.open(path, recording: "webhook deliveries") }
        } catch {
            close()
            throw error
        }
    }

    func close() {
        webPush?.close()
        adm?.close()
        webhooks?.close()
    }
}
