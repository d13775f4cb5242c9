import Foundation
import PushlineCore
@testable import PushlineRuntime
import Testing

@Suite("Checkpoint journal")
struct CheckpointJournalTests {
    /// Every stored count set to a distinct non-zero value (checked below), so a field added to
    /// `RunCounts` later is covered by the round trip without anyone listing it.
    static func fullCounts() -> RunCounts {
        var counts = RunCounts()
        counts.lines = 120
        counts.blankLines = 3
        counts.linesRejected = 4
        counts.devices = 200
        counts.written = [.apns: 5]
        counts.sent = [.fcm: 6]
        counts.invalidTokens = ["Unregistered": 7]
        counts.rejected = ["payload_too_large \"q\"": 8]
        counts.failed = ["timeout": 9]
        counts.skipped = ["duplicate_token": 10]
        counts.unsent = ["run_stopped": 11]
        var outcomes = OutcomeCounts()
        outcomes.devices = 12; outcomes.written = 13; outcomes.sent = 14; outcomes.invalidToken = 15
        outcomes.rejected = 16; outcomes.failed = 17; outcomes.skipped = 18; outcomes.unsent = 19
        counts.byProvider = [.apns: outcomes, .webhook: outcomes]
        counts.unrouted = outcomes
        counts.truncated = 20
        counts.possibleDuplicates = 21
        counts.possiblyDelivered = 22
        counts.deferredLines = 23
        counts.defaultTimeZoneLines = 24
        counts.linesOtherShard = 25
        counts.byArm = [outcomes, OutcomeCounts()]
        counts.recipientsByArm = [26, 27]
        return counts
    }

    static func sample() -> CheckpointJournal {
        CheckpointJournal(
            mode: "send", settledThroughLine: 123, horizonLine: 8315, counts: fullCounts(),
            files: [.init(name: "sent.ndjson", temporaryName: "sent.ndjson.42-abc.tmp", bytes: 9876, cutAtMark: false)],
            pipelineSHA256: String(repeating: "ab", count: 32),
            audience: .init(path: "/data/a b.ndjson.gz", size: 1_000_000, sampleSHA256: String(repeating: "cd", count: 32)),
            clock: 1_800_000_000, shard: "1/4", runs: 2, firstStartedAt: "2026-01-02T03:04:05Z", writtenAt: "2026-01-02T03:05:05Z"
        )
    }

    @Test func theSampleSetsEveryCount() {
        for child in Mirror(reflecting: Self.fullCounts()).children {
            let isDefault: Bool = switch child.value {
            case let n as Int: n == 0
            case let o as OutcomeCounts: o == OutcomeCounts()
            case let d as [String: Int]: d.isEmpty
            case let d as [Provider: Int]: d.isEmpty
            case let d as [Provider: OutcomeCounts]: d.isEmpty
            case let a as [OutcomeCounts]?: a?.isEmpty ?? true
            case let a as [Int]?: a?.isEmpty ?? true
            default: true
            }
            #expect(!isDefault, "RunCounts.\(child.label ?? "?") is not set in the sample (or is of a type this test does not know)")
        }
    }

    @Test func aJournalReadsBackAsWritten() throws {
        let scratch = try Scratch()
        let journal = Self.sample()
        try journal.write(to: scratch.path, sync: true)
        #expect(try CheckpointJournal.read(from: scratch.path) == journal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == [CheckpointJournal.fileName])
    }

    @Test func noJournalIsNil() throws {
        #expect(try CheckpointJournal.read(from: Scratch().path) == nil)
    }

    /// Every proper prefix of a journal file (a torn write) is refused, never half-read.
    @Test func aTornJournalIsRefused() throws {
        let scratch = try Scratch()
        try Self.sample().write(to: scratch.path, sync: false)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: scratch.file(CheckpointJournal.fileName))))
        for cut in stride(from: 0, to: bytes.count - 2, by: 5) {
            #expect(throws: CheckpointError.self) { try CheckpointJournal.decode(Array(bytes[..<cut]), path: "p") }
        }
    }

    /// A count edited by hand fails the SHA-256 of the body.
    @Test func anEditedJournalIsRefused() throws {
        let scratch = try Scratch()
        try Self.sample().write(to: scratch.path, sync: false)
        let text = try String(contentsOfFile: scratch.file(CheckpointJournal.fileName), encoding: .utf8)
        let edited = text.replacingOccurrences(of: "\"settledThroughLine\":123", with: "\"settledThroughLine\":124")
        #expect(edited != text)
        let error = try #require(throws: CheckpointError.self) { try CheckpointJournal.decode(Array(edited.utf8), path: "p") }
        #expect(error.description.contains("SHA-256 mismatch"))
    }

    /// A journal (with a valid digest) naming a file outside its folder or not a results file is
    /// refused: a resume only ever opens results files in the folder.
    @Test(arguments: ["../sent.ndjson", "summary.json.1-a.tmp", "notes.txt", "sent.ndjson"])
    func aJournalNamingAnotherFileIsRefused(temporaryName: String) throws {
        var journal = Self.sample()
        journal.files = [.init(name: temporaryName == "summary.json.1-a.tmp" ? "sent.ndjson" : "sent.ndjson", temporaryName: temporaryName, bytes: 1, cutAtMark: false)]
        let scratch = try Scratch()
        try journal.write(to: scratch.path, sync: false)
        #expect(throws: CheckpointError.self) { try CheckpointJournal.read(from: scratch.path) }
    }

    @Test func aJournalOfAnotherVersionIsRefusedByName() throws {
        let error = try #require(throws: CheckpointError.self) {
            try CheckpointJournal.decode(Array(#"{"version":99,"sha256":"","journal":{}}"#.utf8), path: "p")
        }
        #expect(error.description.contains("format version 99"))
    }
}

@Suite("Checkpoint ledger: the sending watermark and its counts")
struct CheckpointLedgerTests {
    static func encodeCounts(lines: Int, devices: Int) -> RunCounts {
        var counts = RunCounts()
        counts.lines = lines
        for _ in 0..<devices { counts.countDevice(provider: .apns) }
        return counts
    }

    /// Batches settle out of order; the watermark moves only over a contiguous prefix of batches
    /// whose files are written, and its counts are exactly those batches'.
    @Test func theWatermarkFollowsTheContiguousPrefix() {
        var ledger = CheckpointLedger(watermark: 0, counts: RunCounts(), marks: [0, 0])
        ledger.accept(sequence: 1, lastLine: 20, firstTag: 0, requests: 2, encodeCounts: Self.encodeCounts(lines: 10, devices: 2))
        ledger.accept(sequence: 0, lastLine: 10, firstTag: 2, requests: 1, encodeCounts: Self.encodeCounts(lines: 10, devices: 1))
        ledger.written(sequence: 0, marks: [5, 0])
        ledger.written(sequence: 1, marks: [9, 0])
        ledger.record(tag: 0, outcome: .sent(providerID: "a", attempts: 1), provider: .apns)
        ledger.record(tag: 1, outcome: .sent(providerID: "b", attempts: 1), provider: .apns)
        #expect(ledger.watermark == 0, "batch 0 is still open")
        ledger.record(tag: 2, outcome: .failed(reason: "timeout", httpStatus: 0, attempts: 3), provider: .apns)
        #expect(ledger.watermark == 20)
        #expect(ledger.committedMarks == [9, 0])
        #expect(ledger.committed.lines == 20)
        #expect(ledger.committed.devices == 3)
        #expect(ledger.committed.sentTotal == 2)
        #expect(ledger.committed.failed == ["timeout": 1])
        #expect(ledger.committed.reconciles)
    }

    /// A batch's files must be written (in order) before it counts: its rejects are then in the
    /// file the checkpoint cuts.
    @Test func anUnwrittenBatchHoldsTheWatermark() {
        var ledger = CheckpointLedger(watermark: 0, counts: RunCounts(), marks: [0, 0])
        ledger.accept(sequence: 0, lastLine: 10, firstTag: 0, requests: 0, encodeCounts: Self.encodeCounts(lines: 10, devices: 0))
        #expect(ledger.watermark == 0)
        ledger.written(sequence: 0, marks: [3, 0])
        #expect(ledger.watermark == 10)
        #expect(ledger.committedMarks == [3, 0])
    }

    /// An unsent outcome (a stopped run) stops the watermark for good: a resume sends that batch's
    /// devices, so neither it nor any later batch may count as settled.
    @Test func anUnsentOutcomeStallsTheWatermark() {
        var ledger = CheckpointLedger(watermark: 0, counts: RunCounts(), marks: [0, 0])
        for sequence in 0..<3 {
            ledger.accept(sequence: sequence, lastLine: (sequence + 1) * 10, firstTag: UInt64(sequence), requests: 1, encodeCounts: Self.encodeCounts(lines: 10, devices: 1))
            ledger.written(sequence: sequence, marks: [0, 0])
        }
        ledger.record(tag: 0, outcome: .sent(providerID: nil, attempts: 1), provider: .apns)
        ledger.record(tag: 1, outcome: .unsent(attempts: 0, possibleDuplicate: false), provider: .apns)
        ledger.record(tag: 2, outcome: .sent(providerID: nil, attempts: 1), provider: .apns)
        #expect(ledger.watermark == 10)
        #expect(ledger.stalled)
        #expect(ledger.committed.devices == 1)
    }

    /// A resumed ledger starts from the checkpoint's watermark and counts and adds to them.
    @Test func aResumedLedgerAddsToTheCheckpoint() {
        var start = Self.encodeCounts(lines: 100, devices: 1)
        start.record(.sent(providerID: nil, attempts: 1), provider: .apns)
        var ledger = CheckpointLedger(watermark: 100, counts: start, marks: [40, 0])
        ledger.accept(sequence: 0, lastLine: 100, firstTag: 0, requests: 0, encodeCounts: RunCounts())
        ledger.written(sequence: 0, marks: [40, 0])
        ledger.accept(sequence: 1, lastLine: 150, firstTag: 0, requests: 1, encodeCounts: Self.encodeCounts(lines: 50, devices: 1))
        ledger.written(sequence: 1, marks: [55, 0])
        ledger.record(tag: 0, outcome: .sent(providerID: nil, attempts: 1), provider: .apns)
        #expect(ledger.watermark == 150)
        #expect(ledger.committed.lines == 150)
        #expect(ledger.committed.sentTotal == 2)
        let again = ledger.record(tag: 0, outcome: .sent(providerID: nil, attempts: 1), provider: .apns)
        #expect(!again, "a tag settles once")
    }
}

@Suite("Resume: reading back a killed run's result lines")
struct ResumeRecordsTests {
    /// The `"line":` key is found after a recipient whose text spells it (escaped by our writer).
    @Test func theLineNumberIsTheKeysNotARecipientsText() {
        var w = JSONWriter()
        w.beginObject()
        w.writeKey("recipient"); w.writeString(#"x","line":1,"y"#)
        w.writeKey("line"); w.writeInt(4711)
        w.writeKey("device"); w.writeInt(2)
        w.endObject()
        let number = w.bytes.withUnsafeBytes { ResumeRecords.lineNumber(in: $0) }
        #expect(number == 4711)
    }

    /// Records after the watermark are read; a torn last line (no newline) is not a record.
    @Test func recordsAfterTheWatermarkAreReadAndATornLineIsNot() throws {
        let scratch = try Scratch()
        let sent = """
        {"recipient":"a","line":3,"device":0,"provider":"apns","apns_id":"X","attempts":1}
        {"recipient":"b","line":9,"device":1,"provider":"fcm","message":"m","attempts":2,"possible_duplicate":true}
        {"recipient":"c","line":12,"device":0,"provider":"apns","apns_id":"Y","attempts":1}
        {"recipient":"d","line":13,"device":0,"provider":"apns","apns_id":"Z","attempts":1}
        """
        try sent.write(toFile: scratch.file("sent.tmp"), atomically: true, encoding: .utf8)
        let unsent = #"{"recipient":"e","line":20,"device":0,"provider":"apns","token":"t","reason":"run_stopped","attempts":0}"# + "\n"
        try unsent.write(toFile: scratch.file("unsent.tmp"), atomically: true, encoding: .utf8)
        let records = try ResumeRecords.read(paths: ["sent.ndjson": scratch.file("sent.tmp"), "unsent.ndjson": scratch.file("unsent.tmp")], after: 5)
        #expect(Set(records.settled.keys) == [DeviceKey(line: 9, device: 1), DeviceKey(line: 12, device: 0)])
        #expect(records.settled[DeviceKey(line: 9, device: 1)]?.outcome.possibleDuplicate == true)
        #expect(records.settled[DeviceKey(line: 9, device: 1)]?.provider == .fcm)
        #expect(records.neverAttempted == [DeviceKey(line: 20, device: 0)])
    }
}

@Suite("Checkpoint journal: numbers no run could reach")
struct CheckpointJournalBoundsTests {
    /// A journal edited by hand with its digest recomputed (it is a file in a folder anyone with
    /// access can change): a count near Int.max would trap when the resumed run adds to it.
    @Test(arguments: ["9223372036854775807", "281474976710657", "-1", "1.5", "1e300"])
    func aCountNoRunCouldReachIsRefused(count: String) throws {
        let scratch = try Scratch()
        try CheckpointJournalTests.sample().write(to: scratch.path, sync: false)
        let text = try String(contentsOfFile: scratch.file(CheckpointJournal.fileName), encoding: .utf8)
        let start = try #require(text.range(of: #""journal":"#)).upperBound
        let body = String(text[start...].dropLast(2)).replacingOccurrences(of: #""lines":120"#, with: #""lines":\#(count)"#)
        #expect(body.contains(count))
        let forged = #"{"version":1,"sha256":""# + CheckpointJournal.digest(Data(body.utf8)) + #"","journal":"# + body + "}\n"
        let error = try #require(throws: CheckpointError.self) { try CheckpointJournal.decode(Array(forged.utf8), path: "p") }
        #expect(error.description.contains("damaged"))
    }
}
