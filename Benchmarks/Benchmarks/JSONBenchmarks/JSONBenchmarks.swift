import Benchmark
import PushlineCore

// Reading: each iteration indexes one batch of audience lines held in one shared buffer, the way
// the pipeline reads them. Bytes per second = throughput (batches/s) × `AudienceBatch.byteCount`
// (printed in the benchmark's name).
// Writing: each iteration encodes one APNs payload into a reused writer.
//
// Measured (Swift 6.3.1 release, Linux, 2 shared and busy x86_64 cores), 1000 lines = 412,448 bytes:
//   validate+index      p0 398 µs (1.04 GB/s), p50 545–926 µs (0.45–0.76 GB/s); 1 malloc per line (the tape)
//   + 3 lookups/unescape p0 1046 µs, p50 1172 µs; no allocation beyond the tape
//   APNs payload write  p0 0.93–1.2 µs, p50 1.0–2.0 µs; 1 malloc per payload

/// Realistic audience lines (~300 bytes: customer fields, an event, two devices), newline-separated.
struct AudienceBatch: Sendable {
    let buffer: [UInt8]
    let lines: [Range<Int>]
    var byteCount: Int { buffer.count }

    init(lineCount: Int) {
        let names = ["Ana", "José", "Zoë", "Mikko", "Ingrid", "Łukasz", "Chloé", "Sam"]
        let trips = ["Lisbon trip", "Weekend in Kraków", "Tokyo \\u6771\\u4eac", "Oslo fjords"]
        var buffer: [UInt8] = []
        var lines: [Range<Int>] = []
        var random = SeededGenerator()
        func hex(_ count: Int) -> String {
            String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &random)! })
        }
        for n in 0..<lineCount {
            let r = random.next() >> 11
            let line = """
            {"id":"c-\(n)","customer":{"first_name":"\(names[Int(r % 8)])","last_name":"Silva","points":\(r % 5000),\
            "vip":\(r % 3 == 0),"locale":"pt-PT"},"event":{"event_title":"\(trips[Int(r / 8 % 4)])","price":\(r % 900).5},\
            "devices":[{"platform":"ios","provider":"apns","token":"\(hex(64))"},\
            {"platform":"android","token":"f\(hex(40)):APA91b\(hex(40))"}]}
            """
            let start = buffer.count
            buffer.append(contentsOf: line.utf8)
            lines.append(start..<buffer.count)
            buffer.append(UInt8(ascii: "\n"))
        }
        self.buffer = buffer
        self.lines = lines
    }
}

/// A deterministic generator (an LCG with an output mix) so that every run indexes the same bytes.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state ^ (state >> 29)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))

    let batch = AudienceBatch(lineCount: 1000)
    let firstName = try! JSONPath(parsing: "customer.first_name")
    let title = try! JSONPath(parsing: "event.event_title")
    let token = try! JSONPath(parsing: "devices[0].token")

    Benchmark("JSON read: validate+index \(batch.lines.count) lines, \(batch.byteCount) bytes") { benchmark in
        for _ in benchmark.scaledIterations {
            for line in batch.lines {
                blackHole(try JSONDocument(buffer: batch.buffer, range: line).valueCount)
            }
        }
    }

    Benchmark("JSON read: index + 3 path lookups + unescape, \(batch.lines.count) lines") { benchmark in
        for _ in benchmark.scaledIterations {
            for line in batch.lines {
                let root = try JSONDocument(buffer: batch.buffer, range: line).root
                blackHole(root.value(at: firstName)?.withUnescapedString { $0.count })
                blackHole(root.value(at: title)?.withUnescapedString { $0.count })
                blackHole(root.value(at: token)?.stringHasEscapes)
            }
        }
    }

    Benchmark("JSON write: APNs payload") { benchmark in
        var writer = JSONWriter()
        let name = "José"
        for _ in benchmark.scaledIterations {
            writer.removeAll()
            writer.beginObject()
            writer.writeKey("aps")
            writer.beginObject()
            writer.writeKey("alert")
            writer.beginObject()
            writer.writeKey("title")
            writer.writeString("Welcome back")
            writer.writeKey("body")
            try writer.writeString(renderingWithLimit: 4096) { output throws(RenderOutput.LimitExceeded) in
                try output.write("Hi ")
                try output.write(name)
                try output.write(", your \"Lisbon trip\" is waiting")
            }
            writer.endObject()
            writer.writeKey("sound")
            writer.writeString("default")
            writer.writeKey("badge")
            writer.writeInt(1)
            writer.writeKey("thread-id")
            writer.writeString("winback")
            writer.endObject()
            writer.writeKey("campaign_id")
            writer.writeString("winback-2024-11")
            writer.writeKey("deep_link")
            writer.writeString("app://trips/42?ref=push")
            writer.writeKey("price")
            writer.writeDouble(412.5)
            writer.endObject()
            blackHole(writer.count)
        }
    }
}
