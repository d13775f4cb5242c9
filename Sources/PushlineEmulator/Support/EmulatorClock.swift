import Foundation

/// The emulator's idea of now, in UNIX milliseconds: JWT ages, access-token expiry and the 410
/// timestamp read it, so tests can age a token without waiting.
public struct EmulatorClock: Sendable {
    private let read: @Sendable () -> Int64

    public init(_ read: @escaping @Sendable () -> Int64) {
        self.read = read
    }

    /// The system clock.
    public static let system = EmulatorClock { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    public var milliseconds: Int64 { read() }
    public var seconds: Int64 { read() / 1000 }
}
