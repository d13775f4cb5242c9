// Shared fixtures for the test targets.
public import Foundation

public enum SharedTestData {
    /// Names another folder to use instead of `../shared` (for example a missing one, to check
    /// that the conformance suites report themselves skipped without it).
    public static let environmentVariable = "PUSHLINE_SHARED_DIR"

    /// `../shared` beside the project root, where CI keeps the conformance suites (or the folder
    /// `PUSHLINE_SHARED_DIR` names); nil when it does not exist.
    public static var directory: URL? {
        let shared: URL
        if let override = ProcessInfo.processInfo.environment[environmentVariable], !override.isEmpty {
            shared = URL(fileURLWithPath: override)
        } else {
            var url = URL(fileURLWithPath: #filePath)
            for _ in 0..<3 { url.deleteLastPathComponent() }   // Tests/PushlineTestSupport/File.swift → root
            shared = url.deletingLastPathComponent().appendingPathComponent("shared")
        }
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }

    /// Whether the conformance suites can run: tests that need them use
    /// `.enabled(if: SharedTestData.isAvailable, "…")`, so a clone without `../shared` shows
    /// them as skipped, never as passed.
    public static var isAvailable: Bool { directory != nil }
}
