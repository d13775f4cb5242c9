import Benchmark
import PushlineCore
import PushlineEncoding
import PushlineRuntime

// Whole-line encoding: parse, route, render and encode every device of 1,000 generated audience
// lines (about 2,000 devices, iOS through APNs and FCM, Android, with skipped web and Fire OS
// devices), as one encode worker does. Throughput is reported per line: multiply by ~1.7 for
// written requests. The whole-command benchmark (scripts/benchmark-dry-run) adds reading and
// writing files.

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .cpuTotal], scalingFactor: .kilo, maxDuration: .seconds(3))

    Benchmark("Encode line: two-variable title and body", configuration: configuration) { benchmark in
        try encodeLines(benchmark, pipeline: lightPipeline)
    }

    Benchmark("Encode line: default filter, if, downcase, collapse id, extras", configuration: configuration) { benchmark in
        try encodeLines(benchmark, pipeline: heavyPipeline)
    }
}

/// 1,000 customer lines in one buffer, as the reader hands them over.
let audience: (buffer: [UInt8], lines: [AudienceLine]) = {
    let generator = AudienceGenerator(seed: 1)
    var rng = SplitMix64(seed: 1)
    var writer = JSONWriter(reservingCapacity: 1 << 20)
    var lines: [AudienceLine] = []
    for index in 1...1000 {
        let start = writer.count
        _ = generator.appendCustomer(index, rng: &rng, into: &writer)
        lines.append(AudienceLine(number: index, range: start..<(writer.count - 1)))
    }
    return (writer.bytes, lines)
}()

func encodeLines(_ benchmark: Benchmark, pipeline: String) throws {
    let campaign = try Campaign.compile(try PipelineLoader.parse(yaml: pipeline, path: "bench.yaml"), now: 1_800_000_000)
    let encoder = CampaignEncoder(campaign: campaign)
    var context = encoder.makeContext()
    // Steady state, as a worker runs: one batch whose buffers are emptied, not reallocated.
    var batch = EncodedBatch(sequence: 0)
    for line in audience.lines { encoder.encodeLine(buffer: audience.buffer, line: line, into: &batch, context: &context) }
    benchmark.startMeasurement()
    for i in benchmark.scaledIterations {
        if i % audience.lines.count == 0 { batch.removeAll(sequence: 0) }
        let line = audience.lines[i % audience.lines.count]
        encoder.encodeLine(buffer: audience.buffer, line: line, into: &batch, context: &context)
    }
    blackHole(batch)
}

let lightPipeline = """
name: bench
personalization: liquid
device_types: [ios, android]
notification:
  title: "Hi {{ customer.first_name }}"
  alert: "Your {{ event.event_title }} is waiting"
  ios: { sound: default }
  android: { notification_channel: promos }
providers:
  apns: { topic: com.example.pushline }
  fcm: { project_id: pushline-demo }
"""

let heavyPipeline = """
name: bench
personalization: liquid
device_types: [ios, android]
notification:
  title: "Hi {{ customer.first_name | default: 'there' }}"
  alert: "{% if customer.points > 1000 %}You have {{ customer.points }} points. {% endif %}Your {{ event.event_title | downcase }} is waiting"
  ios: { sound: default, badge: "+1", thread_id: winback, collapse_id: "winback-{{ id }}", expiry: 86400 }
  android: { notification_channel: promos, icon: ic_stat_promo, icon_color: "#8B4513", delivery_priority: high, time_to_live: 86400, extra: { tier: "{{ customer.tier | upcase }}" } }
providers:
  apns: { topic: com.example.pushline }
  fcm: { project_id: pushline-demo }
"""
