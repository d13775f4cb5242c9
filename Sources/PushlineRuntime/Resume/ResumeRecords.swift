import Foundation
import PushlineCore
import PushlineIO

/// A device of the audience: its input line and its index in the line's devices.
struct DeviceKey: Hashable, Sendable {
    var line: Int
    var device: Int
}

/// What a killed or stopped sending run recorded about devices of lines after its watermark
/// (docs/resume.md): read back from `sent.ndjson`, `invalid-tokens.ndjson`, `failed.ndjson`
/// and `unsent.ndjson` so a resume neither sends a recorded device again nor counts it twice.
///
/// Records are in completion order, so every file is read whole; a line is parsed only when
/// its `"line":` number (our writer escapes every quote in strings, so that key cannot occur
/// inside one) is past the watermark.
struct ResumeRecords: Sendable {
    /// Devices settled with a final outcome (sent, invalid token, failed): not sent again.
    var settled: [DeviceKey: (provider: Provider, outcome: DeliveryOutcome)] = [:]
    /// Devices the run listed as unsent and never attempted: sent again, not as possible duplicates.
    var neverAttempted: Set<DeviceKey> = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let settledFiles = ["sent.ndjson", "invalid-tokens.ndjson", "failed.ndjson"]

    /// Reads the temporary files `paths` (by final name) for records of lines after `watermark`.
    static func read(paths: [String: String], after watermark: Int) throws(Failure) -> ResumeRecords {
        var records = ResumeRecords()
        for name in settledFiles + ["unsent.ndjson"] {
            guard let path = paths[name] else { continue }
            try scan(path, name: name, after: watermark) { key, record in
                if name == "unsent.ndjson" {
                    if record["possible_duplicate"]?.boolValue != true { records.neverAttempted.insert(key) }
                    return
                }
                guard let providerName = record["provider"]?.stringValue, let provider = Provider(rawValue: providerName) else { return }
                let attempts = Int(clamping: record["attempts"]?.int64Value ?? 1)
                let duplicate = record["possible_duplicate"]?.boolValue == true
                let reason = record["reason"]?.stringValue ?? "unknown"
                let outcome: DeliveryOutcome = switch name {
                case "sent.ndjson":
                    .sent(providerID: record["apns_id"]?.stringValue ?? record["message"]?.stringValue ?? record["provider_id"]?.stringValue, attempts: attempts, possibleDuplicate: duplicate)
                case "invalid-tokens.ndjson":
                    .invalidToken(reason: reason, timestamp: record["timestamp"]?.int64Value)
                default:
                    .failed(reason: reason, httpStatus: Int(clamping: record["status"]?.int64Value ?? 0), attempts: attempts, possibleDuplicate: duplicate)
                }
                records.settled[key] = (provider, outcome)
            }
        }
        return records
    }

    private static func scan(_ path: String, name: String, after watermark: Int, _ body: (DeviceKey, JSONValue) -> Void) throws(Failure) {
        func failure(_ error: some CustomStringConvertible) -> Failure {
            Failure(description: "cannot read \(name) to resume: \(error)")
        }
        // A last line without its newline is a torn write: not a record (the resumed file drops it).
        let complete: Int
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let size = Int(try handle.seekToEnd())
            if size == 0 { return }
            try handle.seek(toOffset: UInt64(size - 1))
            let last = try handle.read(upToCount: 1)
            complete = last == Data([0x0A]) ? Int.max : 0
        } catch {
            throw failure("\(error)")
        }
        var reader: AudienceReader
        do {
            reader = try AudienceReader(path: path, options: .init(maxLineBytes: 1 << 20))
        } catch {
            throw failure(error.description)
        }
        // Each line is handled once the next is seen, so the torn last one can be left out.
        var held: (key: DeviceKey, document: JSONDocument)?
        while true {
            let batch: LineBatch?
            do {
                batch = try reader.nextBatch()
            } catch {
                throw failure(error.description)
            }
            guard let batch else { break }
            for line in batch.lines {
                if let previous = held {
                    body(previous.key, previous.document.root)
                    held = nil
                }
                guard let parsed = batch.buffer.withUnsafeBytes({ buffer in parse(UnsafeRawBufferPointer(rebasing: buffer[line.range]), after: watermark) }) else {
                    continue
                }
                held = parsed
            }
        }
        if let previous = held, complete == Int.max { body(previous.key, previous.document.root) }
    }

    /// A result line of a device after the watermark, nil for one before it or not a record.
    private static func parse(_ bytes: UnsafeRawBufferPointer, after watermark: Int) -> (key: DeviceKey, document: JSONDocument)? {
        guard let number = lineNumber(in: bytes), number > watermark else { return nil }
        guard let document = try? JSONDocument(bytes: Array(bytes), maxDepth: 8) else { return nil }
        guard let device = document.root["device"]?.int64Value, device >= 0 else { return nil }
        return (DeviceKey(line: number, device: Int(device)), document)
    }

    /// The number after the first `"line":` in a result line, nil when there is none.
    static func lineNumber(in bytes: UnsafeRawBufferPointer) -> Int? {
        let key: [UInt8] = Array(#""line":"#.utf8)
        guard bytes.count > key.count else { return nil }
        var i = 0
        while i + key.count < bytes.count {
            if bytes[i] == 0x22, bytes[i + 1] == 0x6C, bytes[i + 2] == 0x69, bytes[i + 3] == 0x6E, bytes[i + 4] == 0x65,
               bytes[i + 5] == 0x22, bytes[i + 6] == 0x3A {
                var j = i + key.count
                var value = 0
                var digits = 0
                while j < bytes.count, bytes[j] >= 0x30, bytes[j] <= 0x39, digits < 18 {
                    value = value * 10 + Int(bytes[j] - 0x30)
                    digits += 1
                    j += 1
                }
                return digits > 0 ? value : nil
            }
            i += 1
        }
        return nil
    }
}
