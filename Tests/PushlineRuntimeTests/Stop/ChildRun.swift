import Foundation
import PushlineEmulator
import PushlineTestSupport
import Synchronization
import Testing

/// A `pushline` child process for the signal tests. Its audience comes through standard input,
/// fed from `feed` over and over (as fast as the child reads) until the child exits, so the run
/// cannot reach its end by itself: "mid-run" is a fact, not a race. Standard error goes to a file
/// the test reads while the child runs.
final class ChildRun: Sendable {
    let process: ChildProcess
    let stderrPath: String
    private let feeding = Mutex(true)

    /// Runs `pushline` with `arguments`, writing `feed` to its standard input over and over
    /// (`repeats` times at most); with `thenStall`, the pipe then stays open without a byte more
    /// until the child exits, as a stalled producer's would.
    init(_ arguments: [String], feed: [UInt8]?, repeats: Int = 100_000, thenStall: Bool = false, stderrPath: String) throws {
        // Writing to a pipe whose reader exited must be an EPIPE error here, not a kill.
        signal(SIGPIPE, SIG_IGN)
        self.stderrPath = stderrPath
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: PushlineBinary.path)
        process.arguments = arguments
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardOutput = FileHandle.nullDevice
        let input = feed.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let feed, let input {
            let fd = input.fileHandleForWriting.fileDescriptor
            let thread = Thread { [self] in
                // Bounded (a few GB at most), though the child is always stopped long before.
                for _ in 0..<repeats where feeding.withLock({ $0 }) {
                    let ok = feed.withUnsafeBytes { bytes -> Bool in
                        var offset = 0
                        while offset < bytes.count {
                            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                            if written < 0 {
                                if errno == EINTR { continue }
                                return false
                            }
                            offset += written
                        }
                        return true
                    }
                    if !ok { break }
                }
                // A stalled producer: the pipe stays open until the child has ended.
                if thenStall, feeding.withLock({ $0 }) { _ = process.waitForEnd() }
                try? input.fileHandleForWriting.close()
            }
            thread.start()
        }
    }

    var pid: Int32 { process.processIdentifier }

    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits for `condition` about the child's output or files: it is looked at again each time
    /// the kernel reports a write to the child's standard error or to one of `paths` (a file, or
    /// a folder's files; `FileChanges`), and when the child ends. `limit` only guards against a
    /// hang (the test fails, and the child is killed).
    func waitUntil(
        _ what: String, watching paths: [String] = [], limit: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () throws -> Bool
    ) async throws {
        // Watched before the first look: a write after it ends the first wait at once.
        let changes = try FileChanges(watching: [stderrPath] + paths)
        let deadline = ContinuousClock.now + limit
        while !(try condition()) {
            let running = process.isRunning
            guard try running || condition() else {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("the child exited (\(process.terminationStatus)) before: \(what)\n\(stderr)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("hang guard: no \(what) after \(limit)\n\(stderr)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            _ = await changes.next(orExitOf: process.processIdentifier, limit: deadline - ContinuousClock.now)
        }
    }

    /// Waits for `condition` about what the emulator received (it tells each change: nothing
    /// is looked at on a clock). A child that ends first fails the test once `limit` passed,
    /// the hang guard; the child is then killed.
    func waitUntil(
        _ what: String, at emulator: ProviderEmulator, limit: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @escaping @Sendable (EmulatorStats) -> Bool
    ) async throws {
        guard await emulator.waitForStats(limit: limit, until: condition) else {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("hang guard: no \(what) after \(limit)\n\(stderr)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }

    /// Waits for the child to exit; returns its exit status (or, for a signal, 128 + signal).
    /// A child still running after `limit` is killed and the test fails.
    func waitForExit(limit: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int32 {
        let started = ContinuousClock.now
        let exit = await process.exited(limit: limit)
        feeding.withLock { $0 = false }
        if ContinuousClock.now - started >= limit {
            Issue.record("hang guard: no exit after \(limit)\n\(stderr)", sourceLocation: sourceLocation)
        }
        return exit.shellStatus
    }
}

/// The files of a folder (not its subfolders), name → bytes.
func folderFiles(_ path: String) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
        files[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
    }
    return files
}

/// Complete NDJSON lines in a file that may be being written (a trailing partial line ignored).
func completeLines(_ path: String) -> Int {
    guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return 0 }
    return data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
}

/// The temporary file of result `name` in `folder` (`name.<pid>-<token>.tmp`), if there is one.
func temporaryFile(_ name: String, in folder: String) -> String? {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.first { $0.hasPrefix(name + ".") && $0.hasSuffix(".tmp") }.map { folder + "/" + $0 }
}
