import Foundation
import Synchronization
import PushlineTestSupport

/// A real HTTP/2 TLS server for the transport tests: Debian's `nghttpd` on 127.0.0.1 with an
/// ephemeral port and a certificate made here with `openssl req -x509`. It serves the files of
/// its document root for any method (404 for missing ones).
final class LocalHTTP2Server: @unchecked Sendable {
    static let binary = "/usr/sbin/nghttpd"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    let directory: URL
    let certificatePath: String
    let port: Int
    private let process: ChildProcess

    var baseURL: String { "https://127.0.0.1:\(port)" }

    /// Starts a server on a thread of its own: making the certificate and waiting for the port
    /// block, and must not hold one of the few threads of Swift's cooperative pool meanwhile.
    static func start(files: [String: [UInt8]], extraArguments: [String] = [], certificateSubjectAltName: String = "IP:127.0.0.1") async throws -> LocalHTTP2Server {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result {
                    try LocalHTTP2Server(files: files, extraArguments: extraArguments, certificateSubjectAltName: certificateSubjectAltName)
                })
            }
            thread.start()
        }
    }

    /// - Parameters:
    ///   - files: document root files, by name.
    ///   - extraArguments: nghttpd options (`--echo-upload`, `--trailer=…`, `-m N`).
    ///   - certificateSubjectAltName: the certificate's SAN (IP:127.0.0.1 unless a test wants a
    ///     name that does not match).
    init(files: [String: [UInt8]], extraArguments: [String] = [], certificateSubjectAltName: String = "IP:127.0.0.1") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-h2-\(UUID().uuidString)")
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (name, bytes) in files { try Data(bytes).write(to: root.appendingPathComponent(name)) }
        let key = directory.appendingPathComponent("key.pem").path
        certificatePath = directory.appendingPathComponent("cert.pem").path
        try Self.makeCertificate(key: key, certificate: certificatePath, subjectAltName: certificateSubjectAltName)

        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        // Port 0: the kernel picks a free one; it is read back from /proc below.
        process.arguments = ["-a", "127.0.0.1", "-d", root.path] + extraArguments + ["0", key, certificatePath]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            port = try Self.listeningPort(of: process.processIdentifier)
        } catch {
            kill(process.processIdentifier, SIGKILL)
            _ = process.waitForExit()
            throw error
        }
    }

    /// SIGKILL: the server inherits the test process's signal mask, in which SIGTERM is blocked.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = process.waitForExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// Makes a self-signed certificate (P-256) valid for `subjectAltName`.
    static func makeCertificate(key: String, certificate: String, subjectAltName: String, subject: String = "/CN=pushline-test") throws {
        let openssl = ChildProcess()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "1", "-subj", subject,
            "-addext", "subjectAltName=\(subjectAltName)",
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        guard openssl.waitForExit().shellStatus == 0 else { throw ServerError("openssl req -x509 failed") }
    }

    private static let lastProblem = Mutex("")

    /// The socket inodes open in process `pid` (`self` for this one).
    private static func socketInodes(of pid: String) -> Set<String> {
        let fdDirectory = "/proc/\(pid)/fd"
        let descriptors: [String]
        do {
            descriptors = try FileManager.default.contentsOfDirectory(atPath: fdDirectory)
        } catch {
            lastProblem.withLock { $0 = "cannot list \(fdDirectory): \(error)" }
            descriptors = []
        }
        return Set(descriptors.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(fd)"),
                  target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
    }

    /// /proc/net/tcp, read to its end.
    private static func tcpTable() -> String? {
        FileHandle(forReadingAtPath: "/proc/net/tcp").map { handle in
            defer { try? handle.close() }
            return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    /// How many established TCP connections this process holds open to the server (its own
    /// socket descriptors, matched against /proc/net/tcp by inode).
    func connectionsFromThisProcess() -> Int {
        let own = Self.socketInodes(of: "self")
        guard let table = Self.tcpTable() else { return -1 }
        return table.split(separator: "\n").dropFirst().count { line in
            let fields = line.split(separator: " ")
            // sl local_address rem_address st ... inode (field 9); 01 = ESTABLISHED.
            guard fields.count > 9, fields[3] == "01", own.contains(String(fields[9])) else { return false }
            let remote = fields[2].split(separator: ":")
            return remote.count == 2 && Int(remote[1], radix: 16) == port
        }
    }

    /// The TCP port process `pid` listens on: its socket inodes matched against /proc/net/tcp.
    /// Sockets it inherited from this process (another test's listening server, open without
    /// close-on-exec when nghttpd was spawned) are not its own and are left out.
    private static func listeningPort(of pid: Int32) throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let inodes = socketInodes(of: "\(pid)").subtracting(socketInodes(of: "self"))
            // Read to EOF: /proc/net/tcp reports size 0 and comes a page (~30 sockets) per read,
            // and `String(contentsOfFile:)` can stop after the first one; on a busy machine
            // the server's line is further down.
            let table = tcpTable()
            if table == nil { lastProblem.withLock { $0 = "cannot open /proc/net/tcp" } }
            if let table {
                for line in table.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ")
                    // sl local_address rem_address st ... inode (field 9); 0A = LISTEN.
                    guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) else { continue }
                    let local = fields[1].split(separator: ":")
                    if local.count == 2, let port = Int(local[1], radix: 16) { return port }
                }
            }
            usleep(20_000)
        }
        let inodes = socketInodes(of: "\(pid)")
        let own = socketInodes(of: "self")
        throw ServerError("nghttpd did not start listening (its sockets \(inodes.sorted()), ours \(own.count), alive \(kill(pid, 0) == 0), last problem: \(lastProblem.withLock { $0 }))")
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
