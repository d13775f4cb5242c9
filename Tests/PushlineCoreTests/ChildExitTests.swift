import Foundation
import PushlineTestSupport
import Testing

/// The suite's own way to wait for a child (test support), checked against /bin/sh.
@Suite("Test support: waiting for a child process")
struct ChildExitTests {
    private func shell(_ script: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        return process
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

    @Test func aChildPastItsLimitIsKilled() throws {
        let started = ContinuousClock.now
        let exit = try shell("exec sleep 30").waitForExit(limit: .milliseconds(200))
        #expect(exit == ChildExit(code: SIGKILL, signalled: true))
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
