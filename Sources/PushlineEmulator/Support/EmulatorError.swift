public import PushlineCore

/// Why the emulator could not start, or its state could not be read or written.
///
/// Messages name files and settings, never key material.
public struct EmulatorError: Error, Sendable, CustomStringConvertible {
    private enum Kind: Sendable {
        case invalidConfiguration(String)
        case stateFile(path: String, reason: String)
        case startFailed(String)
    }

    private let kind: Kind

    static func invalidConfiguration(_ message: String) -> EmulatorError { EmulatorError(kind: .invalidConfiguration(message)) }
    static func stateFile(_ path: String, _ reason: String) -> EmulatorError { EmulatorError(kind: .stateFile(path: path, reason: reason)) }
    static func startFailed(_ message: String) -> EmulatorError { EmulatorError(kind: .startFailed(message)) }

    /// The exit code of `pushline-emulator` for this error (docs/exit-codes.md).
    public var exit: PushlineExit {
        switch kind {
        case .invalidConfiguration: .usage
        case .stateFile, .startFailed: .emulatorCannotStart
        }
    }

    public var description: String {
        switch kind {
        case .invalidConfiguration(let message): "invalid emulator configuration: \(message)"
        case .stateFile(let path, let reason): "\(path): \(reason)"
        case .startFailed(let message): "the emulator could not start: \(message)"
        }
    }
}
