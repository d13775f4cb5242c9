internal import CPushlineTestSupport
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests, configured as Foundation's `Process` is (so a test reads the same),
/// started with `posix_spawn` and waited for with a pidfd.
///
/// Why not `Process`: on Swift 6.3.1 for Linux its child side over-reads `d_name` while closing
/// descriptors before `exec` (swift-corelibs-foundation #5472, fixed upstream, not in this
/// toolchain), which crashed about one full test run in five; and it could miss a child's exit
/// when many children ended at once, leaving `waitUntilExit` spinning on a zombie.
///
/// Set the properties, then `run()` once; after that the object is safe to share between threads.
public final class ChildProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's environment; nil: this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// Each standard stream: nil (inherit), a `FileHandle`, or a `Pipe` (the child gets the
    /// pipe's far end, which this process closes once the child has started).
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    private enum State {
        case configuring
        case running(pid_t)
        case exited(pid_t, ChildExit)
    }

    private let state = Mutex(State.configuring)

    public init() {}

    /// An error from starting the child: the errno `posix_spawn` reported.
    public struct SpawnError: Error, CustomStringConvertible {
        public var path: String
        public var code: Int32
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    public func run() throws {
        guard let path = executableURL?.path else { throw SpawnError(path: "(no executable)", code: ENOENT) }
        let input = Self.descriptor(standardInput, childReads: true)
        let output = Self.descriptor(standardOutput, childReads: false)
        let error = Self.descriptor(standardError, childReads: false)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = argv.withUnsafeBufferPointer { argv in
            withOptionalBuffer(envp) { envp in
                cpushlinetestsupport_spawn(&pid, path, argv.baseAddress, envp, currentDirectoryURL?.path, input, output, error)
            }
        }
        guard result == 0 else { throw SpawnError(path: path, code: result) }
        state.withLock { $0 = .running(pid) }
        // This process's copies of the child's pipe ends: a reader of the child's output sees its
        // end only once no writer is left.
        (standardInput as? Pipe).map { try? $0.fileHandleForReading.close() }
        (standardOutput as? Pipe).map { try? $0.fileHandleForWriting.close() }
        (standardError as? Pipe).map { try? $0.fileHandleForWriting.close() }
    }

    public var processIdentifier: Int32 {
        state.withLock { state in
            switch state {
            case .configuring: 0
            case .running(let pid), .exited(let pid, _): pid
            }
        }
    }

    /// How the child ended, reaping it if it has; nil while it runs.
    public var exit: ChildExit? { reap(block: false) }

    /// Reaps the child (`block`: once it ends). A status the system no longer has (the child
    /// reaped elsewhere) is `statusLost`, so a wait ends instead of spinning.
    private func reap(block: Bool) -> ChildExit? {
        state.withLock { state in
            switch state {
            case .configuring: return nil
            case .exited(_, let exit): return exit
            case .running(let pid):
                var code: Int32 = 0
                var signalled: Int32 = 0
                let exit: ChildExit
                switch cpushlinetestsupport_reap(pid, block ? 1 : 0, &code, &signalled) {
                case 1: exit = ChildExit(code: code, signalled: signalled == 1)
                case 0: return nil
                default: exit = .statusLost
                }
                state = .exited(pid, exit)
                return exit
            }
        }
    }

    public var isRunning: Bool {
        if case .configuring = state.withLock({ $0 }) { return false }
        return exit == nil
    }

    /// The exit status, or the signal number for a child a signal ended; 0 while it runs.
    public var terminationStatus: Int32 { exit?.code ?? 0 }

    /// Sends SIGTERM.
    public func terminate() { signal(SIGTERM) }

    public func signal(_ number: Int32) {
        if isRunning { kill(processIdentifier, number) }
    }

    /// Waits for the child to end and returns how. A child still running after `limit` is
    /// killed, so a hung child fails its test instead of hanging the suite.
    @discardableResult
    public func waitForExit(limit: Duration = .seconds(600)) -> ChildExit {
        let pid = processIdentifier
        precondition(pid > 0, "waitForExit before run")
        if let exit { return exit }
        let milliseconds = limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000
        // Only a timeout kills. The wait fails only for a child the system no longer has, which
        // the reap below reports at once as `statusLost`.
        if cpushlinetestsupport_await_exit(pid, Int32(clamping: milliseconds)) == 0 {
            kill(pid, SIGKILL)
        }
        return reap(block: true) ?? .statusLost
    }

    public func waitUntilExit() { waitForExit() }

    /// Blocks until the child has ended or `limit` passed (false), without reaping it: the
    /// thread that calls `waitForExit` still gets its status.
    public func waitForEnd(limit: Duration = .seconds(600)) -> Bool {
        let milliseconds = limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000
        return cpushlinetestsupport_await_exit(processIdentifier, Int32(clamping: milliseconds)) != 0
    }

    /// `waitForExit` from async code: the wait happens on a thread of its own, never on one of
    /// the cooperative pool's few threads, which every other test running meanwhile needs.
    public func exited(limit: Duration = .seconds(600)) async -> ChildExit {
        await withCheckedContinuation { (continuation: CheckedContinuation<ChildExit, Never>) in
            Thread { continuation.resume(returning: self.waitForExit(limit: limit)) }.start()
        }
    }

    /// Reads a child's standard output and standard error to their ends at the same time: read
    /// one after the other, a child that fills the second pipe (64 KiB) while the first is still
    /// open would wait on this process for good.
    public static func readToEnd(_ output: Pipe, _ error: Pipe) -> (output: Data, error: Data) {
        let errorData = Mutex(Data())
        let done = DispatchSemaphore(value: 0)
        Thread {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            done.signal()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        return (outputData, errorData.withLock { $0 })
    }

    /// The descriptor the child gets for one stream; -1: inherit.
    private static func descriptor(_ stream: Any?, childReads: Bool) -> Int32 {
        switch stream {
        case let handle as FileHandle: handle.fileDescriptor
        case let pipe as Pipe: childReads ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        default: -1
        }
    }
}

private func withOptionalBuffer<R>(
    _ array: [UnsafeMutablePointer<CChar>?]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
    guard let array else { return body(nil) }
    return array.withUnsafeBufferPointer { body($0.baseAddress) }
}
