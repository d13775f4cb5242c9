public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public struct ChildExit: Sendable, Equatable, CustomStringConvertible {
    /// The exit status, or the signal number when `signalled`.
    public var code: Int32
    public var signalled: Bool

    public init(code: Int32, signalled: Bool) {
        self.code = code
        self.signalled = signalled
    }

    /// The status as a shell reports it: the exit status, or 128 + the signal.
    public var shellStatus: Int32 { signalled ? 128 + code : code }

    public var description: String { self == .statusLost ? "ended, status lost" : signalled ? "signal \(code)" : "exit \(code)" }

    /// The child ended and was reaped by Foundation, which never reported it: its status is unknown.
    public static let statusLost = ChildExit(code: -1, signalled: false)
}

extension Process {
    /// Waits for the child to end, without `waitUntilExit`.
    ///
    /// Foundation on Linux can miss a child's exit when many children end at once: a full suite
    /// run hung with the child a zombie and `waitUntilExit` spinning for good. This peeks at the
    /// child with `waitid(WNOWAIT)` (which does not reap it); once it has ended, Foundation gets
    /// two seconds to notice, and if it has not, the child is reaped here and its status decoded.
    /// A child still running after `limit` is killed, so a hung child fails its test instead of
    /// hanging the suite.
    public func waitForExit(limit: Duration = .seconds(600)) -> ChildExit {
        let pid = processIdentifier
        let killAt = ContinuousClock.now + limit
        var endedAt: ContinuousClock.Instant?
        var killed = false
        while true {
            if !isRunning {
                return ChildExit(code: terminationStatus, signalled: terminationReason == .uncaughtSignal)
            }
            let now = ContinuousClock.now
            if endedAt == nil {
                var info = siginfo_t()
                let peeked = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
                if peeked == 0, info._sifields._sigchld.si_pid == pid {
                    endedAt = now
                } else if peeked != 0, errno == ECHILD {
                    // Already reaped (by Foundation): only `isRunning` is left to turn false.
                    endedAt = now
                } else if now >= killAt, !killed {
                    kill(pid, SIGKILL)
                    killed = true
                }
            } else if let ended = endedAt, now - ended > .seconds(2) {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    // Glibc's WIFSIGNALED / WTERMSIG are macros Swift cannot import.
                    let signal = status & 0x7F
                    return signal == 0
                        ? ChildExit(code: (status >> 8) & 0xFF, signalled: false)
                        : ChildExit(code: signal, signalled: true)
                }
                // Foundation reaped it meanwhile: `isRunning` turns false on a later turn, or,
                // if Foundation lost the exit too (seen once, under load: a suite hung here for
                // 25 minutes), the status is gone: say so instead of waiting for good.
                if now - ended > .seconds(30) { return ChildExit.statusLost }
            }
            usleep(5_000)
        }
    }
}
