import Foundation
import PushlineTestSupport

/// The `curl` command-line tool (libcurl with nghttp2) as a real HTTP/2-over-TLS client: it
/// must negotiate h2 through ALPN and trust the emulator only through `--cacert`.
struct CurlResponse {
    var status: Int
    var httpVersion: String
    var headers: [String: String]
    var body: [UInt8]
    var bodyText: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }
}

struct CurlError: Error, CustomStringConvertible {
    var description: String
}

enum Curl {
    /// One request; `body` is sent as is (`--data-binary`).
    static func request(
        _ method: String, _ url: String, caFile: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) throws -> CurlResponse {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyOut = directory.appendingPathComponent("body").path
        let headersOut = directory.appendingPathComponent("headers").path
        var arguments = ["-sS", "--http2", "--cacert", caFile, "-X", method, "-o", bodyOut, "-D", headersOut,
                         "-w", "%{http_code} %{http_version}", "--max-time", "20"]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            let bodyIn = directory.appendingPathComponent("request").path
            try Data(body).write(to: URL(fileURLWithPath: bodyIn))
            arguments += ["--data-binary", "@\(bodyIn)"]
        }
        arguments.append(url)
        let (status, output, errors) = try run(arguments)
        guard status == 0 else { throw CurlError(description: "curl exited \(status): \(errors)") }
        let parts = output.split(separator: " ")
        guard parts.count == 2, let code = Int(parts[0]) else { throw CurlError(description: "unexpected curl output '\(output)'") }
        var responseHeaders: [String: String] = [:]
        let headerText = (try? String(contentsOfFile: headersOut, encoding: .utf8)) ?? ""
        for line in headerText.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            responseHeaders[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let responseBody = (try? Data(contentsOf: URL(fileURLWithPath: bodyOut))).map(Array.init) ?? []
        return CurlResponse(status: code, httpVersion: String(parts[1]), headers: responseHeaders, body: responseBody)
    }

    /// Runs curl with `arguments`; returns its exit status, standard output and standard error.
    static func run(_ arguments: [String]) throws -> (Int32, String, String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl"] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (outData, errData) = ChildProcess.readToEnd(output, errors)
        return (process.waitForExit().shellStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}
