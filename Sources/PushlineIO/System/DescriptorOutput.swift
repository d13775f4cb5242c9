/// Whole writes to an already-open descriptor (standard error for the progress line and the
/// log handlers), through the one short-write and EINTR loop of `POSIX.writeAll`.
public enum DescriptorOutput {
    /// Writes all of `bytes` to `fd`; false when the descriptor failed (the caller decides
    /// whether that matters: a lost progress line does not fail a run).
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            if case .success = POSIX.writeAll(fd, buffer) { return true }
            return false
        }
    }
}
