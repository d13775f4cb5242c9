public import Logging
import PushlineCore
import PushlineIO
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--log-format`.
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's standard lines: `<time> <level> <label>: <metadata> [<source>] <message>`.
    case text
    /// One JSON object per line: `timestamp`, `level`, `label`, `message`, `metadata`.
    case json
}

/// One JSON object per log line on standard error, written with the project's `JSONWriter`
/// (every string escaped, so a hostile value cannot break the line or forge another).
/// `{"timestamp":"2026-11-23T01:02:03.456Z","level":"info","label":"pushline","message":"run ended","metadata":{"status":"completed",…}}`
///
/// What it writes is what the program logs: no log statement carries a credential (docs/output.md).
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    /// `write`: where a finished line goes (standard error by default).
    public init(label: String, write: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        write(Self.line(
            timestamp: Date(), level: event.level, label: label, message: "\(event.message)", metadata: merged,
            error: event.error.map { "\($0)" }
        ))
    }

    /// The line for one event, newline included.
    public static func line(
        timestamp: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, error: String? = nil
    ) -> [UInt8] {
        var json = JSONWriter(reservingCapacity: 256)
        json.beginObject()
        json.writeKey("timestamp")
        json.writeString(iso8601(timestamp))
        json.writeKey("level")
        json.writeString(level.rawValue)
        json.writeKey("label")
        json.writeString(label)
        json.writeKey("message")
        json.writeString(message)
        if let error {
            json.writeKey("error")
            json.writeString(error)
        }
        json.writeKey("metadata")
        writeMetadata(metadata, into: &json)
        json.endObject()
        var bytes = json.bytes
        bytes.append(0x0A)
        return bytes
    }

    private static func writeMetadata(_ metadata: Logger.Metadata, into json: inout JSONWriter) {
        json.beginObject()
        // Sorted: the same event gives the same line.
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            json.writeKey(key)
            writeValue(value, into: &json)
        }
        json.endObject()
    }

    private static func writeValue(_ value: Logger.Metadata.Value, into json: inout JSONWriter) {
        switch value {
        case .string(let text): json.writeString(text)
        case .stringConvertible(let convertible): json.writeString(convertible.description)
        case .array(let values):
            json.beginArray()
            for element in values { writeValue(element, into: &json) }
            json.endArray()
        case .dictionary(let dictionary): writeMetadata(dictionary, into: &json)
        }
    }

    /// UTC with milliseconds: `2026-11-23T01:02:03.456Z`.
    static func iso8601(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = min(999, max(0, Int((interval - Double(seconds)) * 1000)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds
        )
    }

    /// Writes the whole line to standard error in one `write(2)` where it can (lines from
    /// several threads do not interleave), retrying short writes.
    public static let standardError: @Sendable ([UInt8]) -> Void = { bytes in
        DescriptorOutput.writeAll(2, bytes)
    }
}

/// Wraps a log handler so that its lines go above the live progress line, never into it.
public struct LiveLineLogHandler: LogHandler {
    private var base: any LogHandler
    private let line: LiveLine

    public init(base: any LogHandler, line: LiveLine) {
        self.base = base
        self.line = line
    }

    public var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    public var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        line.interrupt { base.log(event: event) }
    }
}
