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

    public var description: String { signalled ? "signal \(code)" : "exit \(code)" }
}
