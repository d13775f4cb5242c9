import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PushlineTestSupport
import Testing

/// The suite's own way to start and wait for a child (test support), checked against /bin/sh.
@Suite("Test support: child processes")
struct ChildExitTests {
    private func shell(_ script: String, configure: (ChildProcess) throws -> Void = { _ in }) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try configure(process)
        try process.run()
        return process
    }

    /// Runs `script` with its standard output in a pipe; returns what it printed and how it ended.
    private func output(_ script: String, configure: (ChildProcess) throws -> Void = { _ in }) throws -> (String, ChildExit) {
        let pipe = Pipe()
        let process = try shell(script) {
            $0.standardOutput = pipe
            try configure($0)
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (String(decoding: data, as: UTF8.self), process.waitForExit())
    }

    @Test func exitStatus() throws {
        #expect(try shell("exit 3").waitForExit() == ChildExit(code: 3, signalled: false))
        #expect(try shell("true").waitForExit().shellStatus == 0)
    }

    @Test func signalIsReportedAsAShellWould() throws {
        let exit = try shell("kill -9 $$").waitForExit()
        #expect(exit == ChildExit(code: 9, signalled: true))
        #expect(exit.shellStatus == 137)
    }

    /// Left alone, the child would exit 0 after 30 s: dying of SIGKILL is the limit's doing.
    @Test func aChildPastItsLimitIsKilled() throws {
        let exit = try shell("exec sleep 30").waitForExit(limit: .milliseconds(200))
        #expect(exit == ChildExit(code: SIGKILL, signalled: true))
    }

    /// A child reaped behind the helper's back has no status left: the wait says so and ends.
    @Test func aStatusTheSystemNoLongerHasEndsTheWait() throws {
        let process = try shell("exit 3")
        var status: Int32 = 0
        #expect(waitpid(process.processIdentifier, &status, 0) == process.processIdentifier)
        #expect(process.waitForExit() == .statusLost)
        #expect(!process.isRunning)
    }

    /// The child starts with no signal blocked, whatever the spawning thread blocks (the mask is
    /// this thread's own, so the test changes nothing for the tests beside it).
    @Test func aRunningChildIsRunningUntilItEnds() throws {
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let spawned = Result { try shell("exec sleep 30") }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        let process = try spawned.get()
        #expect(process.isRunning)
        process.terminate()
        // The limit is a hang guard: a child deaf to SIGTERM ends killed, and the expectation fails.
        #expect(process.waitForExit(limit: .seconds(60)) == ChildExit(code: SIGTERM, signalled: true))
        #expect(!process.isRunning)
        #expect(process.terminationStatus == SIGTERM)
    }

    /// Only descriptors 0, 1 and 2 reach the child: an open pipe of this process held by a child
    /// would keep that pipe's reader waiting for an end that never comes.
    @Test func theChildGetsOnlyItsThreeStreams() throws {
        let unrelated = Pipe()
        defer { _ = unrelated }
        let (listing, exit) = try output("ls /proc/$$/fd")
        #expect(exit.shellStatus == 0)
        #expect(listing.split(separator: "\n").sorted() == ["0", "1", "2"])
    }

    @Test func standardInputComesFromAPipe() throws {
        let input = Pipe()
        let output = Pipe()
        let process = try shell("tr a-z A-Z") {
            $0.standardInput = input
            $0.standardOutput = output
        }
        input.fileHandleForWriting.write(Data("pushline\n".utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        #expect(String(decoding: data, as: UTF8.self) == "PUSHLINE\n")
        #expect(process.waitForExit().shellStatus == 0)
    }

    @Test func directoryAndEnvironmentAreTheChildsOwn() throws {
        let (printed, exit) = try output(#"printf '%s|%s' "$(pwd)" "$PUSHLINE_CHILD""#) {
            $0.currentDirectoryURL = URL(fileURLWithPath: "/usr")
            $0.environment = ["PUSHLINE_CHILD": "a b"]
        }
        #expect(exit.shellStatus == 0)
        #expect(printed == "/usr|a b")
    }

    /// Either pipe may fill first: 200 KB on standard error before one line on standard output
    /// would stop a reader that took standard output to its end first. (The limit only guards
    /// against that hang.)
    @Test(.timeLimit(.minutes(1))) func bothOutputsAreReadAtOnce() throws {
        let output = Pipe()
        let error = Pipe()
        let process = try shell("head -c 200000 /dev/zero >&2; echo done") {
            $0.standardOutput = output
            $0.standardError = error
        }
        let (printed, errors) = ChildProcess.readToEnd(output, error)
        #expect(process.waitForExit().shellStatus == 0)
        #expect(String(decoding: printed, as: UTF8.self) == "done\n")
        #expect(errors.count == 200_000)
    }

    @Test func anExecutableThatCannotRunIsAnErrorFromRun() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/nonexistent/pushline")
        #expect(throws: ChildProcess.SpawnError.self) { try process.run() }
        #expect(!process.isRunning)
    }
}
