import Foundation

/// `pushline merge-results`: the summaries of a campaign's shards combined into one, after
/// checking that they are the finished, non-overlapping shards of one campaign.
///
/// Every shard reads the whole audience, counts its own recipients' devices as usual and the
/// others' as `skipped: other_shard`. So the merged counts are the sums with those skips taken
/// out, and the shards partition the campaign exactly when their own devices add up to the
/// devices each of them read (docs/shards.md).
public enum ShardMerge {
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private static let otherShard = "other_shard"

    /// The merged `summary.json` of `folders`, or why they cannot be merged.
    public static func merge(folders: [String]) throws(Refusal) -> [String: Any] {
        guard !folders.isEmpty else { throw Refusal(description: "no folders given") }
        // A shard that has not finished is the usual reason for a mismatch (a scheduler stopped or
        // killed it): say which, and how to finish it, before comparing anything.
        let unfinished = folders.compactMap(unfinishedShard)
        if !unfinished.isEmpty {
            let resume = "resume \(unfinished.count == 1 ? "it" : "each") with the same command and --resume (or --auto-resume)"
            throw Refusal(description: unfinished.joined(separator: "; ") + ": " + resume)
        }
        var summaries: [(folder: String, summary: [String: Any], index: Int)] = []
        var count: Int?
        for folder in folders {
            let summary = try read(folder)
            guard let shard = summary["shard"] as? [String: Any], let index = shard["index"] as? Int, let n = shard["count"] as? Int else {
                throw Refusal(description: "\(folder)/summary.json is not a shard's (no `shard`: was it run with --shard?)")
            }
            if let count, count != n { throw Refusal(description: "\(folder) is shard \(index) of \(n), the others are of \(count)") }
            count = n
            if let twice = summaries.first(where: { $0.index == index }) {
                throw Refusal(description: "shard \(index) is given twice: \(twice.folder) and \(folder)")
            }
            summaries.append((folder, summary, index))
        }
        let shards = count ?? 0
        let missing = (0..<shards).filter { index in !summaries.contains { $0.index == index } }
        guard missing.isEmpty else {
            throw Refusal(description: "shard\(missing.count == 1 ? "" : "s") \(missing.map(String.init).joined(separator: ", ")) of \(shards) missing")
        }
        summaries.sort { $0.index < $1.index }
        let first = summaries[0]
        for other in summaries.dropFirst() {
            // Shards of different experiments (another id, split or variant set) are not one run.
            for key in ["campaign", "mode", "experiment"] where !same(first.summary[key], other.summary[key]) {
                throw Refusal(description: "\(other.folder) has \(key) \(shown(other.summary[key])), \(first.folder) has \(shown(first.summary[key]))")
            }
            for key in ["bytes_uncompressed", "physical_lines"] {
                let a = (first.summary["input"] as? [String: Any])?[key], b = (other.summary["input"] as? [String: Any])?[key]
                guard same(a, b) else { throw Refusal(description: "\(other.folder) read another input than \(first.folder) (input.\(key) \(shown(b)) vs \(shown(a)))") }
            }
        }

        var merged: [String: Any] = [
            "campaign": first.summary["campaign"] ?? NSNull(),
            "mode": first.summary["mode"] ?? NSNull(),
            "input": first.summary["input"] ?? NSNull(),
            "shards": summaries.map { entry -> [String: Any] in
                ["index": entry.index, "folder": entry.folder, "status": entry.summary["status"] ?? NSNull(),
                 "exit_code": entry.summary["exit_code"] ?? NSNull(), "reconciled": entry.summary["reconciled"] ?? NSNull()]
            },
        ]
        // Every shard read every line; a line without a usable id is rejected by one of them.
        var lines = (first.summary["lines"] as? [String: Any]) ?? [:]
        lines["rejected"] = summaries.reduce(0) { $0 + int(($1.summary["lines"] as? [String: Any])?["rejected"]) }
        lines["routed"] = int(lines["read"]) - int(lines["rejected"])
        merged["lines"] = lines

        var devices = sum(summaries.map { ($0.summary["devices"] as? [String: Any]) ?? [:] })
        let readByEach = summaries.map { int(($0.summary["devices"] as? [String: Any])?["read"]) }
        let otherShardSkips = int((devices["skipped_by_reason"] as? [String: Any])?[otherShard])
        let own = int(devices["read"]) - otherShardSkips
        guard readByEach.allSatisfy({ $0 == own }) else {
            throw Refusal(description: "the shards' own devices add up to \(own), but each shard read \(readByEach.map(String.init).joined(separator: " / ")): they overlap or miss recipients")
        }
        devices["read"] = own
        devices["skipped"] = int(devices["skipped"]) - otherShardSkips
        if var reasons = devices["skipped_by_reason"] as? [String: Any] {
            reasons[otherShard] = nil
            devices["skipped_by_reason"] = reasons
        }
        merged["devices"] = devices

        var providers = sum(summaries.map { ($0.summary["providers"] as? [String: Any]) ?? [:] })
        // A provider's other-shard skips: its devices minus what the shards did with them.
        for (name, value) in providers {
            guard var row = value as? [String: Any] else { continue }
            let outcomes = ["written", "sent", "invalid_token", "rejected", "failed", "unsent"].reduce(0) { $0 + int(row[$1]) }
            let skips = otherShardSkipsOf(name, in: summaries)
            let ownDevices = int(row["devices"]) - skips
            row["devices"] = ownDevices
            row["skipped"] = int(row["skipped"]) - skips
            providers[name] = ownDevices == 0 && outcomes == 0 ? nil : row
        }
        merged["providers"] = providers
        // Experiments: each shard counts only its own recipients' arms, so the rows add up.
        if let experiment = first.summary["experiment"] {
            merged["experiment"] = experiment
            merged["variants"] = sum(summaries.map { ($0.summary["variants"] as? [String: Any]) ?? [:] })
        }

        let settled = ["written", "sent", "invalid_token", "rejected", "failed", "skipped", "unsent"].reduce(0) { $0 + int(devices[$1]) }
        let allReconciled = summaries.allSatisfy { $0.summary["reconciled"] as? Bool == true }
        merged["reconciled"] = allReconciled && settled == own
        let statuses = Set(summaries.compactMap { $0.summary["status"] as? String })
        merged["status"] = statuses.count == 1 ? statuses.first! : "mixed"
        return merged
    }

    /// A provider's `skipped: other_shard` devices across the shards: every shard read all of
    /// its devices and skipped those of the other shards, so of n shards' sum each device is
    /// counted n times, n - 1 of them as such skips.
    private static func otherShardSkipsOf(_ provider: String, in summaries: [(folder: String, summary: [String: Any], index: Int)]) -> Int {
        let reads = summaries.map { int((($0.summary["providers"] as? [String: Any])?[provider] as? [String: Any])?["devices"]) }
        return reads.reduce(0, +) - (reads.first ?? 0)
    }

    /// Why `folder` holds a shard that did not finish (`out/x/shard-1 is unfinished (status
    /// stopped)`), or nil. Unfinished: its summary says `stopped` or `failed` (a resume continues
    /// it), or it has no readable summary but an open `checkpoint.json` (killed, or still running).
    static func unfinishedShard(_ folder: String) -> String? {
        let name = shownFolder(folder)
        let data = FileManager.default.contents(atPath: folder + "/summary.json")
        if let data, data.count <= summaryLimit, let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let status = summary["status"] as? String {
            switch status {
            case "stopped":
                return "\(name) is unfinished (status stopped)"
            case "failed":
                let code = (summary["exit_code"] as? NSNumber).map { ", exit \($0.intValue)" } ?? ""
                let failure = (summary["failure"] as? String).map { ": " + String($0.prefix(200)).replacingOccurrences(of: "\n", with: " ") } ?? ""
                return "\(name) is unfinished (status failed\(code)\(failure))"
            default:
                return nil
            }
        }
        guard FileManager.default.fileExists(atPath: folder + "/" + CheckpointJournal.fileName) else { return nil }
        // A journal marked complete belongs to a finished run whose summary went missing: that is
        // not something a resume fixes, so the usual refusal names the summary.
        if let journal = try? CheckpointJournal.read(from: folder), journal.complete { return nil }
        let why = data == nil ? "no summary.json" : "its summary.json cannot be read"
        return "\(name) is unfinished (\(why), and a checkpoint.json: it was killed, or it is still running)"
    }

    /// A folder as the messages name it: without trailing slashes (`shard-*/` globs give them).
    static func shownFolder(_ folder: String) -> String {
        var name = Substring(folder)
        while name.count > 1, name.hasSuffix("/") { name = name.dropLast() }
        return String(name)
    }

    /// A summary larger than this is not one Pushline wrote.
    static let summaryLimit = 1 << 20

    private static func read(_ folder: String) throws(Refusal) -> [String: Any] {
        let path = folder + "/summary.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Refusal(description: "\(path) cannot be read: is \(folder) a finished run's folder?")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Refusal(description: "\(path) is not a JSON object")
        }
        guard ["lines", "devices", "providers", "shard", "variants"].allSatisfy({ object[$0].map { countsAreSane($0, depth: 0) } ?? true }) else {
            throw Refusal(description: "\(path) is not a pushline summary (a count that is not a whole number 0…\(maximumCount), or nesting deeper than a summary's)")
        }
        return object
    }

    /// The largest count a summary may hold: far above any audience, and small enough that
    /// summing 100,000 shards' counts cannot overflow.
    static let maximumCount = 1_000_000_000_000

    /// In the sections merged (`lines`, `devices`, `providers`, `shard`, `variants`), every number is a whole
    /// count in range and objects nest no deeper than a summary's: what `sum` and the checks rely on.
    private static func countsAreSane(_ value: Any, depth: Int) -> Bool {
        switch value {
        case let object as [String: Any]:
            return depth < 6 && object.values.allSatisfy { countsAreSane($0, depth: depth + 1) }
        case let array as [Any]:
            return depth < 6 && array.allSatisfy { countsAreSane($0, depth: depth + 1) }
        case let number as NSNumber:
            if isBool(number) { return true }
            let double = number.doubleValue
            return double.rounded() == double && (0...Double(maximumCount)).contains(double)
        default:
            return true
        }
    }

    /// Adds numbers key by key, recursing into objects (per-reason and per-provider tables).
    private static func sum(_ objects: [[String: Any]]) -> [String: Any] {
        var result: [String: Any] = [:]
        for object in objects {
            for (key, value) in object {
                if let number = value as? NSNumber, !isBool(number) {
                    result[key] = int(result[key]) + number.intValue
                } else if let nested = value as? [String: Any] {
                    result[key] = sum([(result[key] as? [String: Any]) ?? [:], nested])
                }
            }
        }
        return result
    }

    private static func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? 0 }

    /// JSONSerialization gives `true` and `false` as numbers too; their type code says which.
    private static func isBool(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a as NSObject, let b as NSObject): a == b
        default: false
        }
    }

    private static func shown(_ value: Any?) -> String {
        guard let value else { return "nothing" }
        return String(String(describing: value).prefix(80))
    }
}
