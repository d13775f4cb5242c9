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

    /// The system had no status for the child (reaped elsewhere): no exit code or signal
    /// matches it, so a test expecting one fails instead of waiting for good.
    public static let statusLost = ChildExit(code: -1, signalled: false)
}
