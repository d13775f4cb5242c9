public import Foundation

/// `scripts/webpush-check`: Python's `cryptography` decrypting and verifying what Pushline made,
/// an implementation that shares no code with it. Tests that use it are skipped, saying so,
/// where `/usr/bin/python3` has no `cryptography` (scripts/system-packages installs it).
public enum WebPushCheck {
    public static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/webpush-check").path

    public static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return false }
        return (try? run(["-c", "import cryptography"], script: false).status) == 0
    }()

    public struct Output: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
    }

    public static func run(_ arguments: [String], script useScript: Bool = true) throws -> Output {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = useScript ? [script] + arguments : arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (stdout, stderr) = ChildProcess.readToEnd(out, err)
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    public static func base64url(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func bytes(base64url text: String) -> [UInt8]? {
        var padded = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }
}
