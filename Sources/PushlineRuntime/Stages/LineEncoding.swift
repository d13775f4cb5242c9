public import PushlineCore
public import PushlineEncoding

/// What the encode stage needs from an encoder: the seam through which tests inject one that
/// fails. `CampaignEncoder` is the production conformance (its `encodeLine` never throws; a
/// throwing requirement accepts it).
public protocol LineEncoding: Sendable {
    associatedtype Context
    var campaign: Campaign { get }
    func makeContext() -> Context
    func rejectOversizeLine(_ number: Int, length: Int, into batch: inout EncodedBatch)
    func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch, context: inout Context) throws
    /// The encoder a second (third…) worker uses: equal in output, sharing as little storage
    /// with this one as it can.
    func forAnotherWorker() -> Self
}

extension LineEncoding {
    public func forAnotherWorker() -> Self { self }
}

extension CampaignEncoder: LineEncoding {}

/// Accounts for a line whose encoding failed unexpectedly: every device of the line becomes a
/// reject with the code `internal_error` and the line number, so the run reconciles and goes on.
enum LineFailure {
    static let code = "internal_error"

    /// Appends the rejects and counts for line `line` (whose partial output was already removed).
    static func account(_ line: AudienceLine, buffer: [UInt8], error: any Error, maxJSONDepth: Int, experiment: ExperimentSplit? = nil, into batch: inout EncodedBatch) {
        var counts = batch.encodeCounts
        counts.lines += 1
        let message = "internal error while encoding this line (\(String(describing: type(of: error)))): the line was not sent"
        let routed: AudienceRecord? = {
            guard let document = try? JSONDocument(buffer: buffer, range: line.range, maxDepth: maxJSONDepth) else { return nil }
            if case .success(let record) = AudienceRouter.route(document.root) { return record }
            return nil
        }()
        let outcome = DeliveryOutcome.rejected(RejectReason(code, message))
        if let routed {
            // Counted in its recipient's arm, so the arms still add up.
            let arm = experiment.map { $0.countIndex(of: $0.arm(recipient: routed.id)) }
            if let arm { counts.countRecipient(arm: arm) }
            for route in routed.routes {
                let (index, platform, provider) = route.device
                counts.countDevice(provider: provider, arm: arm)
                counts.record(outcome, provider: provider, arm: arm)
                writeReject(line: line.number, id: routed.id, device: index, platform: platform, message, into: &batch.rejects)
            }
        } else {
            counts.linesRejected += 1
            writeReject(line: line.number, id: nil, device: nil, platform: nil, message, into: &batch.rejects)
        }
        batch.encodeCounts = counts
    }

    /// One `rejects.ndjson` line, in the format of docs/output.md.
    private static func writeReject(line: Int, id: JSONValue?, device: Int?, platform: Platform?, _ message: String, into w: inout JSONWriter) {
        w.beginObject()
        w.writeKey("line")
        w.writeInt(line)
        w.writeKey("recipient")
        if let id, id.kind == .string, let text = id.stringValue {
            w.writeString(text)
        } else if let id, id.kind == .number {
            id.withRawBytes { w.writeRawValue($0) }
        } else {
            w.writeNull()
        }
        w.writeKey("device")
        if let device { w.writeInt(device) } else { w.writeNull() }
        w.writeKey("platform")
        if let platform { w.writeString(platform.rawValue) } else { w.writeNull() }
        w.writeKey("provider")
        w.writeNull()
        w.writeKey("code")
        w.writeString(code)
        w.writeKey("reason")
        w.writeString(message)
        w.endObject()
        w.appendRaw(byte: 0x0A)
        w.resetSeparator()
    }
}
