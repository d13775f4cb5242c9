import Foundation
import Testing

/// `scripts/webpush-check`: Python's `cryptography` decrypting and verifying what Pushline made,
/// an implementation that shares no code with it. Tests that use it are skipped, saying so,
/// where `/usr/bin/python3` has no `cryptography` (scripts/system-packages installs it).
enum WebPushCheck {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/webpush-check").path

    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return false }
        return (try? run(["-c", "import cryptography"], script: false).status) == 0
    }()

    static let skipReason: Comment = "needs /usr/bin/python3 with the cryptography package (apt install python3-cryptography)"

    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    static func run(_ arguments: [String], script useScript: Bool = true) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = useScript ? [script] + arguments : arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    static func base64url(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bytes(base64url text: String) -> [UInt8]? {
        var padded = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }
}
