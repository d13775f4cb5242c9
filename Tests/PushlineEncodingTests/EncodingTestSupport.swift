import Foundation
import PushlineCore
import PushlineEncoding
import PushlineRuntime
import Testing

/// Compiles pipeline YAML the way `pushline` does (same loader), at a fixed clock.
func compileCampaign(_ yaml: String, now: Int = 1_800_000_000) throws -> Campaign {
    let root = try PipelineLoader.parse(yaml: yaml, path: "test.yaml")
    return try Campaign.compile(root, now: now)
}

/// The diagnostics a pipeline produces (empty when it compiles).
func diagnostics(_ yaml: String) -> [ConfigDiagnostic] {
    do {
        let root = try PipelineLoader.parse(yaml: yaml, path: "test.yaml")
        let campaign = try Campaign.compile(root, now: 1_800_000_000)
        return campaign.warnings
    } catch let error as CampaignCompileError {
        return error.diagnostics
    } catch {
        Issue.record("unexpected error \(error)")
        return []
    }
}

struct EncodedLine {
    var requests: [[String: Any]]
    var rejects: [[String: Any]]
    var counts: RunCounts
}

/// Encodes one audience line and parses every output line with Foundation (an independent parser).
func encode(_ campaign: Campaign, _ line: String, number: Int = 1) throws -> EncodedLine {
    let buffer = Array(line.utf8)
    var batch = EncodedBatch(sequence: 0)
    CampaignEncoder(campaign: campaign).encodeLine(buffer: buffer, line: AudienceLine(number: number, range: 0..<buffer.count), into: &batch)
    batch.renderDryRunLines(routes: campaign.routeTable)
    func parse(_ writer: JSONWriter) throws -> [[String: Any]] {
        try writer.bytes.split(separator: 0x0A).map { slice in
            let object = try JSONSerialization.jsonObject(with: Data(slice))
            return try #require(object as? [String: Any])
        }
    }
    return EncodedLine(requests: try batch.dryRunLines.flatMap(parse), rejects: try parse(batch.rejects), counts: batch.counts)
}

/// Structural JSON equality through Foundation (key order does not matter, values do): both
/// sides are re-serialized with sorted keys. (`NSObject.isEqual` on swift-corelibs-foundation
/// reports parsed booleans unequal, so it cannot be the comparison.)
func jsonEqual(_ a: Any?, _ b: Any?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    }
    guard let left = canonical(a), let right = canonical(b) else { return false }
    return left == right
}

func json(_ text: String) -> Any {
    try! JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

let apnsToken = String(repeating: "0f", count: 32)
let fcmToken = "cWk3Y2FzZGZhc2RmYXNkZg:APA91b" + String(repeating: "AbC-_9", count: 22)
