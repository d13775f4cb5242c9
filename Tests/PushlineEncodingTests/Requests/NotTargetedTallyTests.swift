import PushlineCore
@testable import PushlineEncoding
import Testing

/// Devices of types a campaign does not address are tallied per provider on the hot path and
/// folded into the counts when read: whatever happens to the batch between (its counts set by a
/// sink, a line rolled back, the batch reused), each such device is counted exactly once.
@Suite("Not-targeted devices: tallied, folded into the counts once")
struct NotTargetedTallyTests {
    /// An iOS-only campaign (the APNs tests' base).
    static let campaignYAML = APNsEncoderTests.base + "\nnotification: { alert: x }"

    /// One iOS device (a request) and three of other types (skipped: FCM, Web Push, ADM).
    static func line(_ id: String) -> [UInt8] {
        let devices = [
            #"{"platform":"ios","token":"\#(apnsToken)"}"#, #"{"platform":"android","token":"t"}"#,
            #"{"platform":"web","subscription":{"endpoint":"http://x"}}"#, #"{"platform":"amazon"}"#,
        ]
        return Array((#"{"id":"\#(id)","devices":["# + devices.joined(separator: ",") + "]}").utf8)
    }

    static func encode(_ lines: [String], with encoder: CampaignEncoder, into batch: inout EncodedBatch) {
        for (n, id) in lines.enumerated() {
            let buffer = line(id)
            encoder.encodeLine(buffer: buffer, line: AudienceLine(number: n + 1, range: 0..<buffer.count), into: &batch)
        }
    }

    static func expectSkips(_ counts: RunCounts, lines: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(counts.skipped == ["device_type_not_targeted": 3 * lines], sourceLocation: sourceLocation)
        for provider in [Provider.fcm, .webpush, .adm] {
            #expect(counts.byProvider[provider]?.skipped == lines, "\(provider)", sourceLocation: sourceLocation)
            #expect(counts.byProvider[provider]?.devices == lines, "\(provider)", sourceLocation: sourceLocation)
        }
        #expect(counts.devices == 4 * lines && counts.written[.apns] == lines, sourceLocation: sourceLocation)
        #expect(counts.reconciles && counts.reconcilesByProvider, sourceLocation: sourceLocation)
    }

    @Test func countsSetByASinkKeepEachSkipOnce() throws {
        let campaign = try compileCampaign(Self.campaignYAML)
        let encoder = CampaignEncoder(campaign: campaign)
        var batch = EncodedBatch(sequence: 0)
        Self.encode(["a", "b"], with: encoder, into: &batch)
        Self.expectSkips(batch.counts, lines: 2)
        // A sink adding to the counts (as dedupe and the sending sinks do) stores them whole.
        var counts = batch.encodeCounts
        counts.truncated += 1
        batch.encodeCounts = counts
        Self.expectSkips(batch.counts, lines: 2)
        #expect(batch.counts.truncated == 1)
        // Lines encoded afterwards add to those, not twice.
        Self.encode(["c"], with: encoder, into: &batch)
        Self.expectSkips(batch.counts, lines: 3)
        // The same through the dry run's `counts` setter.
        batch.counts = batch.counts
        Self.expectSkips(batch.counts, lines: 3)
    }

    @Test func aRolledBackLineTakesItsSkipsWithIt() throws {
        let campaign = try compileCampaign(Self.campaignYAML)
        let encoder = CampaignEncoder(campaign: campaign)
        var batch = EncodedBatch(sequence: 0)
        Self.encode(["a"], with: encoder, into: &batch)
        let mark = batch.mark
        Self.encode(["b", "c"], with: encoder, into: &batch)
        Self.expectSkips(batch.counts, lines: 3)
        batch.rollBack(to: mark)
        Self.expectSkips(batch.counts, lines: 1)
    }

    @Test func aReusedBatchStartsFromZero() throws {
        let campaign = try compileCampaign(Self.campaignYAML)
        let encoder = CampaignEncoder(campaign: campaign)
        var batch = EncodedBatch(sequence: 0)
        Self.encode(["a", "b"], with: encoder, into: &batch)
        batch.removeAll(sequence: 1)
        #expect(batch.counts == RunCounts())
        Self.encode(["c"], with: encoder, into: &batch)
        Self.expectSkips(batch.counts, lines: 1)
    }
}
