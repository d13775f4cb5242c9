import Foundation
import PushlineRuntime
import PushlineTestSupport
import Testing

/// A `pushline run` child process that a test kills with SIGKILL at a chosen point and then
/// resumes: the only honest way to test a crash (the process gets no chance to clean up).
struct KillableRun {
    let process: ChildProcess
    let log: String

    /// Starts `pushline` with `arguments`, standard error to `log` (read when a test fails).
    static func start(_ arguments: [String], log: String) throws -> KillableRun {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: PushlineBinary.path)
        process.arguments = arguments
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return KillableRun(process: process, log: log)
    }

    /// Waits until `condition` about the files in `folder` holds or the run ended; true when it
    /// held while the run was still going. A look is taken each time the kernel reports a write
    /// in `folder` (`FileChanges`), with the child stopped (SIGSTOP), and a look that holds
    /// leaves it stopped, so the kill that follows lands in exactly the state that was seen:
    /// the verdict does not depend on how far a fast run gets between the look and the kill.
    /// `limit` only guards against a hang.
    func wait(for folder: String, until condition: () -> Bool, limit: Duration = .seconds(300)) -> Bool {
        let pid = process.processIdentifier
        // Watched before the first look: a write after it ends the next wait at once.
        guard let changes = try? FileChanges(watching: [folder]) else {
            Issue.record("cannot watch \(folder)")
            return false
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard process.isRunning, Foundation.kill(pid, SIGSTOP) == 0 else { return false }
            if condition() { return process.isRunning }
            Foundation.kill(pid, SIGCONT)
            if changes.wait(orExitOf: pid, limit: deadline - ContinuousClock.now) == .exited { return false }
        }
        return false
    }

    /// Sends `signal` and lets a child `wait` left stopped go on, so it can handle it (SIGTERM).
    func signal(_ signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
        Foundation.kill(process.processIdentifier, SIGCONT)
    }

    /// SIGKILL, then the exit (a signal, unless it had just ended).
    func kill() -> ChildExit {
        Foundation.kill(process.processIdentifier, SIGKILL)
        return process.waitForExit()
    }

    var stderr: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
}

/// The settled-line watermark of the folder's checkpoint, 0 without one.
func checkpointWatermark(_ folder: String) -> Int {
    (try? CheckpointJournal.read(from: folder))?.settledThroughLine ?? 0
}

/// Runs the folder's journal counts, the one writing it included once it checkpointed: a test
/// that kills the n-th run waits for n, so the kill lands in that run and not before its first
/// checkpoint (when a resumed run starts past the target line already, the previous run's
/// journal alone would satisfy the wait).
func checkpointRuns(_ folder: String) -> Int {
    (try? CheckpointJournal.read(from: folder))?.runs ?? 0
}

/// Whole lines in the folder's temporary (or final) results file `name`.
func resultLineCount(_ folder: String, _ name: String) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    guard let file = entries.first(where: { $0 == name || ($0.hasPrefix(name + ".") && $0.hasSuffix(".tmp")) }),
          let data = FileManager.default.contents(atPath: folder + "/" + file)
    else { return 0 }
    return data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
}

/// Some results file of the folder holds more bytes than its checkpoint accounts for: a kill now
/// lands between checkpoints.
func filesPastCheckpoint(_ folder: String) -> Bool {
    guard let journal = try? CheckpointJournal.read(from: folder) else { return false }
    return journal.files.contains { mark in
        let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + mark.temporaryName)[.size] as? Int) ?? 0
        return size > mark.bytes
    }
}
