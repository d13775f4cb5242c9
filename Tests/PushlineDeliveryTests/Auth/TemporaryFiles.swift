import Foundation

/// A fresh folder per test under the system's temporary directory, removed at deinit.
final class TemporaryFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "pushline-delivery-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    @discardableResult
    func write(_ name: String, _ text: String, permissions: Int = 0o600) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file)
        return file
    }
}
