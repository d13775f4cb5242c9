public import PushlineCore
import PushlineEncoding
import PushlineIO
import Foundation

/// What one audience line produces: for `pushline render`, a person checking a campaign.
public struct LinePreview: Sendable {
    /// Each request line as the dry run writes it (one JSON object).
    public var requests: [String]
    /// Each reject line (one JSON object).
    public var rejects: [String]
    public var counts: RunCounts
    /// The line's own text.
    public var line: String
    /// A note per device whose request differs from the plain rendering (text truncated to fit).
    /// The campaign's own warnings are printed when the pipeline loads.
    public var warnings: [String] = []
    /// An experiment's arm for the line's recipient: a variant's name, or `control` (the
    /// holdout: no request). Nil without an experiment or without a usable recipient id.
    public var variant: String?

    public struct NotFound: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var lastLine: Int
        public var description: String { "the audience has no non-blank line \(line) (it has \(lastLine) lines)" }
    }

    /// Streams the audience up to line `number` (1-based, blank lines counted) and encodes it.
    /// Blocking: reads the file on the calling thread.
    public static func render(pipeline: LoadedPipeline, audiencePath: String, line number: Int) throws -> LinePreview {
        var reader = try AudienceReader(path: audiencePath, options: .init(maxLineBytes: pipeline.campaign.maxLineBytes))
        let encoder = CampaignEncoder(campaign: pipeline.campaign)
        while let batch = try reader.nextBatch() {
            guard batch.lineNumbers.contains(number) else { continue }
            var encoded = EncodedBatch(sequence: 0)
            if let line = batch.lines.first(where: { $0.lineNumber == number }) {
                encoder.encodeLine(buffer: batch.buffer, line: AudienceLine(number: number, range: line.range), into: &encoded)
                encoded.renderDryRunLines(routes: encoder.routes)
                var preview = LinePreview(encoded, line: String(decoding: batch.buffer[line.range], as: UTF8.self))
                preview.warnings = deviceNotes(preview.requests)
                if let experiment = pipeline.campaign.experiment,
                   let document = try? JSONDocument(buffer: batch.buffer, range: line.range, maxDepth: encoder.maxJSONDepth),
                   let id = document.root.member("id"), id.kind == .string || id.kind == .number {
                    preview.variant = experiment.name(of: experiment.arm(recipient: id))
                }
                return preview
            }
            if let oversize = batch.oversizeLines.first(where: { $0.lineNumber == number }) {
                encoder.rejectOversizeLine(number, length: oversize.byteLength, into: &encoded)
                return LinePreview(encoded, line: "")
            }
            break
        }
        throw NotFound(line: number, lastLine: reader.lineCount)
    }

    init(_ encoded: EncodedBatch, line: String) {
        requests = encoded.dryRunLines.flatMap { Self.splitLines($0.bytes) }
        rejects = Self.splitLines(encoded.rejects.bytes)
        counts = encoded.counts
        self.line = line
    }

    /// "device 2 (ios): text truncated to fit the provider's size limit" for each such request.
    static func deviceNotes(_ requests: [String]) -> [String] {
        requests.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["truncated"] as? Bool == true
            else { return nil }
            return "device \(object["device"] as? Int ?? -1) (\(object["platform"] as? String ?? "?")): text truncated to fit the provider's size limit"
        }
    }

    static func splitLines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Pretty-prints one JSON line for people (keys in the order written).
    public static func pretty(_ line: String) -> String {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data),
              let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .withoutEscapingSlashes, .sortedKeys])
        else { return line }
        return String(decoding: pretty, as: UTF8.self)
    }
}

/// Reads one line of an audience (for `template render --record-line`).
public enum AudienceLineReader {
    public static func line(_ number: Int, of path: String) throws -> [UInt8] {
        var reader = try AudienceReader(path: path)
        while let batch = try reader.nextBatch() {
            if let line = batch.lines.first(where: { $0.lineNumber == number }) {
                return Array(batch.buffer[line.range])
            }
        }
        throw LinePreview.NotFound(line: number, lastLine: reader.lineCount)
    }
}
