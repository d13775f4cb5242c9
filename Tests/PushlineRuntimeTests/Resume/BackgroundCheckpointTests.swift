import Foundation
import PushlineCore
import PushlineIO
@testable import PushlineRuntime
import Synchronization
import Testing

@Suite("Background checkpoints")
struct BackgroundCheckpointTests {
    /// While a background checkpoint's fsyncs run, its `DeviceFlushes` says so (the request files
    /// write through the page cache meanwhile), and once they and the journal are done it no
    /// longer does: a checkpoint that left it set would keep O_DIRECT off for the rest of the run.
    @Test func itsFlushesAreInProgressExactlyWhileItsFsyncsRun() throws {
        let scratch = try Scratch()
        var file = try OutputFile(path: scratch.file("requests-apns.ndjson"))
        try file.write(Array("{\"recipient\":\"c-1\"}\n".utf8))
        let bytes = try file.checkpoint(sync: false)
        let handle = file.syncHandle()
        var journal = CheckpointJournalTests.sample()
        journal.mode = "dry_run"
        let plan = CheckpointPlan(journal: journal, folder: scratch.path, interval: .seconds(2), duplicateWindow: 0, resumed: false)
        let seen = Mutex<[Bool]>([])
        let background = BackgroundCheckpoint(plan: plan) { flushes in
            seen.withLock { $0.append(flushes.inProgress) }
        }
        #expect(!background.flushes.inProgress)
        let temporaryName = URL(fileURLWithPath: file.temporaryPath).lastPathComponent
        let mark = CheckpointJournal.FileMark(name: "requests-apns.ndjson", temporaryName: temporaryName, bytes: bytes, cutAtMark: true)
        #expect(background.submit(handles: [handle], watermark: 1, counts: RunCounts(), files: [mark]))
        // Waits for the background one, then writes the journal again.
        #expect(background.writeNow(watermark: 1, counts: RunCounts(), files: [mark]) == nil)
        #expect(seen.withLock { $0 } == [true], "in progress while the fsyncs ran")
        #expect(!background.flushes.inProgress, "and no longer once they ended")
        #expect(try CheckpointJournal.read(from: scratch.path)?.settledThroughLine == 1)
        try file.close()
    }
}
