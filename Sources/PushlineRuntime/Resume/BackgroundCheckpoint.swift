import Dispatch
import PushlineCore
import PushlineIO
import Synchronization

/// Makes a dry run's checkpoints durable off its writing thread: the files are fsynced through
/// second descriptors, then the journal is replaced, while the writer goes on (an fsync of what a
/// dry run writes in two seconds, hundreds of MB, would otherwise stall it). One at a time: a
/// checkpoint due while the previous one is still syncing is skipped, and the next one covers it.
final class BackgroundCheckpoint: Sendable {
    private struct State {
        var checkpointer: RunCheckpointer
        var busy = false
        var failure: String?
    }

    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "pushline-checkpoint")
    let interval: Duration
    /// Says when a checkpoint's fsyncs run, so the request files stay off the device meanwhile.
    let flushes = DeviceFlushes()
    /// Called on the checkpoint's thread as its fsyncs start (tests).
    private let whileSyncing: (@Sendable (DeviceFlushes) -> Void)?

    init(plan: CheckpointPlan, whileSyncing: (@Sendable (DeviceFlushes) -> Void)? = nil) {
        state = Mutex(State(checkpointer: RunCheckpointer(plan: plan)))
        interval = plan.interval
        self.whileSyncing = whileSyncing
    }

    /// The first failure to make a checkpoint durable.
    var failure: String? { state.withLock { $0.failure } }

    /// Starts making the files (through `handles`, taken after the data of `files` was written)
    /// and then the journal durable; false (nothing started) while the previous one runs.
    @discardableResult
    func submit(handles: [FileSyncHandle], watermark: Int, counts: RunCounts, files: [CheckpointJournal.FileMark]) -> Bool {
        let started = state.withLock { state -> Bool in
            guard !state.busy, state.failure == nil else { return false }
            state.busy = true
            return true
        }
        guard started else { return false }
        flushes.begin()
        queue.async { [self] in
            defer { flushes.end() }
            whileSyncing?(flushes)
            var failure: String?
            do throws(OutputFileError) {
                for handle in handles { try handle.sync() }
            } catch {
                failure = error.description
            }
            state.withLock { state in
                if failure == nil {
                    state.checkpointer.write(watermark: watermark, horizons: [:], counts: counts, files: files, sync: true)
                    failure = state.checkpointer.failure?.description
                }
                if let failure, state.failure == nil { state.failure = failure }
                state.busy = false
            }
        }
        return true
    }

    /// Writes the journal now, on the caller's thread, after any checkpoint in progress (the
    /// first and the last one: the caller fsynced the files).
    func writeNow(watermark: Int, counts: RunCounts, files: [CheckpointJournal.FileMark]) -> String? {
        queue.sync {}
        return state.withLock { state in
            if let failure = state.failure { return failure }
            state.checkpointer.write(watermark: watermark, horizons: [:], counts: counts, files: files, sync: true)
            state.failure = state.checkpointer.failure?.description
            return state.failure
        }
    }
}
