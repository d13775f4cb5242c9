// Our transport alone, on the same workload as Benchmarks/curl-loop/curl_loop.c: N POSTs of one
// body to one URL. A producer submits in chunks of 1,000 (suspending while the transport is full),
// a consumer counts the completion batches. Same arguments and output as the C loop.
//
// Usage: TransportLoop URL REQUESTS CONNECTIONS STREAMS CA_FILE BODY_BYTES [HEADER...]
//        TransportLoop --apns-authorization KEY_FILE KEY_ID TEAM_ID   (prints an `authorization:`
//        header line with a fresh ES256 provider token, for runs against the emulator)
import Foundation
import PushlineDelivery

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "--apns-authorization" {
    let key = try APNsSigningKey.load(keyFile: arguments[2], keyID: arguments[3], teamID: arguments[4])
    let token = try APNsProviderTokenSource(key: key, clock: SystemDeliveryClock()).token()
    print("authorization: \(token.authorizationHeaderValue)")
    exit(0)
}
guard arguments.count >= 7, let total = Int(arguments[2]), let connections = Int(arguments[3]),
      let streams = Int(arguments[4]), let bodyBytes = Int(arguments[6]) else {
    FileHandle.standardError.write(Data("usage: TransportLoop URL REQUESTS CONNECTIONS STREAMS CA_FILE BODY_BYTES [HEADER...]\n".utf8))
    exit(2)
}
let url = arguments[1]
let caFile = arguments[5]

/// `{"aps":{"alert":"xxx…"}}` of `count` bytes: the same body as the C loop and h2load's file.
final class Body: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer
    init(count: Int) {
        let text = Array(#"{"aps":{"alert":""#.utf8), tail = Array(#""}}"#.utf8)
        let count = max(count, text.count + tail.count)
        bytes = .allocate(byteCount: count, alignment: 1)
        bytes.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "x"))
        bytes.copyBytes(from: text)
        UnsafeMutableRawBufferPointer(rebasing: bytes[(count - tail.count)...]).copyBytes(from: tail)
    }
}

let body = Body(count: bodyBytes)
let bodyCount = body.bytes.count
let transport = try HTTP2Transport(TransportConfiguration(connections: connections, streamsPerConnection: streams, caFile: caFile))
let headers = ["content-type: application/json", "apns-push-type: alert"] + arguments.dropFirst(7)
let bodyView = UnsafeRawBufferPointer(rebasing: body.bytes[0..<bodyCount])

let start = ContinuousClock.now
let producer = Task {
    var next = 0
    while next < total {
        let end = min(next + 1000, total)
        let chunk = (next..<end).map {
            TransportRequest(slot: UInt64($0), url: url, headerLines: headers, body: bodyView, bodyOwner: body, timeoutMilliseconds: 30_000)
        }
        next += try await transport.submit(contentsOf: chunk)
    }
}
var done = 0, bad = 0, batches = 0
var failures: [String: Int] = [:]
for await batch in transport.completions {
    batches += 1
    for response in batch where response.result != .response || !(200...299).contains(response.status) {
        bad += 1
        failures["\(response.result) curl=\(response.curlCode) status=\(response.status)", default: 0] += 1
    }
    done += batch.count
    if done >= total { break }
}
let elapsed = ContinuousClock.now - start
try await producer.value
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let opened = transport.counters.connectionsOpened
await transport.shutdown()
var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)
print("requests=\(total) seconds=\(String(format: "%.3f", seconds)) rate=\(Int(Double(total) / seconds)) bad=\(bad) connections=\(opened) batches=\(batches) peak_rss_kb=\(usage.ru_maxrss)")
for (kind, count) in failures.sorted(by: { $0.key < $1.key }) { FileHandle.standardError.write(Data("  \(count)× \(kind)\n".utf8)) }
exit(bad == 0 ? 0 : 1)
