import Foundation
import PushlineCore
import PushlineRuntime
import Testing

/// A provider's `transport: curl` still sends: the libcurl engine against the emulator.
@Suite("Engine choice: a whole run with transport: curl")
struct EngineSendTests {
    @Test(.timeLimit(.minutes(2)))
    func aRunWithTransportCurlSendsEveryDeviceAndSaysWhichEngine() async throws {
        let harness = try await SendingRunHarness.start()
        let n = 200
        var text = ""
        for i in 0..<n {
            text += "{\"id\":\"c-\(i)\",\"devices\":[{\"platform\":\"ios\",\"token\":\"\(TestTokens.apns(i))\"},{\"platform\":\"android\",\"token\":\"\(TestTokens.fcm(i))\"}]}\n"
        }
        try text.write(toFile: harness.scratch.file("audience.ndjson"), atomically: true, encoding: .utf8)
        // Both providers' blocks end with their rate: the key goes after it.
        let path = try harness.writePipeline()
        let yaml = try String(contentsOfFile: path, encoding: .utf8)
        #expect(yaml.components(separatedBy: "    rate: 200000/s\n").count == 3)
        try yaml.replacingOccurrences(of: "    rate: 200000/s\n", with: "    rate: 200000/s\n    transport: curl\n")
            .write(toFile: path, atomically: true, encoding: .utf8)

        let logs = LogRecorder()
        let report = try await harness.run(pipelinePath: path, logs: logs)
        let stats = harness.emulator.stats()
        await harness.stop()

        #expect(report.status == .completed, "\(report.failure ?? "")")
        #expect(report.counts.sent[.apns] == n && report.counts.sent[.fcm] == n)
        #expect(stats.apns.delivered == n && stats.fcm.delivered == n)
        // One line per provider at the start says libcurl sends, and why.
        for provider in ["apns", "fcm"] {
            let lines = logs.all.filter { $0.contains("\(provider): sends with libcurl, not nghttp2: its transport: key is curl") }
            #expect(lines.count == 1, "\(provider): \(logs.all)")
        }
    }
}
