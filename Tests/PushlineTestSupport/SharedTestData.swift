// Shared fixtures for the test targets.
public import Foundation

public enum SharedTestData {
    /// `../shared` beside the project root, where CI keeps the conformance suites; nil in a clone without it.
    public static var directory: URL? {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }   // Tests/PushlineTestSupport/File.swift → root
        let shared = url.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }
}
