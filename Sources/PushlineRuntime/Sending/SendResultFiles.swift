import PushlineCore
import PushlineIO

/// One result file of a sending run: lines are collected per event batch into `buffer` and
/// written in one call; `flushToDisk` hands what the file buffered to the kernel.
final class ResultFile {
    let name: String
    var file: OutputFile?
    var buffer = JSONWriter(reservingCapacity: 64 << 10)

    init(name: String, file: consuming OutputFile) {
        self.name = name
        self.file = consume file
    }
}

/// The files a sending run writes its outcomes to (`sent`, `invalid-tokens`, `failed`,
/// `unsent`, `rejects`, and `deferred` under quiet hours), each under a temporary name renamed
/// on close, and the first failure to write one: after it nothing more is written, and the
/// sink stops the run (the files keep what was written before).
final class SendResultFiles {
    let sent: ResultFile
    let invalidTokens: ResultFile
    let failed: ResultFile
    let unsent: ResultFile
    /// Rejects and deferred lines follow input order (a resume cuts them at the watermark).
    let rejects: ResultFile
    /// Quiet hours' deferred lines, when the campaign has quiet hours.
    let deferredLines: ResultFile?
    /// An experiment's holdout lines, when it has a control group.
    let holdoutLines: ResultFile?
    private(set) var writeFailure: OutputFileError?
    /// The lines in input order (rejects, deferred, holdout) of batches that came before their
    /// turn, by sequence.
    private var earlyLines: [Int: InOrderLines] = [:]
    private var nextInOrder = 0

    struct InOrderLines {
        var rejects: [UInt8]
        var deferred: [UInt8]
        var holdout: [UInt8]
    }

    private var all: [ResultFile] { [sent, invalidTokens, failed, unsent, rejects] + [deferredLines, holdoutLines].compactMap { $0 } }

    /// Opens the files in `folder`; resuming (`checkpoint` resumed), continues the previous run's.
    init(folder: String, writesDeferred: Bool, writesHoldout: Bool = false, checkpoint: CheckpointPlan?) throws(OutputFileError) {
        func open(_ name: String) throws(OutputFileError) -> ResultFile {
            let path = folder + "/" + name
            // Who was notified: kept whatever happens to the run (a write failure, a crash), for
            // the next run to resume from or refuse to delete (`UnfinishedRun`).
            let options = OutputFile.Options(keepsRecord: true)
            guard let resumed = checkpoint?.resumedPath(of: name) else { return ResultFile(name: name, file: try OutputFile(path: path, options: options)) }
            // Results in completion order are kept whole (a torn last line dropped); unsent
            // devices are sent by this run, so their list starts again; rejects, deferred and
            // holdout lines follow input order and are cut at the watermark.
            let cut: OutputFile.ResumeCut = switch name {
            case "unsent.ndjson": .at(0)
            case "rejects.ndjson", "deferred.ndjson", "holdout.ndjson": .at(resumed.mark.bytes)
            default: .afterLastLine(atLeast: resumed.mark.bytes)
            }
            return ResultFile(name: name, file: try OutputFile(resuming: resumed.path, path: path, cut: cut, options: options))
        }
        sent = try open("sent.ndjson")
        invalidTokens = try open("invalid-tokens.ndjson")
        failed = try open("failed.ndjson")
        unsent = try open("unsent.ndjson")
        rejects = try open("rejects.ndjson")
        deferredLines = writesDeferred ? try open("deferred.ndjson") : nil
        holdoutLines = writesHoldout ? try open("holdout.ndjson") : nil
    }

    /// Bytes written so far to the files in input order (rejects, deferred, holdout): the
    /// checkpoint ledger's marks.
    var inOrderMarks: [Int] {
        [rejects.file?.bytesWritten ?? 0, deferredLines?.file?.bytesWritten ?? 0, holdoutLines?.file?.bytesWritten ?? 0]
    }

    /// The first failure wins; from then on nothing is written.
    func fail(_ error: OutputFileError) {
        if writeFailure == nil { writeFailure = error }
    }

    /// Writes a batch's rejects, deferred and holdout lines once every earlier batch's are
    /// written (a batch that comes early waits here); `written` is told each batch written, in
    /// sequence, with `inOrderMarks` just after it.
    func writeInOrder(sequence: Int, rejects: [UInt8], deferred: [UInt8], holdout: [UInt8] = [], written: (_ sequence: Int, _ marks: [Int]) -> Void) {
        guard sequence == nextInOrder else {
            earlyLines[sequence] = InOrderLines(rejects: rejects, deferred: deferred, holdout: holdout)
            return
        }
        var lines = InOrderLines(rejects: rejects, deferred: deferred, holdout: holdout)
        while true {
            write(lines.rejects, to: self.rejects)
            if let deferredLines { write(lines.deferred, to: deferredLines) }
            if let holdoutLines { write(lines.holdout, to: holdoutLines) }
            written(nextInOrder, inOrderMarks)
            nextInOrder += 1
            guard let early = earlyLines.removeValue(forKey: nextInOrder) else { return }
            lines = early
        }
    }

    func write(_ bytes: [UInt8], to file: ResultFile) {
        guard writeFailure == nil, !bytes.isEmpty else { return }
        do throws(OutputFileError) {
            try file.file!.write(bytes)
        } catch {
            fail(error)
        }
    }

    /// Writes the lines collected since the last flush (into the files' buffers).
    func flush() {
        for file in [sent, invalidTokens, failed, unsent] where file.buffer.count > 0 {
            write(file.buffer.bytes, to: file)
            file.buffer.removeAll()
        }
    }

    /// Writes what the files buffered to the kernel: the results settled so far survive the
    /// process being killed (in the temporary files; `UnfinishedRun` keeps them for the next run).
    func flushToDisk() {
        flush()
        guard writeFailure == nil else { return }
        for file in all {
            do throws(OutputFileError) {
                try file.file?.flush()
            } catch {
                fail(error)
                return
            }
        }
    }

    /// Each file's mark for the journal, handed to the kernel first (with `sync`, fsynced): the
    /// files in completion order by their length, those in input order by the ledger's committed
    /// marks (`committedInOrder`: rejects, deferred, holdout). Nil when a file failed.
    func checkpointMarks(sync: Bool, committedInOrder: [Int]) -> [CheckpointJournal.FileMark]? {
        var marks: [CheckpointJournal.FileMark] = []
        do throws(OutputFileError) {
            for file in all {
                let bytes = try file.file!.checkpoint(sync: sync)
                let inOrder = file === rejects ? 0 : file === deferredLines ? 1 : file === holdoutLines ? 2 : nil
                marks.append(.init(
                    name: file.name, temporaryName: DryRunSink.baseName(file.file?.temporaryPath ?? ""),
                    bytes: inOrder.map { committedInOrder[$0] } ?? bytes, cutAtMark: inOrder != nil
                ))
            }
        } catch {
            fail(error)
            return nil
        }
        return marks
    }

    /// Closes the files (renamed into place): their names and sizes, by name.
    func close() throws(OutputFileError) -> [(name: String, bytes: Int)] {
        if let writeFailure { throw writeFailure }
        var closed: [(name: String, bytes: Int)] = []
        for file in all {
            guard let open = file.file.take() else { continue }
            closed.append((file.name, try open.close()))
        }
        closed.sort { $0.name < $1.name }
        return closed
    }
}
